package workdir

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/ephemeral-heat/ephemeral-heat/internal/passwords"
)

// exportItem is one entry of tripleoclient's constants.EXPORT_DATA: the
// saved output (or config-download file) exported as a parameter, and the
// keys the cell export keeps of it.
type exportItem struct {
	key, param, file string
	filter           []string
}

var exportData = []exportItem{
	{key: "EndpointMap", param: "EndpointMapOverride"},
	{key: "HostsEntry", param: "ExtraHostFileEntries"},
	{key: "GlobalConfig", param: "GlobalConfigExtraMapData"},
	{key: "AllNodesConfig", param: "AllNodesExtraMapData", file: "group_vars/overcloud.json",
		filter: []string{"oslo_messaging_notify_short_bootstrap_node_name", "oslo_messaging_notify_node_names",
			"oslo_messaging_rpc_node_names", "memcached_node_ips", "ovn_dbs_vip", "ovn_dbs_node_ips", "redis_vip"}},
}

// exportPasswordExclude is constants.EXPORT_PASSWORD_EXCLUDE_PATTERNS
// (re.match, re.I): the Ceph keys stay with their stack.
var exportPasswordExclude = regexp.MustCompile(`(?i)^ceph.*`)

// Export is what an export writes.
type Export struct {
	// Files written (or that would be, in check mode).
	Files []string
	// Skipped says, per item left out, why (no passwords file, an output
	// the stack does not have, ...).
	Skipped map[string]string
	Changed bool
}

// WriteExport writes <stack>-export.yaml and <stack>-cell-export.yaml as
// tripleoclient's export.export_overcloud does (mode 0600): the passwords
// of the passwords file but the Ceph ones, EndpointMapOverride,
// ExtraHostFileEntries and GlobalConfigExtraMapData from the saved outputs,
// AllNodesExtraMapData from config-download's group_vars/overcloud.json
// (the cell export keeps only its filter's keys), AuthCloudName (the saved
// output, else the stack name) and AddVipsToEtcHosts: false, under
// parameter_defaults; and <stack>rc (workflows/deployment.py
// create_overcloudrc) from the saved KeystoneURL, KeystoneAdminVip,
// AdminPassword and KeystoneRegion. What the stack does not have is left
// out and named in Skipped (a stack that is not THT has no HostsEntry or
// GlobalConfig, and no rc without KeystoneURL).
func (l Layout) WriteExport(check bool) (*Export, error) {
	ex := &Export{Files: []string{}, Skipped: map[string]string{}}
	pw, err := l.exportPasswords(ex)
	if err != nil {
		return nil, err
	}
	outputs := map[string]any{}
	for _, it := range append(exportData, exportItem{key: "AuthCloudName"}) {
		if it.file != "" {
			continue
		}
		v, ok, err := l.savedOutput(it.key)
		if err != nil {
			return nil, err
		}
		if ok {
			outputs[it.key] = v
		}
	}
	files := map[string][]byte{}
	for _, filter := range []bool{false, true} {
		data := map[string]any{}
		for k, v := range pw {
			data[k] = v
		}
		for _, it := range exportData {
			var v any
			if it.file != "" {
				fv, why, err := l.configDownloadJSON(it.file)
				if err != nil {
					return nil, err
				}
				if why != "" {
					ex.Skipped[it.param] = why
					continue
				}
				v = fv
			} else {
				ov, ok := outputs[it.key]
				if !ok || empty(ov) {
					ex.Skipped[it.param] = "the stack has no " + it.key + " output"
					continue
				}
				v = ov
			}
			if filter && len(it.filter) > 0 {
				m, _ := v.(map[string]any)
				kept := map[string]any{}
				for _, k := range it.filter {
					if e, ok := m[k]; ok {
						kept[k] = e
					}
				}
				if len(kept) == 0 {
					continue
				}
				v = kept
			}
			data[it.param] = v
		}
		if v, ok := outputs["AuthCloudName"]; ok && !empty(v) {
			data["AuthCloudName"] = v
		} else {
			data["AuthCloudName"] = l.Stack
		}
		data["AddVipsToEtcHosts"] = false
		path := l.Export()
		if filter {
			path = l.CellExport()
		}
		files[path] = yamlOf(map[string]any{"parameter_defaults": data})
	}
	rc, why, err := l.rc()
	if err != nil {
		return nil, err
	}
	if why != "" {
		ex.Skipped["rc"] = why
	} else {
		files[l.RC()] = rc
	}
	changed, err := l.writeChanged(files, check, "writing")
	if err != nil {
		return nil, err
	}
	ex.Files = append(ex.Files, changed...)
	ex.Changed = len(changed) > 0
	return ex, nil
}

// exportPasswords are the passwords of the passwords file but the Ceph
// ones (export.export_passwords).
func (l Layout) exportPasswords(ex *Export) (map[string]any, error) {
	if _, err := os.Lstat(l.Passwords()); errors.Is(err, fs.ErrNotExist) {
		ex.Skipped["passwords"] = "no passwords file " + l.Passwords() + " (password generation is off)"
		return map[string]any{}, nil
	}
	all, err := passwords.Read(l.Passwords())
	if err != nil {
		return nil, err
	}
	out := map[string]any{}
	for k, v := range all {
		if !exportPasswordExclude.MatchString(k) {
			out[k] = v
		}
	}
	return out, nil
}

