package workdir

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/ephemeral-heat/ephemeral-heat/internal/heatdir"
	"github.com/ephemeral-heat/ephemeral-heat/internal/pathguard"
)

// Deletion is what Remove removed from a working dir, or would remove in
// check mode.
type Deletion struct {
	// Existed is false when there was no working dir (nothing to do).
	Existed bool
	// Entries are the working dir's entries, by name, sorted (its marker
	// and lock left out: they go last, with the directory).
	Entries []string
	// Files counts what is not a directory under them; Bytes is the size
	// of the regular files.
	Files int
	Bytes int64
	// Heat, in check mode, is the launch of Heat the heat_dir records,
	// which a removal refuses (it must be stopped first, as the delete
	// playbook does before it removes anything); nil when there is none.
	Heat *HeatLaunched
}

// HeatLaunched is a removal's refusal of a working dir whose heat_dir
// records a launch of Heat.
type HeatLaunched struct {
	// What is the launch, as the record describes it, and its state.
	What string
	err  error
}

func (h *HeatLaunched) Error() string { return h.err.Error() }

// Remove deletes the working dir with everything in it, as
// python-tripleoclient stable/wallaby's `openstack overcloud delete` removes
// ~/overcloud-deploy/<stack> (tripleo-ansible's cli-overcloud-delete.yaml).
// The caller holds the working dir's lock (Lock), and writes a backup first
// if one is wanted.
//
// Everything is checked before anything is removed: the working dir is ours
// (Guard); it holds no other stack's files (another stack's passwords,
// deployment status or config-download: it would go too); its heat_dir
// records no launch of Heat (a running or crashed Heat, a pod or a watchdog:
// stop it first, so that the launcher removes what it started); nothing
// inside is on another file system (a mount) and every directory can be
// emptied by this user. The heat_dir's lock is held while the working dir
// is removed, so that no launch starts in it meanwhile (heatWait is how long
// another launch or stop is waited for). Then the entries go, the marker,
// the lock file and the directory last: a removal that fails half way
// leaves a working dir that is still ours, and running Remove again
// finishes it. check: nothing is removed, the result says what would be
// (and, in Heat, a launch record a removal would refuse).
func (l Layout) Remove(ctx context.Context, check bool, heatWait time.Duration) (Deletion, error) {
	var r Deletion
	st, err := os.Lstat(l.Dir)
	if errors.Is(err, fs.ErrNotExist) {
		return r, nil
	}
	if err != nil {
		return r, fmt.Errorf("work_dir %s: %w", l.Dir, err)
	}
	if err := l.Guard(); err != nil {
		return r, err
	}
	r.Existed = true
	names, err := l.entries()
	if err != nil {
		return r, err
	}
	r.Entries = names
	if err := l.onlyThisStack(names); err != nil {
		return r, err
	}
	if err := l.survey(st, &r); err != nil {
		return r, err
	}
	launch, unlock, err := l.heatLaunch(ctx, check, heatWait)
	if err != nil {
		return r, err
	}
	defer unlock()
	if launch != nil {
		r.Heat = launch
		if !check {
			return r, launch
		}
	}
	if check {
		return r, nil
	}
	for _, n := range names {
		p := filepath.Join(l.Dir, n)
		if err := os.RemoveAll(p); err != nil {
			return r, fmt.Errorf("removing %s: %w; the working dir is partly removed and still ours: fix that, then run the delete again to finish", p, err)
		}
	}
	for _, n := range []string{pathguard.Marker, LockFile} {
		if err := os.Remove(filepath.Join(l.Dir, n)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return r, fmt.Errorf("removing %s: %w; run the delete again to finish", filepath.Join(l.Dir, n), err)
		}
	}
	if err := os.Remove(l.Dir); err != nil {
		left, _ := os.ReadDir(l.Dir)
		names := make([]string, 0, len(left))
		for _, e := range left {
			names = append(names, e.Name())
		}
		return r, fmt.Errorf("removing work_dir %s: %w: it holds %s, written while it was removed; find what wrote there (another playbook on this working dir?), "+
			"then remove them or run the delete again; nothing else of it is left", l.Dir, err, strings.Join(names, ", "))
	}
	return r, nil
}

