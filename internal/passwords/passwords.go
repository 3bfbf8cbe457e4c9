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
	// names generated now; Dropped the names the file had that were not
	// asked (tripleoclient's file holds exactly generate_passwords' result).
	Kept, Generated, Dropped []string
	// Content is the file's new content (yaml).
	Content []byte
	// Changed is true when the file is (or would be) written: a password
	// generated or dropped, or the file missing or not mode 0600.
	Changed bool
}

// Read returns the parameter_defaults of a passwords file; a missing file
// is an empty set.
func Read(path string) (map[string]any, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return map[string]any{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the passwords file: %w", err)
	}
	var doc struct {
		ParameterDefaults map[string]any `yaml:"parameter_defaults"`
	}
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("passwords file %s: %v (it must be an environment {parameter_defaults: {NAME: value}}; move it away to generate new passwords)", path, err)
	}
	if doc.ParameterDefaults == nil {
		doc.ParameterDefaults = map[string]any{}
	}
	return doc.ParameterDefaults, nil
}

// Plan computes what Ensure would write: every name keeps the file's
// value when it has one (generate_passwords keeps the passwords of the
// environment it is given and rotates nothing), the others are generated.
// Nothing is written.
func Plan(path string, names []string) (*Set, error) {
	existing, err := Read(path)
	if err != nil {
		return nil, err
	}
	s := &Set{Values: map[string]any{}, Kept: []string{}, Generated: []string{}, Dropped: []string{}}
	asked := map[string]bool{}
	for _, n := range names {
		if asked[n] {
			continue
		}
		asked[n] = true
		if v, ok := existing[n]; ok && v != nil {
			s.Values[n] = v
			s.Kept = append(s.Kept, n)
			continue
		}
		v, err := Generate(n)
		if err != nil {
			return nil, fmt.Errorf("generating %s: %w", n, err)
		}
		s.Values[n] = v
		s.Generated = append(s.Generated, n)
	}
	for n := range existing {
		if !asked[n] {
			s.Dropped = append(s.Dropped, n)
		}
	}
	sort.Strings(s.Dropped)
	if s.Content, err = Marshal(s.Values); err != nil {
		return nil, err
	}
	// A file that already holds exactly these passwords is left as it is,
	// whoever wrote it (PyYAML lays it out differently), unless its mode is
	// not 0600.
	s.Changed = len(s.Generated) > 0 || len(s.Dropped) > 0
	if st, err := os.Stat(path); err != nil || st.Mode().Perm() != fsutil.SecretFileMode {
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
