// Package passwords generates and keeps the passwords of an overcloud as
// TripleO stable/wallaby does: the parameter names of tripleo-common's
// PASSWORD_PARAMETER_NAMES, each generated as tripleo_common/utils/
// passwords.py generate_passwords does, kept in a passwords file that
// python-tripleoclient's v1/overcloud_deploy.py _update_parameters writes
// (yaml {parameter_defaults: {NAME: value}}, mode 0600) and reads back on the
// next deploy: a password in the file is never generated anew.
package passwords

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sort"

	"gopkg.in/yaml.v3"

	"github.com/ephemeral-heat/ephemeral-heat/internal/yamlsafe"

	"github.com/ephemeral-heat/ephemeral-heat/internal/fsutil"
)

// Names is tripleo-common stable/wallaby's PASSWORD_PARAMETER_NAMES
// (tripleo_common/constants.py, commit ac81089329a3), in its order: the
// parameters `openstack overcloud deploy` generates a password for. A test
// holds it against the reference tarball.
var Names = []string{
	"AdminPassword", "AdminToken", "AodhPassword", "BarbicanPassword", "BarbicanSimpleCryptoKek",
	"CeilometerMeteringSecret", "CeilometerPassword", "CephClientKey", "CephClusterFSID",
	"CephManilaClientKey", "CephRgwKey", "CephGrafanaAdminPassword", "CephDashboardAdminPassword",
	"CinderPassword", "CongressPassword", "DesignatePassword", "DesignateRndcKey", "Ec2ApiPassword",
	"EtcdInitialClusterToken", "GlancePassword", "GnocchiPassword", "HAProxyStatsPassword",
	"HeatAuthEncryptionKey", "HeatPassword", "HeatStackDomainAdminPassword", "HorizonSecret",
	"IronicPassword", "LibvirtTLSPassword", "KeystoneCredential0", "KeystoneCredential1",
	"KeystoneFernetKey0", "KeystoneFernetKey1", "KeystoneFernetKeys", "ManilaPassword",
	"MysqlClustercheckPassword", "MysqlMariabackupPassword", "MysqlRootPassword",
	"NeutronMetadataProxySharedSecret", "NeutronPassword", "NovaPassword", "NovajoinPassword",
	"MigrationSshKey", "OctaviaServerCertsKeyPassphrase", "OctaviaCaKeyPassphrase", "OctaviaHeartbeatKey",
	"OctaviaPassword", "PacemakerRemoteAuthkey", "PankoPassword", "PcsdPassword", "PlacementPassword",
	"RpcPassword", "NotifyPassword", "RabbitCookie", "RabbitPassword", "RedisPassword", "SaharaPassword",
	"SnmpdReadonlyUserPassword", "SwiftHashSuffix", "SwiftPassword",
}

// Set is the outcome of Ensure or Plan.
type Set struct {
	// Values are the passwords, by parameter name (exactly the names asked).
	Values map[string]any
	// Kept lists the names whose value came from the file; Generated the
	// names generated now; Dropped the names the file's parameter_defaults
	// had that were not asked (tripleoclient's file holds exactly
	// generate_passwords' result; its parameters section is kept whole).
	Kept, Generated, Dropped []string
	// Content is the file's new content (yaml).
	Content []byte
	// Changed is true when the file is (or would be) written: a password
	// generated or dropped, or the file missing or not mode 0600.
	Changed bool
}

// fileLimit bounds a passwords file (its largest values, the SSH key and
// the Pacemaker key, take a few KiB).
var fileLimit = fsutil.Limit{Bytes: 16 << 20}

// file is a passwords file as read.
type file struct {
	// root is its top-level mapping (nil for no file or an empty one).
	root *yaml.Node
	// params is its parameters section (nil when it has none), defaults its
	// parameter_defaults.
	params, defaults map[string]any
}

