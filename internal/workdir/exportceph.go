package workdir

import (
	"fmt"
	"os"
	"path/filepath"

	"gopkg.in/yaml.v3"
)

// The files tripleoclient's export.export_ceph reads: ceph-ansible's,
// under config-download (written when ceph-ansible deployed the stack's
// Ceph), and tripleo_cephadm's client file in the working dir (written
// when cephadm did).
const (
	cephAnsibleDir       = "ceph-ansible"
	cephAnsibleInventory = "ceph-ansible/inventory.yml"
	cephAnsibleAll       = "ceph-ansible/group_vars/all.yml"
	cephadmDir           = "cephadm"
	cephClientFile       = "ceph_client.yml"
	globalVarsFile       = "global_vars.yaml"
)

// CephExport is one stack's entry of CephExternalMultiConfig.
type CephExport map[string]any

// CephExportDefault is `openstack overcloud export ceph`'s default output
// file for one stack (relative to where it runs; ours is in the working
// dir).
func (l Layout) CephExportDefault() string { return l.path("ceph-export-" + l.Stack + ".yaml") }

// ExportCeph is tripleoclient's export.export_ceph(stack, cephx,
// config_download_dir) on the working dir: from ceph-ansible's inventory
// (the mons' IPs on the ceph_mon_network of global_vars.yaml's
// service_net_map, mons' hosts then each child group's, in file order) and
// group_vars/all.yml (cluster, fsid, keys), or, when config-download has a
// cephadm directory, from the working dir's ceph_client.yml
// (external_cluster_mon_ips, tripleo_ceph_client_cluster and _fsid, keys);
// the key of client.<cephx>, the client keyring path, and
// dashboard_enabled false. A stack whose config-download has neither
// deployed no Ceph here: that is an error naming what is missing.
func (l Layout) ExportCeph(cephx string) (CephExport, error) {
	cd := l.ConfigDownload()
	has := func(name string) bool {
		st, err := os.Lstat(filepath.Join(cd, name))
		return err == nil && st.IsDir()
	}
	var (
		monIPs, cluster, fsid string
		keys                  []any
		found                 bool
	)
	if has(cephAnsibleDir) {
		ips, err := l.cephAnsibleMonIPs()
		if err != nil {
			return nil, err
		}
		all, err := l.cephYAML(filepath.Join(cd, filepath.FromSlash(cephAnsibleAll)))
		if err != nil {
			return nil, err
		}
		if cluster, fsid, keys, err = cephFields(all, "cluster", "fsid", filepath.Join(cd, cephAnsibleAll)); err != nil {
			return nil, err
		}
		monIPs, found = joinComma(ips), true
	}
	if has(cephadmDir) {
		p := l.path(cephClientFile)
		client, err := l.cephYAML(p)
		if err != nil {
			return nil, err
		}
		if cluster, fsid, keys, err = cephFields(client, "tripleo_ceph_client_cluster", "tripleo_ceph_client_fsid", p); err != nil {
			return nil, err
		}
		s, ok := client["external_cluster_mon_ips"].(string)
		if !ok {
			return nil, fmt.Errorf("%s: external_cluster_mon_ips is %T, not a string", p, client["external_cluster_mon_ips"])
		}
		monIPs, found = s, true
	}
	if !found {
		return nil, fmt.Errorf("config-download %s has neither %s/ nor %s/: stack %s deployed no Ceph with ceph-ansible or cephadm, there is nothing to export",
			cd, cephAnsibleDir, cephadmDir, l.Stack)
	}
	var key any
	for _, k := range keys {
		if m, ok := k.(map[string]any); ok && m["name"] == "client."+cephx {
			key = k
		}
	}
	if key == nil {
		return nil, fmt.Errorf("cephx_key_client_name %q: the stack's Ceph has no key client.%s", cephx, cephx)
	}
	return CephExport{
		"external_cluster_mon_ips": monIPs,
		"keys":                     []any{key},
		"ceph_conf_overrides":      map[string]any{"client": map[string]any{"keyring": "/etc/ceph/" + cluster + ".client." + cephx + ".keyring"}},
		"cluster":                  cluster,
		"fsid":                     fsid,
		"dashboard_enabled":        false,
	}, nil
}

