package stack

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/ephemeral-heat/ephemeral-heat/internal/templates"
)

// writeTree writes files (slash paths relative to root) under root.
func writeTree(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for rel, content := range files {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// digestOf processes top with envs (paths relative to root) and digests
// what a create would send, with the parameters environment naming the
// environments as heat_stack's does.
func digestOf(t *testing.T, root, top string, envs ...string) string {
	t.Helper()
	var paths []string
	for _, e := range envs {
		paths = append(paths, filepath.Join(root, e))
	}
	b, err := templates.Process(filepath.Join(root, top), paths)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{}
	for k, v := range b.Files {
		files[k] = v
	}
	penv, err := parametersEnv(map[string]any{"P": "x"}, b.EnvironmentFiles)
	if err != nil {
		t.Fatal(err)
	}
	files[ParametersEnvURL] = penv
	in := &Inputs{Template: b.Template, Files: files, EnvironmentFiles: append(append([]string{}, b.EnvironmentFiles...), ParametersEnvURL),
		Tags: []string{}, TimeoutMins: 10}
	return in.Digest()
}

const (
	digestTop = `heat_template_version: wallaby
resources:
  a:
    type: nested/a.yaml
  b:
    type: OS::Heat::Value
    properties:
      value: {get_file: scripts/run.sh}
`
	digestNested = `heat_template_version: wallaby
resources:
  v:
    type: OS::Heat::Value
    properties:
      value: {get_file: ../scripts/run.sh}
`
	digestEnv = `resource_registry:
  My::Thing: ../tht/nested/a.yaml
parameter_defaults:
  P: 1
`
)

func digestTree() map[string]string {
	return map[string]string{
		"tht/top.yaml":          digestTop,
		"tht/nested/a.yaml":     digestNested,
		"tht/scripts/run.sh":    "echo one\n",
		"tht/scripts/other.sh":  "echo two\n",
		"tht/scripts/run.sh.in": "echo template\n",
		"envs/env.yaml":         digestEnv,
	}
}

func TestDigestDependsOnContentNotLocation(t *testing.T) {
	base := t.TempDir()
	orig := filepath.Join(base, "one")
	writeTree(t, orig, digestTree())
	want := digestOf(t, orig, "tht/top.yaml", "envs/env.yaml")

	tests := []struct {
		name string
		// edit changes the tree copied to a new place (nil: none).
		edit func(map[string]string)
		// top and env, relative to the new place (after the edit).
		top, env string
		same     bool
	}{
		{name: "same files at another path", top: "tht/top.yaml", env: "envs/env.yaml", same: true},
		{name: "templates and environment moved apart", top: "a/b/tht/top.yaml", env: "c/envs/env.yaml", same: true,
			edit: func(m map[string]string) {
				// The environment refers to the templates relatively: it follows them.
				m["c/envs/env.yaml"] = "resource_registry:\n  My::Thing: ../../a/b/tht/nested/a.yaml\nparameter_defaults:\n  P: 1\n"
				delete(m, "envs/env.yaml")
				for _, k := range []string{"tht/top.yaml", "tht/nested/a.yaml", "tht/scripts/run.sh", "tht/scripts/other.sh", "tht/scripts/run.sh.in"} {
					m["a/b/"+k] = m[k]
					delete(m, k)
				}
			}},
		{name: "a nested file's content changed", top: "tht/top.yaml", env: "envs/env.yaml",
			edit: func(m map[string]string) { m["tht/scripts/run.sh"] = "echo changed\n" }},
		{name: "a reference names another file", top: "tht/top.yaml", env: "envs/env.yaml",
			edit: func(m map[string]string) {
				m["tht/nested/a.yaml"] = digestNested[:len(digestNested)-len("run.sh}\n")] + "other.sh}\n"
			}},
		{name: "a parameter default changed", top: "tht/top.yaml", env: "envs/env.yaml",
			edit: func(m map[string]string) { m["envs/env.yaml"] = digestEnv[:len(digestEnv)-2] + "2\n" }},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tree := digestTree()
			if tc.edit != nil {
				tc.edit(tree)
			}
			root := filepath.Join(base, "copy", string(rune('a'+i)))
			writeTree(t, root, tree)
			got := digestOf(t, root, tc.top, tc.env)
			if tc.same && got != want {
				t.Errorf("digest %s, want the original's %s: the digest depends on where the files lie", got, want)
			}
			if !tc.same && got == want {
				t.Errorf("digest %s equals the original's: the change is not seen", got)
			}
		})
	}
}

func TestDigestLongerURLNotMistaken(t *testing.T) {
	c := canonicalizer{files: map[string]string{"file:///t/a.yaml": "A", "file:///t/a.yaml.bak": "B"},
		names: map[string]string{}, busy: map[string]bool{}}
	got := c.rewrite("x file:///t/a.yaml.bak y file:///t/a.yaml z file:///elsewhere.yaml")
	want := "x " + c.name("file:///t/a.yaml.bak") + " y " + c.name("file:///t/a.yaml") + " z file:///elsewhere.yaml"
	if got != want {
		t.Errorf("rewrite = %q, want %q", got, want)
	}
	if c.name("file:///t/a.yaml") == c.name("file:///t/a.yaml.bak") {
		t.Error("files of different content got one name")
	}
}
