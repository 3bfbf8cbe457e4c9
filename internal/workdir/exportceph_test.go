package workdir

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// ExportCeph reads ceph-ansible's or cephadm's files as export_ceph does
// (cephadm's win when both are there); a stack without either, or without
// the key asked for, is refused naming what is missing.
func TestExportCeph(t *testing.T) {
	ansible := map[string]string{
		"config-download/s/global_vars.yaml":                "service_net_map: {ceph_mon_network: storage}\n",
		"config-download/s/ceph-ansible/inventory.yml":      "mons:\n  hosts:\n    b: {storage_ip: 10.0.0.2}\n    a: {storage_ip: 10.0.0.1}\n  children: {more: {}}\nmore:\n  hosts:\n    c: {storage_ip: 10.0.0.3}\n",
		"config-download/s/ceph-ansible/group_vars/all.yml": "cluster: c1\nfsid: f1\nkeys: [{name: client.openstack, key: K1}]\n",
	}
	cephadm := map[string]string{
		"config-download/s/cephadm/x": "",
		"ceph_client.yml":             "tripleo_ceph_client_cluster: c2\ntripleo_ceph_client_fsid: f2\nexternal_cluster_mon_ips: 10.0.0.9\nkeys: [{name: client.openstack, key: K2}]\n",
	}
	merge := func(ms ...map[string]string) map[string]string {
		out := map[string]string{}
		for _, m := range ms {
			for k, v := range m {
				out[k] = v
			}
		}
		return out
	}
	for _, tc := range []struct {
		name    string
		files   map[string]string
		cephx   string
		want    CephExport
		wantErr string
	}{
		{name: "ceph-ansible", files: ansible, cephx: "openstack", want: CephExport{
			"external_cluster_mon_ips": "10.0.0.2,10.0.0.1,10.0.0.3", "keys": []any{map[string]any{"name": "client.openstack", "key": "K1"}},
			"ceph_conf_overrides": map[string]any{"client": map[string]any{"keyring": "/etc/ceph/c1.client.openstack.keyring"}},
			"cluster":             "c1", "fsid": "f1", "dashboard_enabled": false}},
		{name: "both: cephadm's", files: merge(ansible, cephadm), cephx: "openstack", want: CephExport{
			"external_cluster_mon_ips": "10.0.0.9", "keys": []any{map[string]any{"name": "client.openstack", "key": "K2"}},
			"ceph_conf_overrides": map[string]any{"client": map[string]any{"keyring": "/etc/ceph/c2.client.openstack.keyring"}},
			"cluster":             "c2", "fsid": "f2", "dashboard_enabled": false}},
		{name: "no such key", files: ansible, cephx: "manila", wantErr: `cephx_key_client_name "manila"`},
		{name: "no Ceph", files: map[string]string{"config-download/s/global_vars.yaml": "{}\n"}, cephx: "openstack", wantErr: "deployed no Ceph"},
		{name: "cephadm without ceph_client.yml", files: map[string]string{"config-download/s/cephadm/x": ""}, cephx: "openstack", wantErr: "ceph_client.yml"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, _ := New(filepath.Join(t.TempDir(), "w"), "s")
			for rel, s := range tc.files {
				p := filepath.Join(l.Dir, filepath.FromSlash(rel))
				os.MkdirAll(filepath.Dir(p), 0o700)
				if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			got, err := l.ExportCeph(tc.cephx)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %v\nwant %v", got, tc.want)
			}
		})
	}
}
