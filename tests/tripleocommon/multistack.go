package tripleocommon

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"reflect"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/ephemeral-heat/ephemeral-heat/internal/configdownload"
	"github.com/ephemeral-heat/ephemeral-heat/internal/heatapi"
	"github.com/ephemeral-heat/ephemeral-heat/internal/workdir"
)

// The merged inventory of several stacks (multi-stack, DCN): ours is
// overcloud_workdir's merge_inventory (workdir.WriteMergedInventory, from
// each stack's config-download inventory), tripleo-common's is
// TripleoInventories of the stacks (harness.py --merge-stacks).

// MergedAllowed are the differences between our merged inventory and
// tripleo-common's that the test accepts (Kind Inventory, Path a JSON path
// pattern of the difference). None: each stack's inventory is already
// tripleo-common's (TestSampleOvercloudParity), and the merge is the same
// function of them.
var MergedAllowed = []Allowance{}

// RunMergedReference writes tripleo-common's merged inventory of stacks
// into dest/tripleo-ansible-inventory.yaml (harness.py --merge-stacks).
func RunMergedReference(ctx context.Context, tc Tree, endpoint string, stacks []string, dest string) (Result, error) {
	return runHarness(ctx, "merged inventory", "--tripleo-common", tc.Root,
		"--endpoint", endpoint, "--merge-stacks", strings.Join(stacks, ","), "--dest", dest,
		"--ssh-network", configdownload.DefaultSSHNetwork, "--ssh-user", configdownload.DefaultSSHUser)
}

// MergedParity is the outcome of RunMergedParity.
type MergedParity struct {
	Ours, Theirs string // the two inventory files
	// Problems are the differences MergedAllowed does not explain.
	Problems []string
}

// RunMergedParity renders each of stacks with our config_download into its
// own working dir root/ours/<stack> (as each deploy does), merges their
// inventories into the last stack's working dir with
// workdir.WriteMergedInventory, runs tripleo-common's merge of the same
// stacks into root/tripleo-common, and compares: the groups' order, the
// values of both files, and ansible-inventory --list of each.
func RunMergedParity(ctx context.Context, c *heatapi.Client, stacks []string, root string, tc Tree) (*MergedParity, []string, error) {
	p := &MergedParity{}
	var warnings []string
	var layouts []workdir.Layout
	for _, s := range stacks {
		l, err := workdir.New(filepath.Join(root, "ours", s), s)
		if err != nil {
			return p, warnings, err
		}
		out, err := configdownload.Run(ctx, c, configdownload.RunOptions{Stack: s, Dest: l.ConfigDownload(), Commit: true})
		warnings = append(warnings, out.Warnings...)
		if err != nil {
			return p, warnings, fmt.Errorf("our config download of %s: %w", s, err)
		}
		layouts = append(layouts, l)
	}
	m, err := layouts[len(layouts)-1].WriteMergedInventory(layouts, false)
	if err != nil {
		return p, warnings, fmt.Errorf("our merged inventory: %w", err)
	}
	p.Ours = m.Path
	theirs := filepath.Join(root, "tripleo-common")
	res, err := RunMergedReference(ctx, tc, c.Endpoint(), stacks, theirs)
	for _, w := range res.Warnings {
		warnings = append(warnings, "tripleo-common: "+w)
	}
	if err != nil {
		return p, warnings, err
	}
	p.Theirs = filepath.Join(theirs, configdownload.InventoryFile)

	problem := func(where, detail string) {
		for _, a := range MergedAllowed {
			if ok, _ := path.Match(a.Path, where); a.Kind == Inventory && (ok || a.Path == "**") {
				return
			}
		}
		p.Problems = append(p.Problems, fmt.Sprintf("%s: %s", Inventory, detail))
	}
	ourKeys, ourVal, err := readInventory(p.Ours)
	if err != nil {
		return p, warnings, err
	}
	theirKeys, theirVal, err := readInventory(p.Theirs)
	if err != nil {
		return p, warnings, err
	}
	ourKeys, theirKeys = withoutServiceGroups(ourKeys, stacks), withoutServiceGroups(theirKeys, stacks)
	if !reflect.DeepEqual(ourKeys, theirKeys) {
		problem("(order)", fmt.Sprintf("groups in another order: ours %v, theirs %v", ourKeys, theirKeys))
	}
	for _, d := range DiffJSON(ourVal, theirVal, 50) {
		problem(strings.SplitN(d, ":", 2)[0], "file values: "+d)
	}
	tmp := filepath.Join(root, "ansible-tmp")
	if err := os.MkdirAll(tmp, 0o700); err != nil {
		return p, warnings, err
	}
	env, err := AnsibleEnv(nil, tmp)
	if err != nil {
		return p, warnings, err
	}
	ourList, err := inventoryListFile(ctx, env, p.Ours)
	if err != nil {
		return p, warnings, err
	}
	theirList, err := inventoryListFile(ctx, env, p.Theirs)
	if err != nil {
		return p, warnings, err
	}
	for _, d := range DiffJSON(ourList, theirList, 50) {
		problem(strings.SplitN(d, ":", 2)[0], "ansible-inventory --list: "+d)
	}
	return p, warnings, nil
}

// withoutServiceGroups leaves out of keys the groups of services
// (lower-case names, under a stack's prefix or not, but allovercloud,
// excluded_overcloud and the stacks' own groups): tripleo-common writes them
// in the order of a Python set of strings, which differs from one process
// to the next (PYTHONHASHSEED), so there is no order of theirs to match.
// Their values are compared all the same.
func withoutServiceGroups(keys, stacks []string) []string {
	own := map[string]bool{"allovercloud": true, "excluded_overcloud": true, "Undercloud": true}
	for _, s := range stacks {
		own[s] = true
	}
	var out []string
	for _, k := range keys {
		name := k
		for _, s := range stacks {
			if strings.HasPrefix(k, s+"_") {
				name = strings.TrimPrefix(k, s+"_")
				break
			}
		}
		if !own[name] && name == strings.ToLower(name) {
			continue
		}
		out = append(out, k)
	}
	return out
}

// readInventory returns an inventory file's top-level groups in order and
// its value (through JSON, as DiffJSON compares).
func readInventory(file string) ([]string, any, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, nil, err
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil || len(doc.Content) != 1 {
		return nil, nil, fmt.Errorf("%s: not a YAML document: %v", file, err)
	}
	var keys []string
	for i := 0; i+1 < len(doc.Content[0].Content); i += 2 {
		keys = append(keys, doc.Content[0].Content[i].Value)
	}
	var v any
	if err := doc.Decode(&v); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", file, err)
	}
	j, err := json.Marshal(v)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", file, err)
	}
	var out any
	return keys, out, json.Unmarshal(j, &out)
}

// inventoryListFile is `ansible-inventory -i FILE --list`, normalized as
// InventoryList's.
func inventoryListFile(ctx context.Context, env []string, file string) (any, error) {
	cmd := exec.CommandContext(ctx, "ansible-inventory", "-i", file, "--list")
	cmd.Env, cmd.Dir = env, filepath.Dir(file)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("ansible-inventory -i %s --list: %v\n%s", file, err, stderr.String())
	}
	var v any
	if err := json.Unmarshal(out, &v); err != nil {
		return nil, fmt.Errorf("ansible-inventory -i %s --list: %w", file, err)
	}
	return normalizeInventory(v), nil
}
