package tripleocommon

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// Playbooks keeps the top-level files whose every item is a play. A task
// list whose arguments hold "hosts:" (octavia's external_post_deploy_tasks
// write an inventory) is not a playbook: ansible-playbook --syntax-check
// refuses it with "'block' is not a valid attribute for a Play".
func TestPlaybooks(t *testing.T) {
	files := map[string]string{
		"deploy_steps_playbook.yaml": "- hosts: all\n  tasks: []\n- import_playbook: common.yaml\n",
		"common.yaml":                "- name: Common\n  hosts: overcloud\n  gather_facts: false\n",
		"fq_import.yaml":             "- ansible.builtin.import_playbook: common.yaml\n",
		"external_post_deploy_steps_tasks.yaml": "- name: octavia_post_deploy\n  block:\n  - name: Write octavia inventory\n" +
			"    copy:\n      content:\n        all:\n          hosts: {}\n      dest: /tmp/inv.yaml\n",
		"json_quote_tasks.yaml": "- name: Quote the JSON\n  set_fact:\n    x: \"hosts: all\"\n",
		"mixed.yaml":            "- hosts: all\n- name: a task\n  debug: {}\n",
		"mapping.yaml":          "hosts: all\n",
		"empty.yaml":            "",
		"empty_list.yaml":       "[]\n",
		"broken.yaml":           "- hosts: [all\n",
		"not_yaml.txt":          "- hosts: all\n",
	}
	dir := t.TempDir()
	for n, b := range files {
		if err := os.WriteFile(filepath.Join(dir, n), []byte(b), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "Controller.yaml"), 0o700); err != nil {
		t.Fatal(err)
	}
	got, err := Playbooks(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"common.yaml", "deploy_steps_playbook.yaml", "fq_import.yaml"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Playbooks = %v, want %v", got, want)
	}
}

// A playbook importing a role nobody provides fails the syntax check with
// the role named and where a stand-in goes; the stand-ins resolve THT's
// imports of tripleo-ipa's and tripleo-validations' roles.
func TestSyntaxCheckRoles(t *testing.T) {
	dir := t.TempDir()
	for n, b := range map[string]string{
		"tripleo-ansible-inventory.yaml": "all:\n  hosts:\n    h1: {ansible_connection: local}\n",
		"stand_ins.yaml": "- hosts: all\n  tasks:\n  - import_role: {name: tls_everywhere, tasks_from: ipa-server-check}\n" +
			"  - import_role: {name: ceph, tasks_from: ceph-health}\n",
		"unknown.yaml": "- hosts: all\n  tasks:\n  - import_role: {name: no_such_role_anywhere}\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, n), []byte(b), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	env, err := AnsibleEnv(&Tree{Root: t.TempDir()}, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := SyntaxCheck(context.Background(), env, dir, []string{"stand_ins.yaml"}); err != nil {
		t.Errorf("the stand-in roles: %v", err)
	}
	err = SyntaxCheck(context.Background(), env, dir, []string{"unknown.yaml"})
	if err == nil || !strings.Contains(err.Error(), "role no_such_role_anywhere is neither tripleo-ansible's nor a stand-in") ||
		!strings.Contains(err.Error(), "tests/tripleocommon/stubroles") {
		t.Errorf("an unknown role: %v", err)
	}
}
