package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ephemeral-heat/ephemeral-heat/internal/workdir"
)

// deployed leaves the config-download inventory of stack in its working
// dir root/<stack>, as a wallaby deploy does.
func deployed(t *testing.T, root, stack string) workdir.Layout {
	t.Helper()
	l, err := workdir.New(filepath.Join(root, stack), stack)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(l.ConfigDownload(), 0o700); err != nil {
		t.Fatal(err)
	}
	inv := strings.ReplaceAll("Undercloud:\n  hosts: {undercloud: {}}\n  vars: {plan: S, plans: [S]}\nCompute:\n  children: {S_Compute: {}}\n"+
		"S_Compute:\n  hosts: {S-novacompute-0: {ansible_host: 192.0.2.10}}\n", "S", stack)
	if err := os.WriteFile(l.Inventory(), []byte(inv), 0o600); err != nil {
		t.Fatal(err)
	}
	return l
}

func TestMergeInventoryAction(t *testing.T) {
	root := filepath.Join(t.TempDir(), "overcloud-deploy")
	central, dcn0 := deployed(t, root, "central"), deployed(t, root, "dcn0")
	base := map[string]any{"work_dir": dcn0.Dir, "stack": "dcn0", "action": "merge_inventory"}
	with := func(kv ...any) map[string]any {
		m := map[string]any{}
		for k, v := range base {
			m[k] = v
		}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	}
	r := call(t, with("stacks", []any{"central", "dcn0"}, "_ansible_check_mode", true))
	if r["failed"] == true || r["changed"] != true {
		t.Fatalf("check: %v", r)
	}
	if _, err := os.Stat(dcn0.MergedInventory()); !os.IsNotExist(err) {
		t.Fatal("check mode wrote")
	}
	r = call(t, with("stacks", []any{"central", "dcn0"}))
	if r["failed"] == true || r["changed"] != true || r["inventory"] != dcn0.MergedInventory() {
		t.Fatalf("merge: %v", r)
	}
	b, err := os.ReadFile(dcn0.MergedInventory())
	if err != nil || !strings.Contains(string(b), "central_Compute: {}\n    dcn0_Compute: {}\n") || !strings.Contains(string(b), "- central\n      - dcn0\n") {
		t.Errorf("merged inventory %v:\n%s", err, b)
	}
	// Given explicitly, the same; nothing changes.
	r = call(t, with("stacks", []any{"central", "dcn0"}, "work_dirs", []any{central.Dir, dcn0.Dir}))
	if r["failed"] == true || r["changed"] != false {
		t.Errorf("again: %v", r)
	}
	for _, c := range []struct {
		args map[string]any
		want string
	}{
		{with(), "needs stacks"},
		{with("stacks", []any{"central", "dcn0"}, "work_dirs", []any{central.Dir}), "work_dirs has 1 entries and stacks 2"},
		{with("stacks", []any{"central", "bad name"}), "stacks"},
		{with("stacks", []any{"central"}), "own stack dcn0 is not among"},
		{with("stacks", []any{"dcn1", "dcn0"}), "stack dcn1 has no config-download inventory"},
		{map[string]any{"work_dir": dcn0.Dir, "stack": "dcn0", "action": "export", "stacks": []any{"dcn0"}}, `parameter "stacks" does not apply to action export`},
	} {
		r := call(t, c.args)
		if r["failed"] != true || !strings.Contains(r["msg"].(string), c.want) {
			t.Errorf("%v: %v, want %q", c.args, r["msg"], c.want)
		}
	}
}
