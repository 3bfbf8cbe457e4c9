package tripleocommon

import (
	"os"
	"path/filepath"
	"reflect"
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
