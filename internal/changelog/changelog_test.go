package changelog

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const testConfig = `---
title: Test.Coll
changes_file: changelog.yaml
notesdir: fragments
changelog_filename_template: ../CHANGELOG.rst
prelude_section_name: release_summary
prelude_section_title: Release Summary
trivial_section_name: trivial
use_fqcn: true
keep_fragments: false
sections:
  - [major_changes, Major Changes]
  - [minor_changes, Minor Changes]
  - [bugfixes, Bugfixes]
`

// newDir makes a changelogs/ directory with the given changelog.yaml and fragments.
func newDir(t *testing.T, changelog string, frags map[string]string) *Dir {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "changelogs")
	if err := os.MkdirAll(filepath.Join(dir, "fragments"), 0o755); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{"config.yaml": testConfig, "changelog.yaml": changelog, "fragments/.keep": ""}
	for n, c := range frags {
		files["fragments/"+n] = c
	}
	for n, c := range files {
		if err := os.WriteFile(filepath.Join(dir, n), []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	d, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestFragmentsValidation(t *testing.T) {
	tests := []struct {
		name, file, content, wantErr string
	}{
		{"valid", "a.yml", "minor_changes:\n  - a change\nrelease_summary: text\n", ""},
		{"unknown section", "a.yml", "new_stuff:\n  - x\n", `unknown section "new_stuff"`},
		{"prelude as a list", "a.yml", "release_summary:\n  - x\n", "release_summary must be one string"},
		{"section as a string", "a.yml", "bugfixes: x\n", "bugfixes must be a list of strings"},
		{"empty entry", "a.yml", "bugfixes:\n  - ''\n", "is not a non-empty string"},
		{"empty fragment", "a.yml", "", "empty fragment"},
		{"not YAML", "a.yml", "bugfixes: [\n", "not valid YAML"},
		{"wrong extension", "a.txt", "bugfixes: [x]\n", "fragments are .yml or .yaml files"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := newDir(t, "ancestor: null\nreleases: {}\n", map[string]string{tc.file: tc.content})
			frags, err := d.Fragments()
			if tc.wantErr == "" {
				if err != nil || len(frags) != 1 {
					t.Fatalf("fragments %v, error %v", frags, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), tc.file) {
				t.Fatalf("error %v, want one naming %s with %q", err, tc.file, tc.wantErr)
			}
		})
	}
}

func TestLoadRefusesBadChangelog(t *testing.T) {
	for content, want := range map[string]string{
		"ancestor: null\nreleases:\n  one: {release_date: '2026-01-01'}\n":                         "not a semantic version",
		"ancestor: null\nreleases:\n  1.0.0: {changes: {oops: [x]}, release_date: '2026-01-01'}\n": `unknown section "oops"`,
		"ancestor: null\nreleases: {}\nextra: 1\n":                                                 "field extra not found",
	} {
		d := newDir(t, content, nil)
		if _, err := d.Load(); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want %q", content, err, want)
		}
	}
}

func TestReleaseAndRender(t *testing.T) {
	d := newDir(t, `ancestor: null
releases:
  1.9.0:
    changes:
      release_summary: Older.
    modules:
      - {name: old_mod, description: An old module, namespace: ''}
    release_date: '2026-01-01'
`, map[string]string{
		"a.yml": "release_summary: The summary.\nminor_changes:\n  - first\nbugfixes:\n  - |\n    a fix\n    on two lines\n",
		"b.yml": "minor_changes:\n  - second\n",
	})
	cl, err := d.Load()
	if err != nil {
		t.Fatal(err)
	}
	frags, err := d.Fragments()
	if err != nil {
		t.Fatal(err)
	}
	have := Objects{
		"module":     {{Name: "old_mod", Description: "An old module", VersionAdded: "1.9.0"}, {Name: "new_mod", Description: "A new module", VersionAdded: "1.10.0"}},
		KindRole:     {{Name: "a_role", Description: "A role"}},
		KindPlaybook: {{Name: "a_book", Description: "A playbook"}},
	}
	for _, bad := range []struct{ version, date, want string }{
		{"1.9.0", "2026-02-01", "already in the changelog"},
		{"1.10", "2026-02-01", "not a semantic version"},
		{"1.10.0", "1 Feb 2026", "not YYYY-MM-DD"},
	} {
		if err := d.Release(cl, bad.version, bad.date, have, frags); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("Release(%s, %s): error %v, want %q", bad.version, bad.date, err, bad.want)
		}
	}
	if err := d.Release(cl, "1.10.0", "2026-02-01", have, nil); err == nil || !strings.Contains(err.Error(), "no changelog fragments") {
		t.Errorf("a release without fragments: error %v", err)
	}
	if err := d.Release(cl, "1.10.0", "2026-02-01", have, frags); err != nil {
		t.Fatal(err)
	}
	r := cl.Releases["1.10.0"]
	if len(r.Modules) != 1 || r.Modules[0].Name != "new_mod" || r.Modules[0].Namespace == nil || *r.Modules[0].Namespace != "" {
		t.Errorf("new modules: %+v (old_mod was released before)", r.Modules)
	}
	if len(r.Objects[KindRole]) != 1 || r.Objects[KindRole][0].Namespace != nil || len(r.Objects[KindPlaybook]) != 1 {
		t.Errorf("new roles and playbooks: %+v", r.Objects)
	}
	if got := r.Changes["minor_changes"].([]any); len(got) != 2 || got[0] != "first" || got[1] != "second" {
		t.Errorf("minor_changes folded: %v", got)
	}
	if strings.Join(r.Fragments, ",") != "a.yml,b.yml" {
		t.Errorf("fragments: %v", r.Fragments)
	}

	// Saved and loaded back, it renders the same.
	if err := d.Save(cl); err != nil {
		t.Fatal(err)
	}
	if err := d.RemoveFragments(frags); err != nil {
		t.Fatal(err)
	}
	if left, _ := d.Fragments(); len(left) != 0 {
		t.Errorf("fragments left after the release: %v", left)
	}
	again, err := d.Load()
	if err != nil {
		t.Fatal(err)
	}
	out := d.RenderRST(again, "ns", "coll")
	if out != d.RenderRST(cl, "ns", "coll") {
		t.Error("the saved changelog renders differently")
	}
	for _, want := range []string{
		"=======================\nTest.Coll Release Notes\n=======================\n\n.. contents:: Topics\n\nv1.10.0\n=======\n\nRelease Summary\n---------------\n\nThe summary.\n\nMinor Changes\n-------------\n\n- first\n- second\n\nBugfixes\n--------\n\n- a fix\n  on two lines\n\nNew Modules\n-----------\n\n- ns.coll.new_mod - A new module\n\nNew Playbooks\n-------------\n\n- ns.coll.a_book - A playbook\n\nNew Roles\n---------\n\n- ns.coll.a_role - A role\n\nv1.9.0\n======\n",
		"- ns.coll.old_mod - An old module\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("rendering lacks %q:\n%s", want, out)
		}
	}
}

