package workdir

import (
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// stackFixture is the working dir of stack under root (root/<stack>, as
// ~/overcloud-deploy/<stack>): two Computes in its nodes file and a
// config-download inventory as config_download writes it for wallaby
// (the merge of its one plan).
func stackFixture(t *testing.T, root, stack string) Layout {
	t.Helper()
	l, err := New(filepath.Join(root, stack), stack)
	if err != nil {
		t.Fatal(err)
	}
	n := Nodes{Stack: stack, Groups: []Group{{Resource: "Compute", Role: "Compute", CountParameter: "ComputeCount",
		RemovalPoliciesParameter: "ComputeRemovalPolicies", Removed: []string{},
		Members: []Member{{"0", stack + "-novacompute-0"}, {"1", stack + "-novacompute-1"}}}}}
	if err := os.MkdirAll(filepath.Dir(l.Nodes()), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(l.Nodes(), yamlOf(n), 0o600); err != nil {
		t.Fatal(err)
	}
	writeInventory(t, l, strings.ReplaceAll(`Undercloud:
  hosts:
    undercloud: {}
  vars:
    ansible_connection: local
    plan: S
    plans: [S]
Compute:
  children:
    S_Compute: {}
S_Compute:
  hosts:
    S-novacompute-0: {ansible_host: 192.0.2.10}
    S-novacompute-1: {ansible_host: 192.0.2.11}
  vars: {tripleo_role_name: Compute}
S_S:
  children:
    S_Compute: {}
  vars: {container_cli: podman}
allovercloud:
  children:
    S_allovercloud: {}
S_allovercloud:
  children:
    S_S: {}
S:
  children:
    S_allovercloud: {}
`, "S", stack))
	return l
}

// snapshot is every file and directory under dir: type, mode, size, mtime
// and a digest of the content.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		st, err := os.Lstat(p)
		if err != nil {
			return err
		}
		sum := ""
		if st.Mode().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			sum = fmt.Sprintf("%x", sha256.Sum256(b))
		}
		out[p] = fmt.Sprintf("%v %d %d %s", st.Mode(), st.Size(), st.ModTime().UnixNano(), sum)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// The merged inventory of central and dcn0 goes into the working dir that
// asks for it; the other stack's is only read.
func TestWriteMergedInventory(t *testing.T) {
	root := t.TempDir()
	central, dcn0 := stackFixture(t, root, "central"), stackFixture(t, root, "dcn0")
	before := snapshot(t, central.Dir)
	r, err := dcn0.WriteMergedInventory([]Layout{central, dcn0}, true)
	if err != nil {
		t.Fatal(err)
	}
	if !r.Changed || r.Path != filepath.Join(dcn0.Dir, "dcn0-merged-inventory.yaml") {
		t.Fatalf("check: %+v", r)
	}
	if _, err := os.Stat(r.Path); !os.IsNotExist(err) {
		t.Fatal("check mode wrote the merged inventory")
	}
	if r, err = dcn0.WriteMergedInventory([]Layout{central, dcn0}, false); err != nil || !r.Changed {
		t.Fatalf("%+v %v", r, err)
	}
	if !reflect.DeepEqual(r.Stacks, []string{"central", "dcn0"}) || !reflect.DeepEqual(r.Inventories, []string{central.Inventory(), dcn0.Inventory()}) {
		t.Errorf("result %+v", r)
	}
	b, err := os.ReadFile(r.Path)
	if err != nil {
		t.Fatal(err)
	}
	var inv map[string]map[string]any
	if err := yaml.Unmarshal(b, &inv); err != nil {
		t.Fatal(err)
	}
	if got := inv["Compute"]["children"]; !reflect.DeepEqual(got, map[string]any{"central_Compute": map[string]any{}, "dcn0_Compute": map[string]any{}}) {
		t.Errorf("Compute children %v", got)
	}
	if _, ok := inv["dcn0_Compute"]["hosts"].(map[string]any)["dcn0-novacompute-1"]; !ok {
		t.Errorf("dcn0_Compute %v", inv["dcn0_Compute"])
	}
	if st, err := os.Stat(r.Path); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v %v", st.Mode(), err)
	}
	if r, err = dcn0.WriteMergedInventory([]Layout{central, dcn0}, false); err != nil || r.Changed {
		t.Errorf("second run: %+v %v", r, err)
	}
	if after := snapshot(t, central.Dir); !reflect.DeepEqual(before, after) {
		t.Errorf("central's working dir changed:\n%v\n%v", before, after)
	}

	for name, c := range map[string]struct {
		stacks []Layout
		want   string
	}{
		"own stack missing": {[]Layout{central}, "own stack dcn0 is not among [central]"},
		"own stack elsewhere": {[]Layout{central, {Dir: filepath.Join(root, "x"), Stack: "dcn0"}},
			"its work_dirs entry is " + filepath.Join(root, "x")},
		"no inventory": {[]Layout{{Dir: filepath.Join(root, "dcn1"), Stack: "dcn1"}, dcn0}, "stack dcn1 has no config-download inventory"},
		"wrong dir":    {[]Layout{{Dir: central.Dir, Stack: "dcn1"}, dcn0}, "stack dcn1 has no config-download inventory"},
	} {
		if _, err := dcn0.WriteMergedInventory(c.stacks, false); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", name, err, c.want)
		}
	}
}

// A scale-down of one stack never touches another stack's working dir,
// and cannot name that stack's nodes.
func TestScaleDownLeavesOtherStack(t *testing.T) {
	root := t.TempDir()
	central, dcn0 := stackFixture(t, root, "central"), stackFixture(t, root, "dcn0")
	if _, err := central.WriteMergedInventory([]Layout{central, dcn0}, false); err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, dcn0.Dir)
	if _, err := dcn0.ApplyScaleDown([]string{"central-novacompute-1"}, ScaleDownOptions{}); err == nil {
		t.Error("dcn0's scale-down removed a node of central")
	}
	p, err := central.ApplyScaleDown([]string{"central-novacompute-1"}, ScaleDownOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !p.Changed || !reflect.DeepEqual(p.Limit, []string{"central-novacompute-1"}) {
		t.Fatalf("plan %+v", p)
	}
	if got := scaleDownEnv(t, central)["ComputeCount"]; got != 1 {
		t.Errorf("central ComputeCount %v", got)
	}
	if after := snapshot(t, dcn0.Dir); !reflect.DeepEqual(before, after) {
		t.Errorf("dcn0's working dir changed:\n%v\n%v", before, after)
	}
	if _, err := os.Stat(dcn0.ScaleDown()); !os.IsNotExist(err) {
		t.Errorf("dcn0 has a scale-down environment: %v", err)
	}
}
