package robustness

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// modules are the collection's modules; TestMain builds each binary.
var modules = []string{"ephemeral_heat_launch", "heat_stack", "heat_db_dump", "config_download", "overcloud_precheck",
	"overcloud_playbook", "overcloud_workdir"}

// binDir holds the binaries built from this checkout.
var binDir string

// Bounds every case is held to.
const (
	// caseTimeout: a case still running then is a hang.
	caseTimeout = 60 * time.Second
	// maxRSS: a module using more memory than this on a bad input fails
	// the case.
	maxRSS = 512 << 20
	// addressSpace is the hard limit (prlimit --as) each run gets, so that
	// a runaway module fails instead of exhausting the machine.
	addressSpace = 4 << 30
)

func TestMain(m *testing.M) {
	root, err := repoRoot()
	if err == nil {
		binDir, err = os.MkdirTemp("", "robustness-bin-")
	}
	if err == nil {
		err = buildModules(root, binDir)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(binDir)
	os.Exit(code)
}

func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		if dir == filepath.Dir(dir) {
			return "", errors.New("go.mod not found above the test's directory")
		}
		dir = filepath.Dir(dir)
	}
}

// buildModules builds every module of this checkout into dir, as make build
// does (CGO_ENABLED=0 and the Makefile's GOFLAGS, which make test exports).
func buildModules(root, dir string) error {
	if _, err := exec.LookPath("prlimit"); err != nil {
		return errors.New("prlimit is not installed (it bounds each module's memory): apt-get install -y util-linux")
	}
	for _, m := range modules {
		cmd := exec.Command("go", "build", "-o", filepath.Join(dir, m), "./modules/"+m)
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("building %s (run through make test, or export GOFLAGS as README's Layout says): %v\n%s", m, err, out)
		}
	}
	return nil
}

// sandbox is the directory a case may touch; home is its HOME. tmp is the
// case's TMPDIR, outside the sandbox (a module's temporary files are not
// the sandbox's), removed with the test: ansible's module payloads that a
// killed run leaves, check mode's temporary log directories.
type sandbox struct {
	root, home, tmp string
	t               *testing.T
}

func newSandbox(t *testing.T) *sandbox {
	t.Helper()
	root := filepath.Join(t.TempDir(), "sandbox")
	home := filepath.Join(root, "home")
	for _, d := range []string{root, home} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return &sandbox{root: root, home: home, tmp: t.TempDir(), t: t}
}

// environ is base with the sandbox's HOME and TMPDIR, then extra.
func (s *sandbox) environ(base []string, extra ...string) []string {
	env := append(append([]string(nil), base...), "HOME="+s.home, "TMPDIR="+s.tmp)
	return append(env, extra...)
}

// path is a path inside the sandbox.
func (s *sandbox) path(parts ...string) string {
	return filepath.Join(append([]string{s.root}, parts...)...)
}

// file writes a file inside the sandbox (its directories made) and returns its path.
func (s *sandbox) file(name, content string, mode os.FileMode) string {
	s.t.Helper()
	p := s.path(name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		s.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), mode); err != nil {
		s.t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil {
		s.t.Fatal(err)
	}
	return p
}

// dir makes a directory inside the sandbox and returns its path.
func (s *sandbox) dir(name string, mode os.FileMode) string {
	s.t.Helper()
	p := s.path(name)
	if err := os.MkdirAll(p, 0o755); err != nil {
		s.t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil {
		s.t.Fatal(err)
	}
	return p
}

// fifo makes a FIFO inside the sandbox: reading or writing it would block
// forever, since nothing is at the other end.
func (s *sandbox) fifo(name string) string {
	s.t.Helper()
	p := s.path(name)
	os.MkdirAll(filepath.Dir(p), 0o755)
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		s.t.Fatal(err)
	}
	return p
}

// device makes a character device inside the sandbox: /dev/zero's (reads
// never end).
func (s *sandbox) device(name string) string {
	s.t.Helper()
	p := s.path(name)
	os.MkdirAll(filepath.Dir(p), 0o755)
	if err := syscall.Mknod(p, syscall.S_IFCHR|0o666, 1<<8|5); err != nil {
		s.t.Fatalf("mknod %s (this suite runs as root, as make test does): %v", p, err)
	}
	return p
}