// readFile reads a passwords file through the bounded reader (a FIFO, a
// device or a huge file is refused, never read) and checks its form: a
// mapping whose parameters and parameter_defaults are mappings of names.
// No message quotes the file: its values are secrets (a YAML error says
// the line and what is wrong; a wrong form, the key and its line).
func readFile(path string) (*file, error) {
	f := &file{defaults: map[string]any{}}
	b, err := fsutil.ReadOwn(path, fileLimit, "passwords file")
	if errors.Is(err, fs.ErrNotExist) {
		return f, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the passwords: %w", err)
	}
	refuse := func(format string, args ...any) error {
		return fmt.Errorf("passwords file %s: %s: it must be an environment {parameter_defaults: {NAME: value}} "+
			"(parameters: is read too, and wins, as in Heat); fix it, or move it away to generate new passwords", path, fmt.Sprintf(format, args...))
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return nil, refuse("it is not valid YAML (%s)", yamlsafe.ErrorText(err))
	}
	if len(doc.Content) == 0 {
		return f, nil // empty: no password yet
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return nil, refuse("line %d: the file is %s, not a mapping", root.Line, yamlsafe.KindName(root))
	}
	seen := map[string]int{}
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			return nil, refuse("line %d: a top-level key is %s, not a name", k.Line, yamlsafe.KindName(k))
		}
		if prev, dup := seen[k.Value]; dup {
			return nil, refuse("line %d: %s is there twice (line %d too)", k.Line, k.Value, prev)
		}
		seen[k.Value] = k.Line
		if k.Value != "parameters" && k.Value != "parameter_defaults" {
			continue
		}
		m, err := section(k.Value, v)
		if err != nil {
			return nil, refuse("%v", err)
		}
		if k.Value == "parameters" {
			f.params = m
		} else {
			f.defaults = m
		}
	}
	f.root = root
	return f, nil
}

// section reads a parameters or parameter_defaults mapping (a null is an
// empty one).
func section(name string, n *yaml.Node) (map[string]any, error) {
	m := map[string]any{}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return m, nil
	}
	if n.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("line %d: %s is %s, not a mapping of names to values", n.Line, name, yamlsafe.KindName(n))
	}
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i]
		if k.Kind != yaml.ScalarNode {
			return nil, fmt.Errorf("line %d: a key of %s is %s, not a name", k.Line, name, yamlsafe.KindName(k))
		}
		if prev, dup := seen[k.Value]; dup {
			return nil, fmt.Errorf("line %d: %s.%s is there twice (line %d too)", k.Line, name, k.Value, prev)
		}
		seen[k.Value] = k.Line
		var v any
		if err := n.Content[i+1].Decode(&v); err != nil {
			return nil, fmt.Errorf("line %d: %s.%s: %s", n.Content[i+1].Line, name, k.Value, yamlsafe.ErrorText(err))
		}
		m[k.Value] = v
	}
	return m, nil
}

// effective is what Heat takes of the file: parameter_defaults, with
// parameters winning where both give a value (a null gives none).
func (f *file) effective() map[string]any {
	m := map[string]any{}
	for k, v := range f.defaults {
		if v != nil {
			m[k] = v
		}
	}
	for k, v := range f.params {
		if v != nil {
			m[k] = v
		}
	}
	return m
}

