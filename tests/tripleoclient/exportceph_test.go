package tripleoclient

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/ephemeral-heat/ephemeral-heat/internal/workdir"
	"github.com/ephemeral-heat/ephemeral-heat/tests/tripleocommon"
)

// cephFiles are a stack's Ceph files as ceph-ansible (inventory with mons
// hosts and a child group, all.yml) or cephadm (ceph_client.yml in the
// working dir) leave them.
var cephFiles = map[string]map[string]string{
	"ceph-ansible": {
		"config-download/central/global_vars.yaml": "service_net_map:\n  ceph_mon_network: storage\n",
		"config-download/central/ceph-ansible/inventory.yml": "mons:\n  hosts:\n    central-controller-1: {storage_ip: 172.16.1.12}\n" +
			"    central-controller-0: {storage_ip: 172.16.1.11}\n  children:\n    extra_mons: {}\n" +
			"extra_mons:\n  hosts:\n    central-cephstorage-0: {storage_ip: 172.16.1.20, ctlplane_ip: 192.0.2.20}\nosds:\n  hosts: {}\n",
		"config-download/central/ceph-ansible/group_vars/all.yml": "cluster: central\nfsid: 7a6c1a2e-5b7f-4a8e-9a52-0d1c3b5e9f10\n" +
			"keys:\n- {name: client.openstack, key: AQBa, caps: {mon: 'profile rbd', osd: 'profile rbd pool=vms'}, mode: '0600'}\n" +
			"- {name: client.manila, key: AQBb, caps: {mon: 'allow r'}}\n",
	},
	"cephadm": {
		"config-download/central/cephadm/cephadm_command.log": "",
		"ceph_client.yml": "tripleo_ceph_client_fsid: 2b0a1c44-9c3a-4e55-8f6e-1f6d2b9c0a77\ntripleo_ceph_client_cluster: ceph\n" +
			"external_cluster_mon_ips: '[v2:172.16.1.11:3300/0,v1:172.16.1.11:6789/0]'\n" +
			"keys:\n- {name: client.openstack, key: AQBc, caps: {mgr: 'allow *', mon: 'profile rbd'}, mode: '0600'}\n",
	},
}

// Ours against tripleoclient's export_ceph, for a stack whose Ceph
// ceph-ansible deployed and one whose cephadm did, with the cephx key of
// client.openstack and of client.manila (ceph-ansible only).
func TestExportCephAgainstTripleoclient(t *testing.T) {
	if err := tripleocommon.RequirePython(); err != nil {
		t.Skip(err)
	}
	ctx := context.Background()
	trees, err := Extract(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		kind, cephx string
	}{
		{"ceph-ansible", "openstack"},
		{"ceph-ansible", "manila"},
		{"cephadm", "openstack"},
	} {
		t.Run(tc.kind+" "+tc.cephx, func(t *testing.T) {
			l, err := workdir.New(filepath.Join(t.TempDir(), "overcloud-deploy", "central"), "central")
			if err != nil {
				t.Fatal(err)
			}
			for rel, s := range cephFiles[tc.kind] {
				p := filepath.Join(l.Dir, filepath.FromSlash(rel))
				if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := l.ExportCephTo(tc.cephx, workdir.ExportOptions{}); err != nil {
				t.Fatal(err)
			}
			ref, err := RunExportCeph(ctx, trees, l, tc.cephx)
			if err != nil {
				t.Fatal(err)
			}
			problems, allowed, err := Compare(l.CephExportDefault(), ref)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range problems {
				t.Errorf("%s", p)
			}
			if len(allowed) > 0 {
				t.Errorf("allowed differences in a Ceph export: %v", allowed)
			}
			pd, _ := ref.Data["parameter_defaults"].(map[string]any)
			if l, _ := pd["CephExternalMultiConfig"].([]any); len(l) != 1 {
				t.Errorf("tripleoclient's CephExternalMultiConfig: %v", pd)
			}
		})
	}
}