// heatLaunch returns the launch of Heat the heat_dir records (nil: none),
// holding the heat_dir's lock until unlock unless check. A heat_dir that is
// not a directory (a symlink: removed as one) holds no launch of ours.
func (l Layout) heatLaunch(ctx context.Context, check bool, wait time.Duration) (*HeatLaunched, func(), error) {
	unlock := func() {}
	dir, err := filepath.Abs(l.HeatDir())
	if err != nil {
		return nil, unlock, fmt.Errorf("heat_dir %s: %w: nothing was removed", l.HeatDir(), err)
	}
	hd, err := heatdir.At(dir)
	if err != nil {
		return nil, unlock, err
	}
	if st, err := os.Lstat(dir); err != nil || !st.IsDir() {
		return nil, unlock, nil
	}
	if !check {
		lock, err := hd.Lock(ctx, wait)
		if err != nil {
			return nil, unlock, err
		}
		unlock = lock.Unlock
	}
	rec, err := hd.ReadRecord()
	if err != nil {
		return nil, unlock, fmt.Errorf("heat_dir %s: %w: nothing was removed", hd, err)
	}
	if rec == nil {
		return nil, unlock, nil
	}
	what := fmt.Sprintf("%s, %s", rec.Describe(), rec.State)
	return &HeatLaunched{What: what, err: fmt.Errorf("heat_dir %s records a launch of Heat (%s in %s): stop it first "+
		"(ansible-playbook ephemeral.heat.kill_heat -e stack_name=%s -e work_dir=%s), so that what it started is removed with it; nothing was removed",
		hd, what, hd.File(heatdir.RecordFile), l.Stack, l.Dir)}, unlock, nil
}

// entries lists the working dir's entries but its marker and lock.
func (l Layout) entries() ([]string, error) {
	des, err := os.ReadDir(l.Dir)
	if err != nil {
		return nil, fmt.Errorf("work_dir %s: %w", l.Dir, err)
	}
	var names []string
	for _, d := range des {
		if n := d.Name(); n != pathguard.Marker && n != LockFile {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	return names, nil
}

// onlyThisStack refuses a working dir that also holds another stack's
// deployment: its passwords, its deployment status, its config-download.
func (l Layout) onlyThisStack(names []string) error {
	others := map[string]bool{}
	// The names the layout gives a stack's passwords and status, without
	// the stack.
	var suffixes []string
	for _, p := range []string{l.Passwords(), l.Status()} {
		suffixes = append(suffixes, strings.TrimPrefix(filepath.Base(p), l.Stack))
	}
	for _, n := range names {
		for _, suffix := range suffixes {
			// tripleo-<stack>-passwords.yaml is `openstack tripleo
			// deploy`'s name for this stack's.
			if s, ok := strings.CutSuffix(n, suffix); ok && s != l.Stack && s != "tripleo-"+l.Stack && s != "" {
				others[s] = true
			}
		}
	}
	if des, err := os.ReadDir(l.path(ConfigDownloadDir)); err == nil {
		for _, d := range des {
			if d.IsDir() && d.Name() != l.Stack {
				others[d.Name()] = true
			}
		}
	}
	if len(others) == 0 {
		return nil
	}
	list := make([]string, 0, len(others))
	for s := range others {
		list = append(list, s)
	}
	sort.Strings(list)
	return fmt.Errorf("work_dir %s also holds the deployment of stack(s) %s (their passwords, status or config-download), which a delete of stack %s would remove too: "+
		"move them to their own working dir first; nothing was removed", l.Dir, strings.Join(list, ", "), l.Stack)
}

// survey walks what Remove would remove: it counts the files and refuses a
// mount point inside (another file system's files would go) and a
// directory this user cannot empty, before anything is removed.
func (l Layout) survey(root fs.FileInfo, r *Deletion) error {
	rootDev := devOf(root)
	euid := os.Geteuid()
	return filepath.WalkDir(l.Dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return fmt.Errorf("reading %s: %w; nothing was removed", p, err)
		}
		if p == l.Dir {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return fmt.Errorf("reading %s: %w; nothing was removed", p, err)
		}
		if !d.IsDir() {
			r.Files++
			if info.Mode().IsRegular() {
				r.Bytes += info.Size()
			}
			return nil
		}
		if devOf(info) != rootDev {
			return fmt.Errorf("%s is a mount point (another file system) inside work_dir %s: unmount it first, its files are not the deployment's; nothing was removed", p, l.Dir)
		}
		if euid != 0 && pathguard.Owner(info) != euid {
			return fmt.Errorf("%s is owned by uid %d, not this user (%d), who cannot empty it: remove it as its owner (or root) first; nothing was removed",
				p, pathguard.Owner(info), euid)
		}
		return nil
	})
}

// devOf is the device a file is on.
func devOf(info fs.FileInfo) uint64 {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Dev)
	}
	return 0
}