// CephExportData is what `openstack overcloud export ceph` writes of
// stacks' entries: {parameter_defaults: {CephExternalMultiConfig: [...]}}.
func CephExportData(entries ...CephExport) map[string]any {
	list := make([]any, len(entries))
	for i, e := range entries {
		list[i] = map[string]any(e)
	}
	return map[string]any{"parameter_defaults": map[string]any{"CephExternalMultiConfig": list}}
}

// ExportCephTo writes CephExportData(l.ExportCeph(cephx)) to o.File
// (default CephExportDefault), as ExportTo writes an export: an existing
// file holding another export only with o.Force.
func (l Layout) ExportCephTo(cephx string, o ExportOptions) (*Export, error) {
	if o.File == "" {
		o.File = l.CephExportDefault()
	}
	e, err := l.ExportCeph(cephx)
	if err != nil {
		return nil, err
	}
	return l.writeExportFile(o, yamlOf(CephExportData(e)), map[string]string{})
}

// cephAnsibleMonIPs is export_storage_ips: the mons group's hosts' <ceph
// mon network>_ip, then its children's, recursively, in file order.
func (l Layout) cephAnsibleMonIPs() ([]string, error) {
	cd := l.ConfigDownload()
	gv, err := l.cephYAML(filepath.Join(cd, globalVarsFile))
	if err != nil {
		return nil, err
	}
	snm, _ := gv["service_net_map"].(map[string]any)
	net, ok := snm["ceph_mon_network"]
	if !ok {
		return nil, fmt.Errorf("%s: service_net_map has no ceph_mon_network", filepath.Join(cd, globalVarsFile))
	}
	key := fmt.Sprint(net) + "_ip"
	p := filepath.Join(cd, filepath.FromSlash(cephAnsibleInventory))
	b, err := readFile(p, "ceph-ansible inventory")
	if err != nil {
		return nil, err
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, fmt.Errorf("%s: not a mapping of groups", p)
	}
	groups := doc.Content[0]
	var ips []string
	var walk func(group string, depth int) error
	walk = func(group string, depth int) error {
		if depth > 32 {
			return fmt.Errorf("%s: groups nest deeper than 32 from mons (a loop?)", p)
		}
		g := mapValue(groups, group)
		if g == nil || g.Kind != yaml.MappingNode {
			return fmt.Errorf("%s: no group %s", p, group)
		}
		if hosts := mapValue(g, "hosts"); hosts != nil && hosts.Kind == yaml.MappingNode {
			for i := 0; i+1 < len(hosts.Content); i += 2 {
				hv := mapValue(hosts.Content[i+1], key)
				if hv == nil || hv.Kind != yaml.ScalarNode {
					return fmt.Errorf("%s: host %s of group %s has no %s", p, hosts.Content[i].Value, group, key)
				}
				ips = append(ips, hv.Value)
			}
		}
		if children := mapValue(g, "children"); children != nil && children.Kind == yaml.MappingNode {
			for i := 0; i+1 < len(children.Content); i += 2 {
				if err := walk(children.Content[i].Value, depth+1); err != nil {
					return err
				}
			}
		}
		return nil
	}
	return ips, walk("mons", 0)
}

// mapValue is the value of key in mapping node m (nil when absent).
func mapValue(m *yaml.Node, key string) *yaml.Node {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

// cephYAML reads a YAML mapping the Ceph export reads.
func (l Layout) cephYAML(p string) (map[string]any, error) {
	b, err := readFile(p, "Ceph file")
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := yaml.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	return m, nil
}

// cephFields are the cluster, fsid and keys of a Ceph variables file.
func cephFields(m map[string]any, clusterKey, fsidKey, p string) (cluster, fsid string, keys []any, err error) {
	cluster, ok := m[clusterKey].(string)
	if !ok {
		return "", "", nil, fmt.Errorf("%s: %s is %T, not a string", p, clusterKey, m[clusterKey])
	}
	fsid, ok = m[fsidKey].(string)
	if !ok {
		return "", "", nil, fmt.Errorf("%s: %s is %T, not a string", p, fsidKey, m[fsidKey])
	}
	keys, ok = m["keys"].([]any)
	if !ok {
		return "", "", nil, fmt.Errorf("%s: keys is %T, not a list", p, m["keys"])
	}
	return cluster, fsid, keys, nil
}

func joinComma(l []string) string {
	out := ""
	for i, s := range l {
		if i > 0 {
			out += ","
		}
		out += s
	}
	return out
}
