package changelog

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const released100 = `ancestor: null
releases:
  1.0.0:
    changes:
      release_summary: First.
    fragments:
      - first.yml
    modules:
      - {name: old_mod, description: An old module, namespace: ''}
    release_date: '2026-01-01'
`

func TestPlan(t *testing.T) {
	const waiting = "minor_changes:\n  - a change\n"
	tests := []struct {
		name      string
		changelog string
		version   string
		frags     map[string]string
		update    bool
		want      Step
		wantErr   []string
	}{
		{name: "stale: released version with fragments waiting", changelog: released100, version: "1.0.0",
			frags:   map[string]string{"b.yml": waiting, "a.yml": waiting},
			wantErr: []string{"galaxy.yml's version 1.0.0 is already released", "2 fragment(s) wait", "a.yml, b.yml", "raise version in " + filepath.Join("coll", "galaxy.yml"), "UPDATE_EXISTING=1"}},
		{name: "stale, asked to update the release", changelog: released100, version: "1.0.0",
			frags: map[string]string{"a.yml": waiting}, update: true, want: UpdateRelease},
		{name: "new version with fragments", changelog: released100, version: "1.1.0",
			frags: map[string]string{"a.yml": waiting}, want: NewRelease},
		{name: "first release", changelog: "ancestor: null\nreleases: {}\n", version: "0.1.0",
			frags: map[string]string{"a.yml": waiting}, want: NewRelease},
		{name: "released, nothing waits", changelog: released100, version: "1.0.0", want: RenderOnly},
		{name: "released, nothing waits, update asked", changelog: released100, version: "1.0.0", update: true, want: RenderOnly},
		{name: "new version without fragments", changelog: released100, version: "1.1.0",
			wantErr: []string{"1.1.0 is not released and no fragment"}},
		{name: "update of a version not released", changelog: released100, version: "1.1.0",
			frags: map[string]string{"a.yml": waiting}, update: true, wantErr: []string{"not released yet", "no release to update"}},
		{name: "version older than the newest release", changelog: released100, version: "0.9.0",
			frags: map[string]string{"a.yml": waiting}, wantErr: []string{"0.9.0 is older than the newest release 1.0.0"}},
		{name: "released version older than the newest", version: "1.0.0",
			changelog: released100 + "  1.1.0:\n    release_date: '2026-02-01'\n",
			wantErr:   []string{"1.0.0 is older than the newest release 1.1.0"}},
		{name: "a fragment a release already folded", changelog: released100, version: "1.1.0",
			frags: map[string]string{"first.yml": waiting}, wantErr: []string{"fragment first.yml is already in release 1.0.0"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := newDir(t, tc.changelog, tc.frags)
			cl, err := d.Load()
			if err != nil {
				t.Fatal(err)
			}
			frags, err := d.Fragments()
			if err != nil {
				t.Fatal(err)
			}
			g := Galaxy{Path: GalaxyPath("coll"), Namespace: "ns", Name: "coll", Version: tc.version}
			got, err := d.Plan(cl, g, frags, tc.update)
			if len(tc.wantErr) > 0 {
				if err == nil {
					t.Fatalf("Plan gave step %d, want an error with %q", got, tc.wantErr)
				}
				for _, w := range tc.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q lacks %q", err, w)
					}
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("Plan: step %d, error %v; want step %d", got, err, tc.want)
			}
		})
	}
}

