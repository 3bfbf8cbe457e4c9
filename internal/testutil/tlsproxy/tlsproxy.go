// Package tlsproxy puts TLS in front of a local HTTP server for tests, as
// an operator's Heat behind HAProxy is: a test CA and a server certificate
// for 127.0.0.1 made with openssl, and socat terminating TLS on 127.0.0.1
// (Debian's openssl and socat: make deps).
package tlsproxy

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/ephemeral-heat/ephemeral-heat/internal/proc"
)

// Proxy is a running TLS proxy.
type Proxy struct {
	// Port is where it listens on 127.0.0.1.
	Port int
	// CA is the PEM file of the CA that signed its certificate; OtherCA
	// one of a CA that did not.
	CA, OtherCA string
}

// URL is https://127.0.0.1:PORT followed by path.
func (p *Proxy) URL(path string) string { return fmt.Sprintf("https://127.0.0.1:%d%s", p.Port, path) }

// Start proxies TLS on a free port of 127.0.0.1 to 127.0.0.1:backend until
// the test ends. It fails the test, saying what to install, without
// openssl or socat.
func Start(t testing.TB, backend int) *Proxy {
	t.Helper()
	for _, c := range []string{"openssl", "socat"} {
		if _, err := exec.LookPath(c); err != nil {
			t.Fatalf("%s is not installed: apt-get install -y openssl socat (or make deps)", c)
		}
	}
	dir := t.TempDir()
	f := func(n string) string { return filepath.Join(dir, n) }
	run := func(args ...string) {
		t.Helper()
		if out, err := exec.Command("openssl", args...).CombinedOutput(); err != nil {
			t.Fatalf("openssl %v: %v\n%s", args, err, out)
		}
	}
	key := []string{"-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"}
	for _, ca := range []string{"ca", "other-ca"} {
		run(append(append([]string{"req", "-x509"}, key...), "-keyout", f(ca+".key"), "-out", f(ca+".pem"),
			"-days", "2", "-subj", "/CN=ephemeral-heat test "+ca)...)
	}
	run(append(append([]string{"req"}, key...), "-keyout", f("server.key"), "-out", f("server.csr"), "-subj", "/CN=127.0.0.1")...)
	if err := os.WriteFile(f("ext.cnf"), []byte("subjectAltName=IP:127.0.0.1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	run("x509", "-req", "-in", f("server.csr"), "-CA", f("ca.pem"), "-CAkey", f("ca.key"), "-CAcreateserial",
		"-out", f("server.pem"), "-days", "2", "-extfile", f("ext.cnf"))

	port, err := proc.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("socat",
		fmt.Sprintf("OPENSSL-LISTEN:%d,bind=127.0.0.1,reuseaddr,fork,cert=%s,key=%s,verify=0", port, f("server.pem"), f("server.key")),
		fmt.Sprintf("TCP:127.0.0.1:%d", backend))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting socat: %v", err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		// socat and the children it forked, by its process group.
		syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
		}
	})
	for deadline := time.Now().Add(10 * time.Second); ; {
		c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), time.Second)
		if err == nil {
			c.Close()
			break
		}
		select {
		case <-done:
			t.Fatalf("socat ended before it listened on 127.0.0.1:%d", port)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("socat does not listen on 127.0.0.1:%d: %v", port, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return &Proxy{Port: port, CA: f("ca.pem"), OtherCA: f("other-ca.pem")}
}
