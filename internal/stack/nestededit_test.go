package stack

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ephemeral-heat/ephemeral-heat/internal/heatapi"
)

// The shape of a tripleo-heat-templates role, reduced: the top stack reads
// a role's data through an OS::Heat::Value; the role (a provider template)
// collects its services' role_data with an OS::Heat::ResourceChain; a
// service is an alias (a provider template of its own) of the template
// that holds the data. Editing only that innermost file must change the
// top stack's output after the update.
var nestedEditFiles = map[string]string{
	"top.yaml": `heat_template_version: wallaby
resources:
  role:
    type: OS::Edit::Role
  role_value:
    type: OS::Heat::Value
    properties: {value: {get_attr: [role, role_data]}}
outputs:
  role_data: {value: {get_attr: [role_value, value]}}
`,
	"role.yaml": `heat_template_version: wallaby
resources:
  chain:
    type: OS::Heat::ResourceChain
    properties:
      resources: [OS::Edit::Services::Chrony]
  data:
    type: OS::Heat::Value
    properties:
      type: json
      value: {service_data: {get_attr: [chain, role_data]}}
outputs:
  role_data: {value: {get_attr: [data, value]}}
`,
	"services/chrony-alias.yaml": `heat_template_version: wallaby
resources:
  base:
    type: OS::Edit::Services::ChronyBase
outputs:
  role_data: {value: {get_attr: [base, role_data]}}
`,
	"services/chrony-base.yaml": `heat_template_version: wallaby
outputs:
  role_data:
    value:
      service_name: chrony
      ansible_group_vars: {chrony_role_action: all}
`,
	"registry.yaml": `resource_registry:
  OS::Edit::Role: role.yaml
  OS::Edit::Services::Chrony: services/chrony-alias.yaml
  OS::Edit::Services::ChronyBase: services/chrony-base.yaml
`,
}

// testNestedEdit: an update that changes only the content of a template
// four stacks deep reaches the top stack's outputs. Heat 19's legacy
// engine (our convergence_engine = false) kept the nested stacks' old
// outputs in the parents' get_attr values without the engine plugin
// ephemeral_heat_legacy_update_outputs (internal/heatdir): the update was
// UPDATE_COMPLETE and the output unchanged.
func testNestedEdit(t *testing.T, c *heatapi.Client) {
	dir := t.TempDir()
	write(t, dir, nestedEditFiles)
	o := Options{Name: "nested-edit", Template: filepath.Join(dir, "top.yaml"), Wait: true, Timeout: 10,
		EnvironmentFiles: []string{filepath.Join(dir, "registry.yaml")}}
	roleData := func(out Outcome) string {
		b, err := json.Marshal(out.Outputs["role_data"])
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	out, err := run(t, c, o)
	if err != nil || !strings.Contains(roleData(out), `"chrony_role_action":"all"`) {
		t.Fatalf("create: outputs %v, %v", out.Outputs, err)
	}
	for i, action := range []string{"config", "all"} {
		write(t, dir, map[string]string{"services/chrony-base.yaml": strings.Replace(nestedEditFiles["services/chrony-base.yaml"],
			"chrony_role_action: all", "chrony_role_action: "+action+"-"+string(rune('a'+i)), 1)})
		out, err = run(t, c, o)
		want := `"chrony_role_action":"` + action + "-" + string(rune('a'+i)) + `"`
		if err != nil || !out.Changed || out.Stack.Status != "UPDATE_COMPLETE" {
			t.Fatalf("update %d: %+v %v", i+1, out.Stack, err)
		}
		if got := roleData(out); !strings.Contains(got, want) {
			t.Fatalf("update %d (UPDATE_COMPLETE) of the innermost file did not reach the top stack's output: role_data = %s, want it to hold %s",
				i+1, got, want)
		}
	}
}