// TestUpdateReleaseIsOneRelease: fragments folded in two steps (a release,
// then an update of it) give the file that folding them at once gives,
// whatever their names' order, with the first step's date.
func TestUpdateReleaseIsOneRelease(t *testing.T) {
	frags := map[string]string{
		"z-first.yml":  "release_summary: The summary.\nminor_changes:\n  - zeta change\nbugfixes:\n  - a fix\n",
		"a-second.yml": "minor_changes:\n  - alpha change\n  - middle change\ntrivial:\n  - left out\n",
		"m-late.yml":   "minor_changes:\n  - beta change\nmajor_changes:\n  - big\n",
	}
	have := Objects{
		"module": {{Name: "old_mod", Description: "An old module", VersionAdded: "1.0.0"}, {Name: "new_mod", Description: "New", VersionAdded: "1.1.0"}},
		KindRole: {{Name: "r", Description: "A role"}},
	}
	saved := func(steps ...[]string) string {
		t.Helper()
		all := map[string]string{}
		for _, names := range steps {
			for _, n := range names {
				all[n] = frags[n]
			}
		}
		d := newDir(t, released100, nil)
		for i, names := range steps {
			for _, n := range names {
				if err := os.WriteFile(filepath.Join(d.fragmentsDir(), n), []byte(frags[n]), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			cl, err := d.Load()
			if err != nil {
				t.Fatal(err)
			}
			fs, err := d.Fragments()
			if err != nil {
				t.Fatal(err)
			}
			if i == 0 {
				err = d.Release(cl, "1.1.0", "2026-02-01", have, fs)
			} else {
				err = d.UpdateRelease(cl, "1.1.0", have, fs)
			}
			if err != nil {
				t.Fatal(err)
			}
			if err := d.Save(cl); err != nil {
				t.Fatal(err)
			}
			if err := d.RemoveFragments(fs); err != nil {
				t.Fatal(err)
			}
		}
		b, err := os.ReadFile(filepath.Join(d.Path, "changelog.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	once := saved([]string{"z-first.yml", "a-second.yml", "m-late.yml"})
	for _, steps := range [][][]string{
		{{"z-first.yml", "a-second.yml"}, {"m-late.yml"}},
		{{"m-late.yml"}, {"a-second.yml", "z-first.yml"}},
		{{"a-second.yml"}, {"m-late.yml"}, {"z-first.yml"}},
	} {
		if got := saved(steps...); got != once {
			t.Errorf("folded as %v:\n%s\nwant, as folded at once:\n%s", steps, got, once)
		}
	}
	for _, want := range []string{
		"- alpha change\n        - beta change\n        - middle change\n        - zeta change\n",
		"fragments:\n      - a-second.yml\n      - m-late.yml\n      - z-first.yml\n",
		"release_date: \"2026-02-01\"",
		"name: new_mod",
	} {
		if !strings.Contains(once, want) {
			t.Errorf("the release lacks %q:\n%s", want, once)
		}
	}
	for _, unwanted := range []string{"left out", "trivial", "old_mod"} {
		if strings.Contains(once[strings.Index(once, "1.1.0:"):], unwanted) {
			t.Errorf("release 1.1.0 has %q:\n%s", unwanted, once)
		}
	}
}

func TestFoldRefusals(t *testing.T) {
	have := Objects{"module": {{Name: "new_mod", Description: "New", VersionAdded: "1.1.0"}}}
	tests := []struct {
		name    string
		frags   map[string]string
		have    Objects
		update  bool
		wantErr string
	}{
		{name: "two release summaries", frags: map[string]string{"a.yml": "release_summary: One.\n", "b.yml": "release_summary: Two.\n"},
			have: have, wantErr: "b.yml: release 1.1.0 already has a release_summary"},
		{name: "a summary added to a release that has one", update: true, frags: map[string]string{"a.yml": "release_summary: Two.\n"},
			have: have, wantErr: "release 1.0.0 already has a release_summary"},
		{name: "a new module whose version_added is an older release", frags: map[string]string{"a.yml": "bugfixes:\n  - x\n"},
			have:    Objects{"module": {{Name: "new_mod", Description: "New", VersionAdded: "1.0.0"}}},
			wantErr: "module new_mod is new in release 1.1.0 but its documentation says version_added: \"1.0.0\": set version_added: 1.1.0"},
		{name: "a fragment folded before", frags: map[string]string{"first.yml": "bugfixes:\n  - x\n"},
			have: have, wantErr: "fragment first.yml is already in release 1.0.0"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := newDir(t, released100, tc.frags)
			cl, err := d.Load()
			if err != nil {
				t.Fatal(err)
			}
			frags, err := d.Fragments()
			if err != nil {
				t.Fatal(err)
			}
			if tc.update {
				err = d.UpdateRelease(cl, "1.0.0", Objects{"module": {{Name: "old_mod", Description: "An old module", VersionAdded: "1.0.0"}}}, frags)
			} else {
				err = d.Release(cl, "1.1.0", "2026-02-01", tc.have, frags)
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("error %v, want %q", err, tc.wantErr)
			}
			if _, ok := cl.Releases["1.1.0"]; ok {
				t.Error("a refused release was added to the changelog")
			}
			if s, _ := cl.Releases["1.0.0"].Changes["release_summary"].(string); s != "First." {
				t.Errorf("a refused update changed release 1.0.0: %v", cl.Releases["1.0.0"].Changes)
			}
		})
	}
}

func TestCheckVersionAdded(t *testing.T) {
	d := newDir(t, released100, nil)
	cl, err := d.Load()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		mods    []Object
		wantErr string
	}{
		{"agrees", []Object{{Name: "old_mod", VersionAdded: "1.0.0"}, {Name: "next_mod", VersionAdded: "1.1.0"}}, ""},
		{"released module says another version", []Object{{Name: "old_mod", VersionAdded: "1.1.0"}},
			"module old_mod: release 1.0.0 added it but plugins/modules/old_mod.yml says version_added: 1.1.0; set 1.0.0"},
		{"unreleased module says a released version", []Object{{Name: "next_mod", VersionAdded: "1.0.0"}},
			"module next_mod: no release added it yet but plugins/modules/next_mod.yml says version_added: 1.0.0, not newer than the newest release 1.0.0"},
		{"no version_added", []Object{{Name: "next_mod"}}, `module next_mod: version_added "" in plugins/modules/next_mod.yml is not a version`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckVersionAdded(cl, Objects{"module": tc.mods})
			if tc.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("error %v, want %q", err, tc.wantErr)
			}
		})
	}
}
