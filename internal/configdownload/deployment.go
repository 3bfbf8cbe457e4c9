package configdownload

import (
	_ "embed"
	"strings"
)

// deploymentsYAML is deployments.yaml, the tasks the deploy playbooks
// include to apply one software deployment (our own implementation of
// TripleO's protocol: see the file).
//
//go:embed files/deployments.yaml
var deploymentsYAML string

// heatConfigTemplate is templates/heat-config.j2: the heat-config file (the
// hook runner's input, a list of deployments) of one deployment.
const heatConfigTemplate = "[{{ deployment }}]\n"

// deploymentFile writes <Role>/<server>/<deployment> with exactly the text
// tripleo-common's Jinja template (deployment.j2, trim_blocks) gives: the
// deployment's name, then its config (a literal block for every hook group
// but hiera, whose config is a mapping), creation time, name, group, id,
// inputs (each value a literal block), name, options and outputs, values
// written as Python's str() writes them. Ansible later renders this text
// with "$$ and $$" delimiters, so the text itself is the contract.
func deploymentFile(cfg *Object) []byte {
	// The config: JSON text is parsed; what is not a string then is
	// pretty-printed as JSON (json.dumps(indent=2)).
	data := cfg.Value("config")
	if s, ok := data.(string); ok {
		if v, err := DecodeJSON([]byte(s)); err == nil {
			data = v
		}
	}
	if _, ok := data.(string); !ok {
		data = pyJSONDumps(data, 2)
	}
	scalar := cfg.Value("group") != "hiera"

	var b strings.Builder
	name := pyStr(cfg.Value("deployment_name"))
	b.WriteString(name + ":\n")
	if scalar {
		b.WriteString("  config: |\n")
	} else {
		b.WriteString("  config:\n")
	}
	b.WriteString(jinjaIndent(pyStr(data), 4, true) + "\n")
	b.WriteString(`  creation_time: "` + pyStr(cfg.Value("creation_time")) + "\"\n")
	b.WriteString("  deployment_name: " + name + "\n")
	b.WriteString("  group: " + pyStr(cfg.Value("group")) + "\n")
	b.WriteString("  id: " + pyStr(cfg.Value("id")) + "\n")
	b.WriteString("  inputs:\n")
	inputs, _ := cfg.Value("inputs").([]any)
	for _, in := range inputs {
		i := asObject(in)
		b.WriteString("    - name: " + pyStr(i.Value("name")) + "\n")
		b.WriteString("      description: " + pyStr(i.Value("description")) + "\n")
		b.WriteString("      type: " + pyStr(i.Value("type")) + "\n")
		b.WriteString("      value: |-\n")
		b.WriteString(jinjaIndent(pyStr(i.Value("value")), 8, true) + "\n")
	}
	b.WriteString("  name: " + pyStr(cfg.Value("name")) + "\n")
	b.WriteString("  options: " + pyStr(cfg.Value("options")) + "\n")
	b.WriteString("  outputs:\n")
	outputs, _ := cfg.Value("outputs").([]any)
	for _, o := range outputs {
		x := asObject(o)
		b.WriteString("    - name: " + pyStr(x.Value("name")) + "\n")
		b.WriteString("      description: " + pyStr(x.Value("description")) + "\n")
		b.WriteString("      type: " + pyStr(x.Value("type")) + "\n")
	}
	return []byte(b.String())
}

// hostVarsFile writes host_vars/<server> as tripleo-common's Jinja
// template (host_var_server.j2) does: the server's deployment lists under
// pre_network_<Role>, pre_deployments_<Role> and post_deployments_<Role>,
// then its AnsibleHostVarsMap entry (YAML) when the stack has that output.
func hostVarsFile(role string, preNetwork, pre, post []string, hostVars string) []byte {
	var b strings.Builder
	list := func(key string, names []string) {
		b.WriteString(key + "_" + role + ": ")
		if len(names) == 0 {
			b.WriteString(" [] ")
		}
		b.WriteString("\n")
		for _, n := range names {
			b.WriteString("  - " + n + "\n")
		}
		b.WriteString("\n")
	}
	list("pre_network", preNetwork)
	list("pre_deployments", pre)
	list("post_deployments", post)
	if hostVars != "" {
		b.WriteString("# ansible_host_vars managed by TripleO Heat Templates in puppet/role.role.j2.yaml:\n")
		b.WriteString(hostVars + "\n")
	}
	return []byte(b.String())
}
