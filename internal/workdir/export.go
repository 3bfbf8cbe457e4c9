package workdir

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/ephemeral-heat/ephemeral-heat/internal/fsutil"
	"github.com/ephemeral-heat/ephemeral-heat/internal/passwords"
	"github.com/ephemeral-heat/ephemeral-heat/internal/pathguard"
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
	// Before and After are the export file's content before and after
	// (ExportTo only; Before is empty for a new file).
	Before, After []byte
}

// ExportOptions are `openstack overcloud export`'s options.
type ExportOptions struct {
	// File is the export file (--output-file; "" for <stack>-export.yaml in
	// the working dir).
	File string
	// Force replaces an existing export file that differs
	// (--force-overwrite).
	Force bool
	// NoPasswordExcludes keeps the passwords EXPORT_PASSWORD_EXCLUDE_PATTERNS
	// leaves out (--no-password-excludes).
	NoPasswordExcludes bool
	// Check computes and writes nothing.
	Check bool
}

// ExportData is the content of an export as tripleoclient's
// export.export_overcloud(working_dir, stack, excludes, should_filter,
// config_download_dir) returns it, {parameter_defaults: ...}, read from
// the working dir; skipped names, per item left out, why.
func (l Layout) ExportData(excludes, filter bool) (map[string]any, map[string]string, error) {
	skipped := map[string]string{}
	data, err := l.exportPasswords(excludes, skipped)
	if err != nil {
		return nil, nil, err
	}
	for _, it := range exportData {
		var v any
		if it.file != "" {
			fv, why, err := l.configDownloadJSON(it.file)
			if err != nil {
				return nil, nil, err
			}
			if why != "" {
				skipped[it.param] = why
				continue
			}
			v = fv
		} else {
			ov, _, err := l.savedOutput(it.key)
			if err != nil {
				return nil, nil, err
			}
			if !truthy(ov) {
				skipped[it.param] = "the stack has no " + it.key + " output (or it is empty)"
				continue
			}
			v = ov
		}
		if filter && it.filter != nil {
			// Only the filter's keys, and only when the value is a mapping
			// that has one (export_stack's `filter_key in export_data`).
			m, ok := v.(map[string]any)
			if !ok {
				return nil, nil, fmt.Errorf("%s: the value exported as %s is %T, not a mapping: tripleoclient's cell export filters its keys", it.file, it.param, v)
			}
			kept := map[string]any{}
			for _, k := range it.filter {
				if e, ok := m[k]; ok {
					kept[k] = e
				}
			}
			if len(kept) == 0 {
				skipped[it.param] = "none of the cell export's keys is in " + it.file
				continue
			}
			v = kept
		}
		data[it.param] = v
	}
	// AuthCloudName: the saved output, else the stack's name.
	if v, _, err := l.savedOutput("AuthCloudName"); err != nil {
		return nil, nil, err
	} else if truthy(v) {
		data["AuthCloudName"] = v
	} else {
		data["AuthCloudName"] = l.Stack
	}
	data["AddVipsToEtcHosts"] = false
	return map[string]any{"parameter_defaults": data}, skipped, nil
}