// symlink makes a symlink inside the sandbox.
func (s *sandbox) symlink(name, target string) string {
	s.t.Helper()
	p := s.path(name)
	os.MkdirAll(filepath.Dir(p), 0o755)
	if err := os.Symlink(target, p); err != nil {
		s.t.Fatal(err)
	}
	return p
}

// sparse makes a file of size bytes that takes no room (a huge input).
func (s *sandbox) sparse(name string, size int64) string {
	s.t.Helper()
	p := s.file(name, "", 0o644)
	if err := os.Truncate(p, size); err != nil {
		s.t.Fatal(err)
	}
	return p
}

// snapshot lists every path under root with its type, mode, owner and size
// (and a symlink's target). The sandbox HOME's .cache is left out: heat_stack
// keeps its template processing cache there (internal/templates, private,
// ours, written whatever comes next), which is not state.
func snapshot(root string) string {
	var lines []string
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			lines = append(lines, p+" error "+err.Error())
			return nil
		}
		if d.IsDir() && d.Name() == ".cache" && filepath.Base(filepath.Dir(p)) == "home" {
			return filepath.SkipDir
		}
		lines = append(lines, describe(p))
		return nil
	})
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

func describe(p string) string {
	st, err := os.Lstat(p)
	if err != nil {
		return p + " " + err.Error()
	}
	line := fmt.Sprintf("%s %v", p, st.Mode())
	if s, ok := st.Sys().(*syscall.Stat_t); ok {
		line += fmt.Sprintf(" %d:%d", s.Uid, s.Gid)
	}
	if st.Mode().IsRegular() {
		line += " " + strconv.FormatInt(st.Size(), 10)
	}
	if st.Mode()&os.ModeSymlink != 0 {
		target, _ := os.Readlink(p)
		line += " -> " + target
	}
	return line
}

// outside is what a case must never change outside its sandbox: the modes
// and owners of the system directories a bad path could name, and the
// names in /dev.
func outside(t *testing.T, s *sandbox) string {
	var lines []string
	for _, p := range []string{"/", "/tmp", "/var/tmp", "/dev", "/dev/null", "/dev/zero", "/etc", "/etc/passwd", filepath.Dir(s.root)} {
		lines = append(lines, describe(p))
	}
	ents, err := os.ReadDir("/dev")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		lines = append(lines, "/dev/"+e.Name())
	}
	sib, _ := os.ReadDir(filepath.Dir(s.root))
	for _, e := range sib {
		lines = append(lines, "beside the sandbox: "+e.Name())
	}
	return strings.Join(lines, "\n")
}

// run is one run of a module binary.
type run struct {
	stdout, stderr string
	res            map[string]any
	parseErr       error
	timedOut       bool
	rss            int64 // bytes
	elapsed        time.Duration
}

// msg is the result's message.
func (r run) msg() string { s, _ := r.res["msg"].(string); return s }

// runModule runs a module as Ansible does: one argument, the path of a
// JSON arguments file (argsFile, or one written from args outside the
// sandbox), with HOME in the sandbox, in its own process group, under
// prlimit, killed at caseTimeout.
func runModule(t *testing.T, s *sandbox, module string, args map[string]any, argsFile string) run {
	t.Helper()
	if argsFile == "" {
		argsFile = filepath.Join(t.TempDir(), "args.json")
		b, err := json.Marshal(args)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(argsFile, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), caseTimeout)
	defer cancel()
	cmd := exec.Command("prlimit", "--as="+strconv.Itoa(addressSpace), "--", filepath.Join(binDir, module), argsFile)
	cmd.Dir = s.root
	cmd.Env = s.environ(cleanEnv())
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var r run
	select {
	case <-done:
	case <-ctx.Done():
		r.timedOut = true
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
	}
	r.elapsed = time.Since(start)
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		r.rss = ru.Maxrss * 1024
	}
	// Nothing of the run may be left in its process group.
	if err := syscall.Kill(-cmd.Process.Pid, 0); err == nil {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		t.Errorf("%s left processes running in its process group", module)
	}
	r.stdout, r.stderr = out.String(), errb.String()
	trimmed := strings.TrimSpace(r.stdout)
	switch {
	case strings.Count(trimmed, "\n") != 0:
		r.parseErr = fmt.Errorf("%d lines on stdout, want one JSON object", strings.Count(trimmed, "\n")+1)
	default:
		r.parseErr = json.Unmarshal([]byte(trimmed), &r.res)
	}
	return r
}

