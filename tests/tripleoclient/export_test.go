package tripleoclient

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/ephemeral-heat/ephemeral-heat/internal/passwords"
	"github.com/ephemeral-heat/ephemeral-heat/internal/workdir"
	"github.com/ephemeral-heat/ephemeral-heat/tests/tripleocommon"
)

// writeWorkDir writes what a deploy leaves that an export reads: the
// passwords (every parameter generated, then edit applied), saved outputs
// and config-download's group_vars/overcloud.json.
func writeWorkDir(t *testing.T, l workdir.Layout, edit func(pw string) string) {
	t.Helper()
	if _, err := l.Ensure(); err != nil {
		t.Fatal(err)
	}
	if _, err := passwords.Ensure(l.Passwords(), passwords.Names); err != nil {
		t.Fatal(err)
	}
	pw, err := os.ReadFile(l.Passwords())
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		l.Passwords(): edit(string(pw)),
		l.Output("EndpointMap"): "KeystoneAdmin: {host: 192.0.2.6, port: 35357, protocol: http, uri: 'http://192.0.2.6:35357'}\n" +
			"NovaPublic: {host: 203.0.113.5, port: 8774, protocol: https, uri: 'https://203.0.113.5:8774/v2.1'}\n",
		l.Output("HostsEntry"):   "\"192.0.2.10 overcloud-controller-0.localdomain overcloud-controller-0\\n192.0.2.11 overcloud-novacompute-0\"\n",
		l.Output("GlobalConfig"): "{}\n",
		l.Output("KeystoneURL"):  "http://203.0.113.5:5000\n",
		filepath.Join(l.ConfigDownload(), "group_vars", "overcloud.json"): `{"redis_vip": "192.0.2.7", "memcached_node_ips": ["192.0.2.10"],
			"oslo_messaging_rpc_node_names": ["overcloud-controller-0.internalapi"], "enabled_services": ["nova_compute"], "port": 5672, "ratio": 1.5, "off": false}`,
	}
	for p, s := range files {
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// Ours against tripleoclient's export_overcloud on the same working dir:
// the deploy's export and cell export, `overcloud export` with and without
// --no-password-excludes, a passwords file with a null, a name that is no
// password parameter and a password under parameters:, and one lacking passwords
// (the allowed differences). A tampered export is caught.
func TestExportAgainstTripleoclient(t *testing.T) {
	if err := tripleocommon.RequirePython(); err != nil {
		t.Skip(err)
	}
	ctx := context.Background()
	trees, err := Extract(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name        string
		edit        func(string) string
		wantAllowed []string
		// wantAllowedAll: without excludes (nil: as wantAllowed)
		wantAllowedAll []string
		// allNodes replaces group_vars/overcloud.json ("": the fixture's)
		allNodes string
	}{
		{name: "as deployed", edit: func(s string) string { return s }},
		{name: "overcloud.json not JSON", edit: func(s string) string { return s }, allNodes: `{"redis_vip": `},
		{name: "edited passwords file", edit: func(s string) string {
			s = strings.Replace(s, "parameter_defaults:\n", "parameters:\n  AdminPassword: from-parameters\nparameter_defaults:\n  NotAPassword: x\n", 1)
			lines := strings.Split(s, "\n")
			for i, line := range lines {
				if strings.HasPrefix(line, "  BarbicanPassword:") {
					lines[i] = "  BarbicanPassword: null"
				}
			}
			return strings.Join(lines, "\n")
		}, wantAllowed: []string{"parameters-password: AdminPassword"}},
		{name: "lacking passwords", edit: func(s string) string {
			var out []string
			for _, line := range strings.Split(s, "\n") {
				if !strings.HasPrefix(line, "  NovaPassword:") && !strings.HasPrefix(line, "  CephClusterFSID:") {
					out = append(out, line)
				}
			}
			return strings.Join(out, "\n")
		}, wantAllowed: []string{"missing-password: NovaPassword"},
			wantAllowedAll: []string{"missing-password: CephClusterFSID", "missing-password: NovaPassword"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, err := workdir.New(filepath.Join(t.TempDir(), "overcloud-deploy", "central"), "central")
			if err != nil {
				t.Fatal(err)
			}
			writeWorkDir(t, l, tc.edit)
			if tc.allNodes != "" {
				if err := os.WriteFile(filepath.Join(l.ConfigDownload(), "group_vars", "overcloud.json"), []byte(tc.allNodes), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := l.WriteExport(false); err != nil {
				t.Fatal(err)
			}
			noExcludes := filepath.Join(t.TempDir(), "central-export-all.yaml")
			if _, err := l.ExportTo(workdir.ExportOptions{File: noExcludes, NoPasswordExcludes: true}); err != nil {
				t.Fatal(err)
			}
			for _, c := range []struct {
				file             string
				excludes, filter bool
			}{
				{l.Export(), true, false},
				{l.CellExport(), true, true},
				{noExcludes, false, false},
			} {
				ref, err := RunExport(ctx, trees, l, c.excludes, c.filter)
				if err != nil {
					t.Fatal(err)
				}
				if len(ref.Stubs) > 3 {
					t.Errorf("stubs %v", ref.Stubs)
				}
				problems, allowed, err := Compare(c.file, ref)
				if err != nil {
					t.Fatal(err)
				}
				for _, p := range problems {
					t.Errorf("%s (excludes %v, filter %v): %s", filepath.Base(c.file), c.excludes, c.filter, p)
				}
				want := tc.wantAllowed
				if !c.excludes && tc.wantAllowedAll != nil {
					want = tc.wantAllowedAll
				}
				if !reflect.DeepEqual(allowed, want) {
					t.Errorf("%s: allowed differences %v, want %v", filepath.Base(c.file), allowed, want)
				}
				if pd, _ := ref.Data["parameter_defaults"].(map[string]any); c.file == l.Export() && tc.allNodes == "" && (pd["AllNodesExtraMapData"] == nil || pd["EndpointMapOverride"] == nil) {
					t.Errorf("the reference exported no AllNodesExtraMapData or EndpointMapOverride: the comparison proves little: %v", keysOf(pd))
				}
			}
			if tc.allNodes != "" {
				return
			}
			// The comparison catches a difference.
			ref, err := RunExport(ctx, trees, l, true, false)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := os.ReadFile(l.Export())
			tampered := filepath.Join(t.TempDir(), "tampered.yaml")
			os.WriteFile(tampered, []byte(strings.Replace(string(b), "redis_vip: 192.0.2.7", "redis_vip: 192.0.2.8", 1)), 0o600)
			if problems, _, _ := Compare(tampered, ref); len(problems) != 1 || !strings.Contains(problems[0], "AllNodesExtraMapData") {
				t.Errorf("a changed redis_vip: %v", problems)
			}
		})
	}
}

func keysOf(m map[string]any) []string {
	var k []string
	for n := range m {
		k = append(k, n)
	}
	return k
}