// savedOutput reads outputs/<key> (utils.get_stack_saved_output_item): ok
// is false when there is no such file.
func (l Layout) savedOutput(key string) (any, bool, error) {
	b, err := readFile(l.Output(key), "saved output")
	if isNotExist(err) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	var v any
	if err := yaml.Unmarshal(b, &v); err != nil {
		return nil, false, fmt.Errorf("saved output %s: %w", l.Output(key), err)
	}
	return v, true, nil
}

// configDownloadJSON reads a JSON file of config-download; why says why
// there is nothing to export.
func (l Layout) configDownloadJSON(rel string) (any, string, error) {
	p := filepath.Join(l.ConfigDownload(), filepath.FromSlash(rel))
	b, err := readFile(p, "config-download file")
	if isNotExist(err) {
		return nil, "config-download has no " + rel + " (tripleo-common stable/wallaby writes none)", nil
	}
	if err != nil {
		return nil, "", err
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return nil, "", fmt.Errorf("%s: %w", p, err)
	}
	if empty(v) {
		return nil, rel + " is empty", nil
	}
	return v, "", nil
}

func empty(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case string:
		return x == ""
	case map[string]any:
		return len(x) == 0
	case []any:
		return len(x) == 0
	}
	return false
}

// The rc's fixed parts (tripleo-common utils/overcloudrc.py CLEAR_ENV and
// CLOUDPROMPT).
const (
	rcClearEnv = `# Clear any old environment that may conflict.
for key in $( set | awk '{FS="="}  /^OS_/ {print $1}' ); do unset $key ; done
`
	rcCloudPrompt = `
# Add OS_CLOUD to PS1
if [ -z "${CLOUDPROMPT_ENABLED:-}" ]; then
    export PS1=${PS1:-""}
    export PS1=\${OS_CLOUD:+"(\$OS_CLOUD)"}\ $PS1
    export CLOUDPROMPT_ENABLED=1
fi
`
)

// rc is <stack>rc as tripleo-common's _create_overcloudrc_from_outputs
// writes it (no --no-proxy: tripleoclient's default ”); why says why there
// is none.
func (l Layout) rc() ([]byte, string, error) {
	endpoint, ok, err := l.savedOutput("KeystoneURL")
	if err != nil {
		return nil, "", err
	}
	ep, _ := endpoint.(string)
	if !ok || ep == "" {
		return nil, "the stack has no KeystoneURL output", nil
	}
	adminVIP, _, err := l.savedOutput("KeystoneAdminVip")
	if err != nil {
		return nil, "", err
	}
	password, _, err := l.savedOutput("AdminPassword")
	if err != nil {
		return nil, "", err
	}
	region, _, err := l.savedOutput("KeystoneRegion")
	if err != nil {
		return nil, "", err
	}
	host := ""
	if u, err := url.Parse(ep); err == nil {
		host = u.Hostname()
	}
	// no_proxy: ''.split(',') plus the endpoint's host and the admin VIP,
	// deduplicated and sorted (the empty entry first).
	set := map[string]bool{"": true, host: true}
	if s, ok := adminVIP.(string); ok {
		set[s] = true
	}
	var np []string
	for k := range set {
		np = append(np, k)
	}
	sort.Strings(np)
	pw, _ := password.(string)
	reg, _ := region.(string)
	if reg == "" {
		reg = "regionOne"
	}
	params := [][2]string{
		{"OS_USERNAME", "admin"},
		{"OS_PROJECT_NAME", "admin"},
		{"OS_USER_DOMAIN_NAME", "Default"},
		{"OS_PROJECT_DOMAIN_NAME", "Default"},
		{"OS_NO_CACHE", "True"},
		{"OS_CLOUD", l.Stack},
		{"no_proxy", strings.Join(np, ",")},
		{"PYTHONWARNINGS", "ignore:Certificate has no, ignore:A true SSLContext object is not available"},
		{"OS_AUTH_TYPE", "password"},
		{"OS_PASSWORD", pw},
		{"OS_AUTH_URL", strings.ReplaceAll(ep, "/v2.0", "")},
		{"OS_IDENTITY_API_VERSION", "3"},
		{"OS_COMPUTE_API_VERSION", "2.1"},
		{"OS_IMAGE_API_VERSION", "2"},
		{"OS_VOLUME_API_VERSION", "3"},
		{"OS_REGION_NAME", reg},
	}
	var b strings.Builder
	b.WriteString(rcClearEnv)
	for _, kv := range params {
		fmt.Fprintf(&b, "export %s=%s\n", kv[0], shellQuote(kv[1]))
	}
	b.WriteString(rcCloudPrompt)
	return []byte(b.String()), "", nil
}

var shellSafe = regexp.MustCompile(`^[A-Za-z0-9_@%+=:,./-]+$`)

// shellQuote is Python's shlex.quote.
func shellQuote(s string) string {
	if s == "" {
		return "''"
	}
	if shellSafe.MatchString(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'"'"'`) + "'"
}