// WriteExport writes what tripleoclient's overcloud deploy writes after a
// stack operation (v1/overcloud_deploy.py _export_stack, mode 0600):
// <stack>-export.yaml (ExportData(true, false): the passwords but the Ceph
// ones, EndpointMapOverride, ExtraHostFileEntries and
// GlobalConfigExtraMapData from the saved outputs, AllNodesExtraMapData
// from config-download's group_vars/overcloud.json, AuthCloudName and
// AddVipsToEtcHosts: false, under parameter_defaults) and
// <stack>-cell-export.yaml (ExportData(true, true): AllNodesExtraMapData
// keeps only its filter's keys); and <stack>rc (workflows/deployment.py
// create_overcloudrc) from the saved KeystoneURL, KeystoneAdminVip,
// AdminPassword and KeystoneRegion. The deploy replaces them every time,
// as tripleoclient does. What the stack does not have is left out and
// named in Skipped (a stack that is not THT has no HostsEntry or
// GlobalConfig, and no rc without KeystoneURL).
func (l Layout) WriteExport(check bool) (*Export, error) {
	ex := &Export{Files: []string{}, Skipped: map[string]string{}}
	files := map[string][]byte{}
	for _, filter := range []bool{false, true} {
		data, skipped, err := l.ExportData(true, filter)
		if err != nil {
			return nil, err
		}
		path := l.Export()
		if filter {
			path = l.CellExport()
		} else {
			ex.Skipped = skipped
		}
		files[path] = yamlOf(data)
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

// ExportTo is `openstack overcloud export` (v1/overcloud_export.py): the
// export (ExportData(excludes, false)) written to o.File, mode 0600. An
// existing file is replaced only with o.Force ("File '...' already exists,
// not exporting." otherwise), but one that already holds exactly this
// export is left as it is (nothing to write: changed false, with or
// without Force). The file must be a regular file of the user (a symlink
// is never written through) in a directory pathguard accepts; missing
// parent directories are created (mode 0700).
func (l Layout) ExportTo(o ExportOptions) (*Export, error) {
	if o.File == "" {
		o.File = l.Export()
	}
	data, skipped, err := l.ExportData(!o.NoPasswordExcludes, false)
	if err != nil {
		return nil, err
	}
	return l.writeExportFile(o, yamlOf(data), skipped)
}

// writeExportFile writes content to o.File (absolute) as ExportTo
// describes.
func (l Layout) writeExportFile(o ExportOptions, content []byte, skipped map[string]string) (*Export, error) {
	const param = "export_file"
	path := o.File
	if !filepath.IsAbs(path) {
		return nil, fmt.Errorf("%s %q: give an absolute path", param, path)
	}
	path = filepath.Clean(path)
	ex := &Export{Files: []string{}, Skipped: skipped, After: content}
	exists, err := pathguard.File(param, path, "a file of yours", func(string) bool { return true })
	if err != nil {
		return nil, err
	}
	if exists {
		before, err := fsutil.ReadOwn(path, exportLimit, param)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", param, err)
		}
		ex.Before = before
		if bytes.Equal(before, ex.After) {
			if !o.Check && !fsutil.SameContent(path, ex.After, fsutil.SecretFileMode) {
				// same content, other mode: made 0600 as a write would.
				if err := fsutil.WriteFileAtomic(path, ex.After, fsutil.SecretFileMode); err != nil {
					return nil, fmt.Errorf("writing %s %s: %w", param, path, err)
				}
				ex.Files, ex.Changed = []string{path}, true
			}
			return ex, nil
		}
		if !o.Force {
			return nil, fmt.Errorf("%s %s already exists and holds another export, not exporting (tripleoclient's "+
				"\"File '%s' already exists\"): set force_overwrite: true to replace it, or give another export_file", param, path, path)
		}
	}
	ex.Files, ex.Changed = []string{path}, true
	if o.Check {
		return ex, nil
	}
	if _, err := pathguard.MkdirAll(param, filepath.Dir(path)); err != nil {
		return nil, err
	}
	if err := fsutil.WriteFileAtomic(path, ex.After, fsutil.SecretFileMode); err != nil {
		return nil, fmt.Errorf("writing %s %s: %w", param, path, err)
	}
	return ex, nil
}

// exportLimit bounds an existing export file read back for comparison.
var exportLimit = fsutil.Limit{Bytes: 64 << 20}

// exportPasswords is export.export_passwords: for each password parameter
// tripleo-common stable/wallaby generates (passwords.Names), the value the
// passwords file's parameter_defaults gives (nulls included); with
// excludes, not those EXPORT_PASSWORD_EXCLUDE_PATTERNS matches. Two
// differences, for a file an operator edited (a deploy writes every name,
// under parameter_defaults only):
//   - a name under the file's parameters: section takes that value, the
//     one Heat gives the stack (parameters win); tripleoclient reads only
//     parameter_defaults, so it exports the value Heat ignored, or one it
//     makes up;
//   - a name the file does not have is left out and said in skipped
//     (generate_passwords would make up a value the stack never had).
//
// Names of the file that are not password parameters are not exported, as
// there. (generate_passwords' RpcPassword/NotifyPassword fallback to
// RabbitPassword never applies: both are generated first.)
func (l Layout) exportPasswords(excludes bool, skipped map[string]string) (map[string]any, error) {
	defaults, params, err := passwords.Sections(l.Passwords())
	if errors.Is(err, fs.ErrNotExist) {
		skipped["passwords"] = "no passwords file " + l.Passwords() + " (password generation is off)"
		return map[string]any{}, nil
	}
	if err != nil {
		return nil, err
	}
	out := map[string]any{}
	var missing []string
	for _, name := range passwords.Names {
		v, ok := defaults[name]
		if pv, set := params[name]; set && pv != nil {
			v, ok = pv, true
		}
		if !ok {
			missing = append(missing, name)
			continue
		}
		if excludes && exportPasswordExclude.MatchString(name) {
			continue
		}
		out[name] = v
	}
	if len(missing) > 0 {
		skipped["passwords"] = fmt.Sprintf("%s lacks %d password parameter(s) (%s): deploy again to generate them",
			l.Passwords(), len(missing), strings.Join(missing, ", "))
	}
	return out, nil
}

// truthy is Python's truth of a YAML or JSON value (export_stack's `if
// export_data:`).
func truthy(v any) bool {
	switch x := v.(type) {
	case nil:
		return false
	case bool:
		return x
	case int:
		return x != 0
	case int64:
		return x != 0
	case uint64:
		return x != 0
	case float64:
		return x != 0
	case string:
		return x != ""
	case map[string]any:
		return len(x) != 0
	case []any:
		return len(x) != 0
	}
	return true
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

// configDownloadJSON reads a JSON file of config-download
// (utils.get_parameter_file); why says why there is nothing to export (no
// such file, not JSON, an empty value).
func (l Layout) configDownloadJSON(rel string) (any, string, error) {
	p := filepath.Join(l.ConfigDownload(), filepath.FromSlash(rel))
	b, err := readFile(p, "config-download file")
	if isNotExist(err) {
		return nil, "config-download has no " + rel + " (tripleo-ansible's tripleo_all_nodes_data writes it when the deploy steps run)", nil
	}
	if err != nil {
		return nil, "", err
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		// utils.get_parameter_file logs the error and exports nothing.
		return nil, fmt.Sprintf("%s is not valid JSON (%v): fix or remove it and export again", p, err), nil
	}
	if !truthy(v) {
		return nil, rel + " is empty", nil
	}
	return v, "", nil
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

// RedactExport is an export file's content for a diff: each password
// parameter's value, and each cephx key of a Ceph export, is replaced by
// the first 12 hex digits of its sha256, so that a change shows and no
// secret does. Content that is not
// an export (not YAML, no parameter_defaults mapping) is shown as its
// size only.
func RedactExport(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	var doc map[string]any
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return fmt.Sprintf("# %d bytes, not YAML\n", len(b))
	}
	pd, ok := doc["parameter_defaults"].(map[string]any)
	if !ok {
		return fmt.Sprintf("# %d bytes, no parameter_defaults mapping\n", len(b))
	}
	secret := map[string]bool{}
	for _, n := range passwords.Names {
		secret[n] = true
	}
	digest := func(v any) string {
		sum := sha256.Sum256(yamlOf(v))
		return "(secret, sha256 " + hex.EncodeToString(sum[:])[:12] + ")"
	}
	out := map[string]any{}
	for k, v := range pd {
		if secret[k] {
			v = digest(v)
		}
		out[k] = v
	}
	// A Ceph export's cephx keys.
	if cephs, ok := out["CephExternalMultiConfig"].([]any); ok {
		for _, c := range cephs {
			cm, _ := c.(map[string]any)
			keys, _ := cm["keys"].([]any)
			for _, k := range keys {
				if km, ok := k.(map[string]any); ok {
					if v, ok := km["key"]; ok {
						km["key"] = digest(v)
					}
				}
			}
		}
	}
	doc["parameter_defaults"] = out
	return string(yamlOf(doc))
}
