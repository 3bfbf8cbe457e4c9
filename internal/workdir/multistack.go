package workdir

import (
	"fmt"
	"path/filepath"

	"github.com/ephemeral-heat/ephemeral-heat/internal/configdownload"
	"github.com/ephemeral-heat/ephemeral-heat/internal/fsutil"
)

// Multi-stack (DCN): each stack has its own working dir, and one of them
// holds the inventory of them all (configdownload.MergeInventories owns its
// format).

// MergedInventory is <stack>-merged-inventory.yaml (ours): the inventory of
// several stacks, this one among them, as tripleo-common's
// TripleoInventories writes it for a list of stacks.
func (l Layout) MergedInventory() string { return l.path(l.Stack + "-merged-inventory.yaml") }

// MergedInventoryResult is what WriteMergedInventory did.
type MergedInventoryResult struct {
	Path        string
	Stacks      []string
	Inventories []string
	Changed     bool
}

// WriteMergedInventory writes MergedInventory from the config-download
// inventories of stacks (in order; l must be one of them), each read from
// its own working dir and never written. check writes nothing.
func (l Layout) WriteMergedInventory(stacks []Layout, check bool) (*MergedInventoryResult, error) {
	res := &MergedInventoryResult{Path: l.MergedInventory()}
	mine := false
	var in []configdownload.StackInventory
	for _, s := range stacks {
		if s.Stack == l.Stack {
			if filepath.Clean(s.Dir) != l.Dir {
				return res, fmt.Errorf("stacks: stack %s is this working dir's stack, but its work_dirs entry is %s, not %s", s.Stack, s.Dir, l.Dir)
			}
			mine = true
		}
		if err := s.Guard(); err != nil {
			return res, err
		}
		p := s.Inventory()
		data, err := fsutil.ReadOwn(p, fileLimit, "config-download inventory of stack "+s.Stack)
		if err != nil {
			if isNotExist(err) {
				return res, fmt.Errorf("stacks: stack %s has no config-download inventory %s: deploy it (or run config_download) "+
					"into its working dir %s first, or give its working dir in work_dirs", s.Stack, p, s.Dir)
			}
			return res, err
		}
		in = append(in, configdownload.StackInventory{Stack: s.Stack, Path: p, Data: data})
		res.Stacks, res.Inventories = append(res.Stacks, s.Stack), append(res.Inventories, p)
	}
	if !mine {
		return res, fmt.Errorf("stacks: the working dir's own stack %s is not among %v: list it too (the merged inventory is written into its working dir)", l.Stack, res.Stacks)
	}
	merged, err := configdownload.MergeInventories(in)
	if err != nil {
		return res, err
	}
	changed, err := l.writeChanged(map[string][]byte{res.Path: merged}, check, "writing", l.Dir)
	res.Changed = len(changed) > 0
	return res, err
}
