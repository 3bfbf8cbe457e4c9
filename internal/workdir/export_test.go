package workdir

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// exportFixture is a working dir with a passwords file, saved outputs and
// config-download's group_vars/overcloud.json.
func exportFixture(t *testing.T) Layout {
	t.Helper()
	l, _ := New(filepath.Join(t.TempDir(), "w"), "overcloud")
	for p, s := range map[string]string{
		l.Passwords(): "parameter_defaults:\n  AdminPassword: a\n  CephClusterFSID: f\n  CephClientKey: k\n" +
			"  RabbitPassword: r\n  NotAPassword: x\n  NovaPassword: null\n",
		l.Output("EndpointMap"):   "KeystonePublic: {host: 192.0.2.5}\n",
		l.Output("HostsEntry"):    "\"192.0.2.5 overcloud.localdomain\"\n",
		l.Output("GlobalConfig"):  "{}\n",
		l.Output("AuthCloudName"): "central\n",
		filepath.Join(l.ConfigDownload(), "group_vars", "overcloud.json"): `{"redis_vip": "192.0.2.7", "other": 1}`,
	} {
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return l
}

// ExportData is export_overcloud's data: the file's password parameters
// (nulls kept, non-password names dropped, Ceph ones only without
// excludes), the outputs that are truthy, AuthCloudName from its output.
func TestExportData(t *testing.T) {
	l := exportFixture(t)
	for _, tc := range []struct {
		name             string
		excludes, filter bool
		want             map[string]any
	}{
		{"excludes", true, false, map[string]any{
			"AdminPassword": "a", "RabbitPassword": "r", "NovaPassword": nil,
			"EndpointMapOverride":  map[string]any{"KeystonePublic": map[string]any{"host": "192.0.2.5"}},
			"ExtraHostFileEntries": "192.0.2.5 overcloud.localdomain",
			"AllNodesExtraMapData": map[string]any{"redis_vip": "192.0.2.7", "other": 1.0},
			"AuthCloudName":        "central", "AddVipsToEtcHosts": false}},
		{"no excludes", false, false, map[string]any{
			"AdminPassword": "a", "RabbitPassword": "r", "NovaPassword": nil, "CephClusterFSID": "f", "CephClientKey": "k",
			"EndpointMapOverride":  map[string]any{"KeystonePublic": map[string]any{"host": "192.0.2.5"}},
			"ExtraHostFileEntries": "192.0.2.5 overcloud.localdomain",
			"AllNodesExtraMapData": map[string]any{"redis_vip": "192.0.2.7", "other": 1.0},
			"AuthCloudName":        "central", "AddVipsToEtcHosts": false}},
		{"cell", true, true, map[string]any{
			"AdminPassword": "a", "RabbitPassword": "r", "NovaPassword": nil,
			"EndpointMapOverride":  map[string]any{"KeystonePublic": map[string]any{"host": "192.0.2.5"}},
			"ExtraHostFileEntries": "192.0.2.5 overcloud.localdomain",
			"AllNodesExtraMapData": map[string]any{"redis_vip": "192.0.2.7"},
			"AuthCloudName":        "central", "AddVipsToEtcHosts": false}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, skipped, err := l.ExportData(tc.excludes, tc.filter)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got["parameter_defaults"], tc.want) {
				t.Errorf("got %v\nwant %v", got["parameter_defaults"], tc.want)
			}
			if skipped["GlobalConfigExtraMapData"] == "" || !strings.Contains(skipped["passwords"], "KeystoneFernetKeys") {
				t.Errorf("skipped %v", skipped)
			}
		})
	}
}