// content is the file with its parameter_defaults replaced by defaults;
// every other key, parameters first of all, is kept as it was (its node,
// with its comments and layout).
func (f *file) content(defaults map[string]any) ([]byte, error) {
	if f.root == nil {
		return Marshal(defaults)
	}
	var dn yaml.Node
	if err := dn.Encode(defaults); err != nil {
		return nil, fmt.Errorf("encoding the passwords: %w", err)
	}
	root := *f.root
	root.Content = append([]*yaml.Node{}, f.root.Content...)
	replaced := false
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value == "parameter_defaults" {
			root.Content[i+1] = &dn
			replaced = true
		}
	}
	if !replaced {
		key := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: "parameter_defaults"}
		root.Content = append([]*yaml.Node{key, &dn}, root.Content...)
	}
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(&root); err != nil {
		return nil, fmt.Errorf("encoding the passwords: %w", err)
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Read returns the passwords a passwords file gives Heat: its
// parameter_defaults, with its parameters winning where both name a
// password, as Heat merges them; a missing file is an empty set.
func Read(path string) (map[string]any, error) {
	f, err := readFile(path)
	if err != nil {
		return nil, err
	}
	return f.effective(), nil
}

// Plan computes what Ensure would write: every name keeps the file's
// value when it has one (generate_passwords keeps the passwords of the
// environment it is given and rotates nothing), under parameter_defaults
// or parameters (which wins, as in Heat), and the others are generated.
// If the file is written, its parameters section and any other key stay as
// they were, and each parameter_defaults value asked stays as it was (even
// one a parameters value hides); generated values are added to
// parameter_defaults; a parameter_defaults name not asked is dropped, and
// said (Dropped). Nothing is written.
func Plan(path string, names []string) (*Set, error) {
	f, err := readFile(path)
	if err != nil {
		return nil, err
	}
	existing := f.effective()
	s := &Set{Values: map[string]any{}, Kept: []string{}, Generated: []string{}, Dropped: []string{}}
	defaults := map[string]any{}
	asked := map[string]bool{}
	for _, n := range names {
		if asked[n] {
			continue
		}
		asked[n] = true
		if v, ok := f.defaults[n]; ok && v != nil {
			defaults[n] = v
		}
		if v, ok := existing[n]; ok {
			s.Values[n] = v
			s.Kept = append(s.Kept, n)
			continue
		}
		v, err := Generate(n)
		if err != nil {
			return nil, fmt.Errorf("generating %s: %w", n, err)
		}
		s.Values[n] = v
		defaults[n] = v
		s.Generated = append(s.Generated, n)
	}
	for n := range f.defaults {
		if !asked[n] {
			s.Dropped = append(s.Dropped, n)
		}
	}
	sort.Strings(s.Dropped)
	if s.Content, err = f.content(defaults); err != nil {
		return nil, err
	}
	// A file that already holds exactly these passwords is left as it is,
	// whoever wrote it (PyYAML lays it out differently), unless its mode is
	// not 0600.
	s.Changed = len(s.Generated) > 0 || len(s.Dropped) > 0
	if st, err := os.Lstat(path); err != nil || st.Mode().Perm() != fsutil.SecretFileMode {
		s.Changed = true
	}
	return s, nil
}

// Ensure is Plan, then writes the file (atomically, mode 0600) when it
// changes.
func Ensure(path string, names []string) (*Set, error) {
	s, err := Plan(path, names)
	if err != nil || !s.Changed {
		return s, err
	}
	if err := fsutil.WriteFileAtomic(path, s.Content, fsutil.SecretFileMode); err != nil {
		return nil, fmt.Errorf("writing the passwords file: %w", err)
	}
	return s, nil
}

// Marshal is the passwords file's content for values: the environment
// {parameter_defaults: values}, keys sorted (as yaml.safe_dump writes it).
func Marshal(values map[string]any) ([]byte, error) {
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(map[string]any{"parameter_defaults": values}); err != nil {
		return nil, fmt.Errorf("encoding the passwords: %w", err)
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Sections returns a passwords file's parameter_defaults as written (a
// null value stays nil; what tripleoclient's export.export_passwords hands
// generate_passwords as passwords_env) and its parameters section (nil
// when it has none). A missing file is fs.ErrNotExist.
func Sections(path string) (defaults, params map[string]any, err error) {
	if _, err := os.Lstat(path); err != nil {
		return nil, nil, fmt.Errorf("reading the passwords: %w", err)
	}
	f, err := readFile(path)
	if err != nil {
		return nil, nil, err
	}
	return f.defaults, f.params, nil
}
