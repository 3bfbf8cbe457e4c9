package stack

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/ephemeral-heat/ephemeral-heat/internal/fsutil"
	"github.com/ephemeral-heat/ephemeral-heat/internal/pathguard"
)

// ProgressDone starts the last line a progress log gets: whoever follows the
// log (the overcloud_stack role, inside ansible-playbook) knows the run has
// ended when it sees it.
const ProgressDone = "heat_stack finished:"

// ProgressLog is a progress file written anew for each run: the same lines
// the command line shows live (resources complete, events), each written
// as it comes, then a ProgressDone line.
type ProgressLog struct {
	mu    sync.Mutex
	f     *os.File
	start time.Time
}

// progressStarted starts the first line of a progress log: an existing
// file that starts so (or is empty) is ours to truncate.
const progressStarted = "heat_stack started: "

// OpenProgressLog creates (or truncates) path, mode 0600, in an existing
// directory (pathguard's policy): an existing path must be a progress log
// of ours (or empty), never a symlink, FIFO, device or another file.
func OpenProgressLog(path string) (*ProgressLog, error) {
	if st, err := os.Stat(filepath.Dir(path)); err != nil || !st.IsDir() {
		return nil, fmt.Errorf("progress_file %s: its directory does not exist: create it first", path)
	}
	what := "a progress log of heat_stack (its first line starts with " + strings.TrimSpace(progressStarted) + ")"
	if _, err := pathguard.File("progress_file", path, what, isProgressLog); err != nil {
		return nil, err
	}
	// O_NONBLOCK: a FIFO swapped in since the check does not block the open.
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0o600)
	if err != nil {
		return nil, fmt.Errorf("progress_file %s: %w (it must be a regular file or not exist; a symlink is refused)", path, err)
	}
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("progress_file %s is not a regular file", path)
	}
	l := &ProgressLog{f: f, start: time.Now()}
	fmt.Fprintf(f, "%s%s\n", progressStarted, l.start.UTC().Format(time.RFC3339))
	return l, nil
}

// isProgressLog tells an existing file heat_stack may truncate: empty, or
// starting with progressStarted.
func isProgressLog(path string) bool {
	f, _, err := fsutil.OpenInput(path, "progress_file")
	if err != nil {
		return false
	}
	defer f.Close()
	head := make([]byte, len(progressStarted))
	n, _ := io.ReadFull(f, head)
	return n == 0 || string(head[:n]) == progressStarted
}

// Write appends progress text.
func (l *ProgressLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.f.Write(p)
}

// Finish writes the ProgressDone line with the run's message, through mask
// (the module's: every registered secret masked, as in its result) when
// not nil.
func (l *ProgressLog) Finish(res map[string]any, err error, mask func(string) string) {
	msg, _ := res["msg"].(string)
	status := "ok"
	if err != nil {
		status, msg = "failed", err.Error()
	}
	if mask != nil {
		msg = mask(msg)
	}
	msg = strings.ReplaceAll(msg, "\n", " ")
	l.mu.Lock()
	defer l.mu.Unlock()
	fmt.Fprintf(l.f, "%s %s after %s: %s\n", ProgressDone, status, time.Since(l.start).Round(time.Second), msg)
}

// Close closes the file.
func (l *ProgressLog) Close() error { return l.f.Close() }