// cleanEnv is the environment of a run: this one without what points
// modules elsewhere (clouds.yaml, podman, XDG directories).
func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch {
		case k == "HOME", strings.HasPrefix(k, "OS_"), strings.HasPrefix(k, "XDG_"), strings.HasPrefix(k, "EPHEMERAL_HEAT"):
			continue
		}
		env = append(env, kv)
	}
	return env
}

// processesIn lists the processes whose working directory or command line
// is inside dir.
func processesIn(dir string) []string {
	var out []string
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		cwd, _ := os.Readlink(fmt.Sprintf("/proc/%d/cwd", pid))
		cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if strings.HasPrefix(cwd, dir) || bytes.Contains(cmdline, []byte(dir)) {
			out = append(out, fmt.Sprintf("pid %d (%s)", pid, strings.ReplaceAll(string(cmdline), "\x00", " ")))
		}
	}
	return out
}

// badCase is one bad input or injected fault: the module must fail, within
// caseTimeout and maxRSS, with one JSON result whose message holds every
// string of want (the parameter or file it is about, and what is wrong),
// leaving the sandbox (unless writes) and everything outside it as it was,
// and no process behind.
type badCase struct {
	name   string
	module string
	// setup prepares the sandbox and returns the module arguments (or,
	// through argsFile, the path of a hand-made arguments file).
	setup func(s *sandbox) (args map[string]any, argsFile string)
	want  []string
	// writes: the module may create files in the sandbox before it fails.
	writes bool
}

func (c badCase) check(t *testing.T) run {
	t.Helper()
	s := newSandbox(t)
	args, argsFile := c.setup(s)
	before, world := snapshot(s.root), outside(t, s)
	r := runModule(t, s, c.module, args, argsFile)
	switch {
	case r.timedOut:
		t.Fatalf("HANG: %s did not finish within %s", c.module, caseTimeout)
	case r.parseErr != nil:
		t.Fatalf("no JSON result (%v): stdout %q, stderr %q", r.parseErr, truncate(r.stdout, 400), truncate(r.stderr, 400))
	case r.res["failed"] != true:
		t.Fatalf("WRONG SUCCESS: %s", truncate(r.stdout, 600))
	}
	for _, w := range c.want {
		if !strings.Contains(r.msg(), w) {
			t.Errorf("the message does not say %q: %s", w, r.msg())
		}
	}
	if r.rss > maxRSS {
		t.Errorf("OOM risk: %s used %d MiB (bound %d MiB)", c.module, r.rss>>20, maxRSS>>20)
	}
	if after := outside(t, s); after != world {
		t.Errorf("something outside the sandbox changed:\n%s", diffLines(world, after))
	}
	if !c.writes {
		if after := snapshot(s.root); after != before {
			t.Errorf("the sandbox changed on a refused input:\n%s", diffLines(before, after))
		}
	}
	if left := processesIn(s.root); len(left) > 0 {
		t.Errorf("processes left running in the sandbox: %v", left)
	}
	return r
}

// diffLines shows the lines only in a (-) or only in b (+).
func diffLines(a, b string) string {
	in := func(s string) map[string]bool {
		m := map[string]bool{}
		for _, l := range strings.Split(s, "\n") {
			m[l] = true
		}
		return m
	}
	ma, mb := in(a), in(b)
	var out []string
	for l := range ma {
		if !mb[l] {
			out = append(out, "- "+l)
		}
	}
	for l := range mb {
		if !ma[l] {
			out = append(out, "+ "+l)
		}
	}
	sort.Strings(out)
	return strings.Join(out, "\n")
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