func TestScanTheCollection(t *testing.T) {
	have, err := Scan(filepath.Join("..", "..", "collection"))
	if err != nil {
		t.Fatal(err)
	}
	if len(have["module"]) < 5 || len(have[KindRole]) < 3 || len(have[KindPlaybook]) < 3 {
		t.Fatalf("Scan found %d modules, %d roles, %d playbooks", len(have["module"]), len(have[KindRole]), len(have[KindPlaybook]))
	}
	for kind, list := range have {
		for _, o := range list {
			if o.Description == "" || strings.HasSuffix(o.Description, ":") {
				t.Errorf("%s %s: description %q", kind, o.Name, o.Description)
			}
		}
	}
}

func TestOpenRefusesIncompleteConfig(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "config.yaml"), []byte("title: X\n"), 0o644)
	if _, err := Open(dir); err == nil || !strings.Contains(err.Error(), "required") {
		t.Fatalf("error %v", err)
	}
}

func TestLeadingComment(t *testing.T) {
	tests := []struct{ name, content, want string }{
		{"one line ending in a colon", "---\n# Deploy an overcloud:\n#   a -> b\n- name: x\n", "Deploy an overcloud"},
		{"a sentence over two lines", "---\n# Remove named nodes, the way\n# tripleoclient does it: Heat is not touched.\n#   1. mapped\n", "Remove named nodes, the way tripleoclient does it"},
		{"cut at the first sentence", "# Stop Heat. Then more.\n", "Stop Heat"},
		{"ends at an empty comment line", "---\n# Relaunch Heat\n#\n# Other text.\n", "Relaunch Heat"},
		{"code as RST literals", "# `openstack overcloud update run` on a dir: it runs\n", "``openstack overcloud update run`` on a dir"},
		{"no comment", "---\n- name: x\n", ""},
		{"comment after the first play", "- name: x\n# late\n", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "book.yml")
			if err := os.WriteFile(p, []byte(tc.content), 0o644); err != nil {
				t.Fatal(err)
			}
			got, err := leadingComment(p)
			if err != nil || got != tc.want {
				t.Errorf("leadingComment: %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}
