// Package ansibledoc holds the collection's module documentation to what
// ansible-doc of ansible-core 2.14, the declared minimum, shows: no markup
// it prints raw (O(), V(), RV(), E(), P(), which 2.15 introduced), and
// every module's attributes. It runs ansible-doc on the collection `make
// install` put in .collections, and checks the doc fragments' sources.
package ansibledoc

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/ephemeral-heat/ephemeral-heat/internal/module"
	"github.com/ephemeral-heat/ephemeral-heat/internal/testutil/ansibletest"
)

// repoRoot is the checkout (two levels up from this package).
func repoRoot(t *testing.T) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Clean(filepath.Join(wd, "..", ".."))
}

// rawMarkup finds what ansible-doc 2.14 leaves of the newer markup.
var rawMarkup = regexp.MustCompile(`(?:^|[^A-Za-z0-9_])((?:RV|O|V|E|P)\([^)]*\)?)`)

// minimumCore is the ansible-core the collection declares as its minimum
// (meta/runtime.yml requires_ansible), as major.minor.
func minimumCore(t *testing.T, root string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "collection", "meta", "runtime.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var rt struct {
		RequiresAnsible string `yaml:"requires_ansible"`
	}
	if err := yaml.Unmarshal(b, &rt); err != nil {
		t.Fatalf("meta/runtime.yml: %v", err)
	}
	m := regexp.MustCompile(`^>=\s*(\d+\.\d+)`).FindStringSubmatch(rt.RequiresAnsible)
	if m == nil {
		t.Fatalf("meta/runtime.yml requires_ansible %q names no minimum (>=X.Y)", rt.RequiresAnsible)
	}
	return m[1]
}

// The doc fragments' sources: sections ansible-core accepts, attributes
// its schema allows, markup 2.14 renders.
func TestFragments(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join(repoRoot(t), "collection", "plugins", "doc_fragments", "*.py"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no doc fragments in collection/plugins/doc_fragments (%v)", err)
	}
	for _, p := range paths {
		if err := module.CheckFragment(p); err != nil {
			t.Error(err)
		}
	}
}

// ansible-doc of the declared minimum ansible-core, on every module of the
// installed collection: its page, with no raw markup outside the examples
// (printed as they are), and its attributes check_mode, diff_mode and
// platform, each with a description and a support level.
func TestAnsibleDoc(t *testing.T) {
	root := repoRoot(t)
	env := ansibletest.Env(t, root)
	want := minimumCore(t, root)
	out, err := exec.Command("ansible-doc", "--version").Output()
	if err != nil {
		t.Fatalf("ansible-doc --version: %v", err)
	}
	if m := regexp.MustCompile(`\[core (\d+\.\d+)\.`).FindSubmatch(out); m == nil || string(m[1]) != want {
		t.Fatalf("this test shows what ansible-core %s, the collection's minimum, prints; ansible-doc is %s (make deps installs Debian's %s)",
			want, strings.SplitN(string(out), "\n", 2)[0], want)
	}
	dir := filepath.Join(root, ".collections", "ansible_collections", "ephemeral", "heat", "plugins", "modules")
	docs, err := filepath.Glob(filepath.Join(dir, "*.yml"))
	if err != nil || len(docs) < 5 {
		t.Fatalf("only %d module docs in %s (%v)", len(docs), dir, err)
	}
	for _, doc := range docs {
		m := strings.TrimSuffix(filepath.Base(doc), ".yml")
		t.Run(m, func(t *testing.T) {
			cmd := exec.Command("ansible-doc", "ephemeral.heat."+m)
			cmd.Env = append(env, "PAGER=cat", "COLUMNS=100")
			b, err := cmd.CombinedOutput()
			page := string(b)
			if err != nil || !strings.HasPrefix(page, "> EPHEMERAL.HEAT."+strings.ToUpper(m)+" ") {
				t.Fatalf("ansible-doc ephemeral.heat.%s: %v\n%s", m, err, page)
			}
			if strings.Contains(page, "[WARNING]") {
				t.Errorf("ansible-doc warns:\n%s", page)
			}
			text, _, _ := strings.Cut(page, "\nEXAMPLES:")
			for i, line := range strings.Split(text, "\n") {
				for _, raw := range rawMarkup.FindAllStringSubmatch(line, -1) {
					t.Errorf("line %d shows raw markup %s: %s", i+1, raw[1], strings.TrimSpace(line))
				}
			}
			checkAttributes(t, text)
		})
	}
}

// checkAttributes reads the ATTRIBUTES section of an ansible-doc page (the
// attributes as indented YAML) and checks that each of the module
// attributes is there with a description and a support level.
func checkAttributes(t *testing.T, page string) {
	t.Helper()
	_, rest, ok := strings.Cut(page, "\nATTRIBUTES:\n")
	if !ok {
		t.Error("no ATTRIBUTES section")
		return
	}
	var block []string
	for _, line := range strings.Split(rest, "\n") {
		if line != "" && !strings.HasPrefix(line, " ") {
			break // the next section
		}
		block = append(block, line)
	}
	var attrs map[string]struct {
		Description any    `yaml:"description"`
		Support     string `yaml:"support"`
	}
	if err := yaml.Unmarshal([]byte(strings.Join(block, "\n")), &attrs); err != nil {
		t.Errorf("ATTRIBUTES is not YAML: %v\n%s", err, strings.Join(block, "\n"))
		return
	}
	for _, name := range module.ModuleAttributes {
		a, ok := attrs[name]
		switch {
		case !ok:
			t.Errorf("ATTRIBUTES lacks %s", name)
		case a.Description == nil || a.Support == "":
			t.Errorf("ATTRIBUTES %s lacks its description or support: %+v", name, a)
		}
	}
}
