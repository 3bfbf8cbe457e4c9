// Package molecule runs the collection's molecule scenarios (molecule/,
// through molecule/run.sh) as a test: a package of its own, so that
// `make test` runs it beside the other test packages.
package molecule

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ephemeral-heat/ephemeral-heat/internal/testutil/ansibletest"
	"github.com/ephemeral-heat/ephemeral-heat/internal/testutil/heattest"
)

// TestMoleculeScenarios runs every scenario under molecule/ through
// molecule/run.sh (molecule's order: syntax, prepare, converge, idempotence
// with changed=0, verify, cleanup) with ansible-playbook, on this host with
// the heat-config hook runner fixture installed (tests/heatagent).
func TestMoleculeScenarios(t *testing.T) {
	heattest.RequireHeat(t)
	wd, _ := os.Getwd()
	root := filepath.Clean(filepath.Join(wd, "..", ".."))
	env := ansibletest.Env(t, root)
	// The standalone scenarios apply the sample's software deployments on
	// this host.
	ansibletest.InstallHeatAgent(t, root)
	scenarios, _ := filepath.Glob(filepath.Join(root, "molecule", "*", "molecule.yml"))
	if len(scenarios) == 0 {
		t.Fatal("no molecule scenarios found")
	}
	for _, s := range scenarios {
		name := filepath.Base(filepath.Dir(s))
		t.Run(name, func(t *testing.T) {
			if only := os.Getenv("MOLECULE_SCENARIOS"); only != "" && !strings.Contains(","+only+",", ","+name+",") {
				t.Skipf("MOLECULE_SCENARIOS=%s leaves %s out", only, name)
			}
			cmd := exec.Command(filepath.Join(root, "molecule", "run.sh"), name)
			cmd.Env = env
			out, err := cmd.CombinedOutput()
			t.Logf("%s", out)
			if err != nil {
				t.Fatalf("scenario %s failed: %v", name, err)
			}
		})
	}
}