// ExportTo writes the export file; an existing one that differs is
// replaced only with Force; one holding this very export is left alone
// (changed false); check mode writes nothing; a symlink is refused.
func TestExportTo(t *testing.T) {
	l := exportFixture(t)
	other := filepath.Join(t.TempDir(), "sub", "dcn-import.yaml")
	steps := []struct {
		name        string
		o           ExportOptions
		prepare     func()
		wantChanged bool
		wantErr     string
		wantCeph    bool
	}{
		{name: "check, new file", o: ExportOptions{Check: true}, wantChanged: true},
		{name: "new file", wantChanged: true},
		{name: "same again", wantChanged: false},
		{name: "same again, force", o: ExportOptions{Force: true}, wantChanged: false},
		{name: "another export without force", o: ExportOptions{NoPasswordExcludes: true}, wantErr: "already exists"},
		{name: "check of another export with force", o: ExportOptions{NoPasswordExcludes: true, Force: true, Check: true}, wantChanged: true},
		{name: "another export with force", o: ExportOptions{NoPasswordExcludes: true, Force: true}, wantChanged: true, wantCeph: true},
		{name: "other file", o: ExportOptions{File: other}, wantChanged: true},
		{name: "relative file", o: ExportOptions{File: "x.yaml"}, wantErr: "absolute"},
		{name: "symlink", o: ExportOptions{File: other, Force: true}, prepare: func() {
			os.Remove(other)
			os.Symlink(l.Passwords(), other)
		}, wantErr: "symlink"},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			if st.prepare != nil {
				st.prepare()
			}
			path := st.o.File
			if path == "" {
				path = l.Export()
			}
			before, _ := os.ReadFile(path)
			ex, err := l.ExportTo(st.o)
			after, _ := os.ReadFile(path)
			if st.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), st.wantErr) || !strings.Contains(err.Error(), "export_file") {
					t.Fatalf("err %v, want %q naming export_file", err, st.wantErr)
				}
				if string(before) != string(after) {
					t.Errorf("%s changed on a refusal", path)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if ex.Changed != st.wantChanged {
				t.Errorf("changed %v, want %v", ex.Changed, st.wantChanged)
			}
			if st.o.Check {
				if string(before) != string(after) {
					t.Errorf("check mode wrote %s", path)
				}
				return
			}
			var doc map[string]map[string]any
			if err := yaml.Unmarshal(after, &doc); err != nil {
				t.Fatal(err)
			}
			if _, ceph := doc["parameter_defaults"]["CephClusterFSID"]; ceph != st.wantCeph {
				t.Errorf("CephClusterFSID exported %v, want %v", ceph, st.wantCeph)
			}
			if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
				t.Errorf("mode %v", fi.Mode().Perm())
			}
		})
	}
}

// A diff of an export shows which passwords changed, never their values.
func TestRedactExport(t *testing.T) {
	a := RedactExport([]byte("parameter_defaults:\n  AdminPassword: s3cr3t\n  AuthCloudName: c\n"))
	b := RedactExport([]byte("parameter_defaults:\n  AdminPassword: other\n  AuthCloudName: c\n"))
	if strings.Contains(a+b, "s3cr3t") || strings.Contains(a+b, "other") || a == b || !strings.Contains(a, "AuthCloudName: c") {
		t.Errorf("redacted:\n%s\n%s", a, b)
	}
	c := RedactExport([]byte("parameter_defaults:\n  CephExternalMultiConfig:\n  - cluster: c\n    keys: [{name: client.openstack, key: AQBsecret}]\n"))
	if strings.Contains(c, "AQBsecret") || !strings.Contains(c, "client.openstack") {
		t.Errorf("Ceph export redacted:\n%s", c)
	}
	if got := RedactExport([]byte("AdminPassword: [")); strings.Contains(got, "AdminPassword") {
		t.Errorf("not YAML: %q", got)
	}
}

// A password under the passwords file's parameters: is exported with that
// value (Heat's); a null there leaves parameter_defaults' value.
func TestExportPasswordsParameters(t *testing.T) {
	l := exportFixture(t)
	if err := os.WriteFile(l.Passwords(), []byte("parameters:\n  AdminPassword: p\n  RabbitPassword: null\n"+
		"parameter_defaults:\n  AdminPassword: a\n  RabbitPassword: r\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	got, _, err := l.ExportData(true, false)
	if err != nil {
		t.Fatal(err)
	}
	pd := got["parameter_defaults"].(map[string]any)
	if pd["AdminPassword"] != "p" || pd["RabbitPassword"] != "r" {
		t.Errorf("AdminPassword %v, RabbitPassword %v", pd["AdminPassword"], pd["RabbitPassword"])
	}
}

// group_vars/overcloud.json that is not JSON is left out, named, as
// tripleoclient's get_parameter_file does (it logs and exports nothing).
func TestExportBadAllNodes(t *testing.T) {
	l := exportFixture(t)
	p := filepath.Join(l.ConfigDownload(), "group_vars", "overcloud.json")
	if err := os.WriteFile(p, []byte(`{"redis_vip": `), 0o600); err != nil {
		t.Fatal(err)
	}
	got, skipped, err := l.ExportData(true, false)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := got["parameter_defaults"].(map[string]any)["AllNodesExtraMapData"]; ok || !strings.Contains(skipped["AllNodesExtraMapData"], "not valid JSON") {
		t.Errorf("skipped %v", skipped)
	}
}
