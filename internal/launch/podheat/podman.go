package podheat

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/containers/podman/v4/pkg/bindings"
	"github.com/containers/podman/v4/pkg/bindings/containers"
	"github.com/containers/podman/v4/pkg/bindings/images"
	"github.com/containers/podman/v4/pkg/bindings/pods"
	"github.com/containers/podman/v4/pkg/errorhandling"
)

// DefaultSocket is root's podman socket, or the user's under $XDG_RUNTIME_DIR.
func DefaultSocket() string {
	if os.Geteuid() != 0 {
		if d := os.Getenv("XDG_RUNTIME_DIR"); d != "" {
			return "unix://" + filepath.Join(d, "podman", "podman.sock")
		}
		return fmt.Sprintf("unix:///run/user/%d/podman/podman.sock", os.Geteuid())
	}
	return "unix:///run/podman/podman.sock"
}

// Connect opens a connection to the podman service at socket; the
// returned context carries it for the bindings.
func Connect(ctx context.Context, socket string) (context.Context, error) {
	if socket == "" {
		socket = DefaultSocket()
	}
	u, err := url.Parse(socket)
	if err != nil || (u.Scheme != "unix" && u.Scheme != "tcp" && u.Scheme != "ssh") {
		return nil, fmt.Errorf("podman_socket %q is not a unix://, tcp:// or ssh:// URL", socket)
	}
	cctx, err := bindings.NewConnection(ctx, socket)
	if err != nil {
		hint := "start it with 'systemctl start podman.socket' (root) or 'systemctl --user start podman.socket', " +
			"or run 'podman system service --time=0 " + socket + " &'"
		if u.Scheme == "unix" {
			if _, serr := os.Stat(u.Path); serr != nil {
				return nil, fmt.Errorf("the podman service is not reachable: %s does not exist; %s (or set podman_socket)", u.Path, hint)
			}
		}
		return nil, fmt.Errorf("the podman service at %s is not reachable (%v); %s (or set podman_socket)", socket, err, hint)
	}
	return cctx, nil
}

// CheckImages fails with a hint when an image is missing.
func CheckImages(ctx context.Context, imgs ...string) error {
	seen := map[string]bool{}
	for _, img := range imgs {
		if img == "" || seen[img] {
			continue
		}
		seen[img] = true
		ok, err := images.Exists(ctx, img, nil)
		if err != nil {
			return fmt.Errorf("checking the image %s: %w", img, err)
		}
		if !ok {
			return fmt.Errorf("the image %s is missing: build it with 'make heat-image' (scripts/build-heat-image.sh, a few minutes, Debian packages only) or set image", img)
		}
	}
	return nil
}

// containerLogs returns the last n lines podman has of a container's output.
func containerLogs(ctx context.Context, name string, n int) string {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	out, errc := make(chan string, 64), make(chan string, 64)
	var mu sync.Mutex
	var lines []string
	done := make(chan struct{})
	go func() {
		for {
			select {
			case s, ok := <-out:
				if !ok {
					out = nil
				} else {
					mu.Lock()
					lines = append(lines, s)
					mu.Unlock()
				}
			case s := <-errc:
				mu.Lock()
				lines = append(lines, s)
				mu.Unlock()
			case <-done:
				return
			}
		}
	}()
	opts := new(containers.LogOptions).WithStdout(true).WithStderr(true).WithTail(fmt.Sprint(n))
	err := containers.Logs(ctx, name, opts, out, errc)
	time.Sleep(50 * time.Millisecond)
	close(done)
	mu.Lock()
	defer mu.Unlock()
	s := strings.TrimRight(strings.Join(lines, ""), "\n")
	if err != nil && s == "" {
		return ""
	}
	return s
}

// removeContainer stops and removes a container; a missing one is fine.
func removeContainer(ctx context.Context, name string, grace uint) error {
	ok, err := containers.Exists(ctx, name, nil)
	if err != nil {
		return fmt.Errorf("looking for container %s: %w", name, err)
	}
	if !ok {
		return nil
	}
	_ = containers.Stop(ctx, name, new(containers.StopOptions).WithTimeout(grace).WithIgnore(true))
	if _, err := containers.Remove(ctx, name, new(containers.RemoveOptions).WithForce(true).WithIgnore(true)); err != nil {
		return fmt.Errorf("removing container %s: %w", name, err)
	}
	return nil
}

// removePod stops and removes a pod and its containers; a missing one is fine.
func removePod(ctx context.Context, name string, grace int) error {
	ok, err := pods.Exists(ctx, name, nil)
	if err != nil {
		return fmt.Errorf("looking for pod %s: %w", name, err)
	}
	if !ok {
		return nil
	}
	if _, err := pods.Stop(ctx, name, new(pods.StopOptions).WithTimeout(grace)); err != nil && !isNotFound(err) {
		// Removal with force below kills what did not stop.
		_ = err
	}
	if _, err := pods.Remove(ctx, name, new(pods.RemoveOptions).WithForce(true)); err != nil && !isNotFound(err) {
		return fmt.Errorf("removing pod %s: %w", name, err)
	}
	return nil
}

func isNotFound(err error) bool {
	var e *errorhandling.ErrorModel
	if errors.As(err, &e) {
		return e.ResponseCode == 404
	}
	return strings.Contains(err.Error(), "no such")
}

// ours lists the names of the pods and containers labelled with heatDir's hash.
func ours(ctx context.Context, heatDir string) (podNames, ctrNames []string, err error) {
	f := map[string][]string{"label": {LabelDir + "=" + DirHash(heatDir)}}
	ps, err := pods.List(ctx, new(pods.ListOptions).WithFilters(f))
	if err != nil {
		return nil, nil, fmt.Errorf("listing pods: %w", err)
	}
	for _, p := range ps {
		podNames = append(podNames, p.Name)
	}
	cs, err := containers.List(ctx, new(containers.ListOptions).WithAll(true).WithFilters(f))
	if err != nil {
		return nil, nil, fmt.Errorf("listing containers: %w", err)
	}
	for _, c := range cs {
		if c.Pod != "" {
			continue
		}
		if len(c.Names) > 0 {
			ctrNames = append(ctrNames, c.Names[0])
		}
	}
	return podNames, ctrNames, nil
}
