package tht

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/ephemeral-heat/ephemeral-heat/internal/fsutil"
)

// The undercloud's ctlplane network, from python-tripleoclient's undercloud
// defaults (tripleoclient/constants.py CTLPLANE_CIDR_DEFAULT,
// CTLPLANE_GATEWAY_DEFAULT, CTLPLANE_DNS_NAMESERVERS_DEFAULT;
// tripleoclient/config/undercloud.py local_ip 192.168.24.1/24, local_mtu 1500,
// overcloud_domain_name "localdomain", subnet "ctlplane-subnet"). No packet is
// ever sent to these addresses: the servers are pre-provisioned fakes.
const (
	ctlplaneCIDR    = "192.168.24.0/24"
	ctlplaneGateway = "192.168.24.1"
	ctlplaneSubnet  = "ctlplane-subnet"
	ctlplaneMTU     = 1500
	// THT extraconfig/post_deploy/undercloud_ctlplane_network.py:
	// CLOUD_DOMAIN = 'ctlplane.' + cloud_domain + '.'.
	ctlplaneDNSDomain = "ctlplane.localdomain."
	// The undercloud's ctlplane host entry (what `getent hosts
	// <short hostname>.ctlplane` answers on an undercloud, cleaned by
	// tripleoclient/utils.py cleanup_host_entry).
	undercloudHostsEntry = "192.168.24.1 undercloud.ctlplane.localdomain undercloud.ctlplane"
	// The ctlplane VIP `overcloud network vip provision` allocates.
	ctlplaneVIP = "192.168.24.5"
)

// nodeRole is a role whose servers this workload pre-provisions, with the
// block of ctlplane addresses its indices map to (index i gets
// ctlplaneIP(ipBase+i)): an address depends on the role and the index only,
// so it survives scaling another role or removing an index.
//
// With network isolation a node's address in each isolated subnet (a /24)
// is at isoBase+index, a block of its own per role within that subnet,
// up to isoMaxIndex.
//
// An optional role is left out of the node environment while it has no
// node (Controller and Compute always have one). Other roles (Options.Roles
// and RoleCounts) get the blocks layoutRoles gives them, between
// Compute's and CephStorage's.
type nodeRole struct {
	name     string
	ipBase   int
	maxIndex int // highest index that still has an address
	isoBase  int
	// isoMaxIndex is the highest index that has an isolated address.
	isoMaxIndex int
	optional    bool
}

var nodeRoles = []nodeRole{
	{name: "Controller", ipBase: 10, maxIndex: 19, isoBase: 10, isoMaxIndex: 19}, // .10-.29
	{name: "Compute", ipBase: 30, maxIndex: 1899, isoBase: 30, isoMaxIndex: 149}, // 192.168.24.30 up to 192.168.31.137; isolated .30-.179
	{name: "CephStorage", ipBase: 2030, maxIndex: 15, isoBase: 220, isoMaxIndex: 29, // 192.168.31.238-.253; isolated .220-.249
		optional: true},
}

// ctlplaneWideCIDR is the ctlplane of a workload with more nodes than the
// undercloud's default /24 holds (large sites give the ctlplane a wider
// subnet): 192.168.24.0/21. A workload that fits keeps the /24.
const ctlplaneWideCIDR = "192.168.24.0/21"

// ctlplaneNet is the ctlplane CIDR for nodes up to ctlplane offset maxOffset
// (ipBase+index): the default /24 while it holds them.
func ctlplaneNet(maxOffset int) (cidr, prefix string) {
	if maxOffset <= 254 {
		return ctlplaneCIDR, "/24"
	}
	return ctlplaneWideCIDR, "/21"
}

// ctlplaneIP is the address at offset from 192.168.24.0 (within the /21).
func ctlplaneIP(offset int) string {
	return fmt.Sprintf("192.168.%d.%d", 24+offset/256, offset%256)
}

// maxCtlplaneOffset is the highest ctlplane offset counts and removed
// indices of roles use.
func maxCtlplaneOffset(roles []nodeRole, counts map[string]int, removed map[string][]int) int {
	m := 0
	for _, nr := range roles {
		if total := counts[nr.name] + len(removed[nr.name]); total > 0 && nr.ipBase+total-1 > m {
			m = nr.ipBase + total - 1
		}
	}
	return m
}

// hostnameFormat is tripleo-ansible's default
// (tripleo_ansible/ansible_plugins/module_utils/baremetal_deploy.py
// build_hostname_format): '%stackname%-<novacompute|role lower>-%index%'.
func hostnameFormat(role string) string {
	r := strings.ToLower(role)
	if role == "Compute" {
		r = "novacompute"
	}
	return "%stackname%-" + r + "-%index%"
}

// hostname is baremetal_deploy.py build_hostname.
func hostname(format string, index int, stack string) string {
	return strings.ReplaceAll(strings.ReplaceAll(format, "%index%", strconv.Itoa(index)), "%stackname%", stack)
}

// roleData is what the workload reads of roles_data.yaml.
type roleData struct {
	Name            string   `yaml:"name"`
	CountDefault    any      `yaml:"CountDefault"`
	ServicesDefault []string `yaml:"ServicesDefault"`
	Networks        any      `yaml:"networks"`
}

func readRoles(path string) ([]roleData, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var roles []roleData
	if err := yaml.Unmarshal(b, &roles); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return roles, nil
}

func readEnv(path string) (map[string]any, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	env := map[string]any{}
	if err := yaml.Unmarshal(b, &env); err != nil {
		return nil, fmt.Errorf("environment %s: %w", path, err)
	}
	return env, nil
}

// mergeEnv merges src into dst as heatclient merges environments (maps merge
// deeply, everything else is replaced).
func mergeEnv(dst, src map[string]any) {
	for k, v := range src {
		if sm, ok := v.(map[string]any); ok {
			if dm, ok := dst[k].(map[string]any); ok {
				mergeEnv(dm, sm)
				continue
			}
			cp := map[string]any{}
			mergeEnv(cp, sm)
			dst[k] = cp
			continue
		}
		dst[k] = v
	}
}

func section(env map[string]any, name string) map[string]any {
	if m, ok := env[name].(map[string]any); ok {
		return m
	}
	return map[string]any{}
}

func toInt(v any) (int, error) {
	switch x := v.(type) {
	case nil:
		return 0, nil
	case int:
		return x, nil
	default:
		return strconv.Atoi(fmt.Sprint(x))
	}
}

// enabledServices is what python-tripleoclient's build_image_params
// (v1/overcloud_deploy.py) ends up sending as <Role>Services. It takes
// tripleo-common's get_enabled_services (tripleo_common/image/kolla_builder.py):
// for a role with a count > 0 (<Role>Count from parameter_defaults, else
// CountDefault), its <Role>Services from parameter_defaults (the rendered
// overcloud-resource-registry-puppet.yaml sets them all), else its
// ServicesDefault; [] for the other roles. Then
// container_images_prepare_multi's build_service_filter calls
// _filter_services on those very lists (the same Python objects), removing in
// place every service the registry maps to OS::Heat::None: that is what is
// sent (unless --disable-container-prepare, which returns before).
func enabledServices(env map[string]any, roles []roleData) (map[string]any, error) {
	pd := section(env, "parameter_defaults")
	rr := section(env, "resource_registry")
	out := map[string]any{}
	for _, r := range roles {
		cv, ok := pd[r.Name+"Count"]
		if !ok {
			cv = r.CountDefault
		}
		count, err := toInt(cv)
		if err != nil {
			return nil, fmt.Errorf("unable to convert %sCount to an int: %v", r.Name, cv)
		}
		param := r.Name + "Services"
		if count <= 0 {
			out[param] = []string{}
			continue
		}
		var services []any
		if l, ok := pd[param].([]any); ok {
			services = l
		} else if pd[param] != nil {
			return nil, fmt.Errorf("parameter_defaults %s is not a list: %v", param, pd[param])
		} else {
			for _, svc := range r.ServicesDefault {
				services = append(services, svc)
			}
		}
		kept := []string{}
		for _, svc := range services {
			name := fmt.Sprint(svc)
			if rr[name] != "OS::Heat::None" {
				kept = append(kept, name)
			}
		}
		out[param] = kept
	}
	return out, nil
}

// ctlplaneAttributes is what python-tripleoclient tripleoclient/utils.py
// get_ctlplane_attrs reads from the undercloud's neutron: the ctlplane
// network (its tags are its subnets' CIDRs: THT
// extraconfig/post_deploy/undercloud_ctlplane_network.py) and each subnet.
func ctlplaneAttributes(cidr string) map[string]any {
	return map[string]any{
		"network": map[string]any{
			"name":       "ctlplane",
			"mtu":        ctlplaneMTU,
			"dns_domain": ctlplaneDNSDomain,
			"tags":       []string{cidr},
		},
		"subnets": map[string]any{
			ctlplaneSubnet: map[string]any{
				"name":            ctlplaneSubnet,
				"cidr":            cidr,
				"gateway_ip":      ctlplaneGateway,
				"host_routes":     []any{},
				"dns_nameservers": []any{},
				"ip_version":      4,
			},
		},
	}
}

// vipEnvironment is what tripleo-ansible's
// tripleo_overcloud_network_vip_populate_environment writes for the ctlplane
// VIP alone (network isolation off): the deployed VIP port template
// (REGISTRY_KEY_TPL / PORT_PATH_TPL), ControlPlaneVipData from the port
// (add_ctlplane_vip_to_env; the port name is 'control' + NET_VIP_SUFFIX
// from tripleo_overcloud_network_vip_provision.py and
// module_utils/network_data_v2.py; the network tags are the ctlplane CIDRs,
// from which overcloud.yaml derives CtlplaneNetworkCidrs) and an empty
// VipPortMap.
func vipEnvironment(tree, cidr string) map[string]any {
	return map[string]any{
		"resource_registry": map[string]any{
			"OS::TripleO::Network::Ports::ControlPlaneVipPort": filepath.Join(tree, "network", "ports", "deployed_vip_ctlplane.yaml"),
		},
		"parameter_defaults": map[string]any{
			"VipPortMap": map[string]any{},
			"ControlPlaneVipData": map[string]any{
				"name":      "control_virtual_ip",
				"network":   map[string]any{"tags": []string{cidr}},
				"subnets":   []any{map[string]any{"ip_version": 4}},
				"fixed_ips": []any{map[string]any{"ip_address": ctlplaneVIP}},
			},
		},
	}
}

// nodeEnvironment is what `overcloud node provision` writes for
// pre-provisioned (unmanaged) servers, and the hosts it describes:
//   - baremetal_deploy.py expand: HostnameMap (each generated name to
//     itself), <Role>HostnameFormat, <Role>Count (provisioned instances),
//     <Role>RemovalPolicies [{resource_list: [indices]}] for instances listed
//     with provisioned: false (removed ones keep their names in HostnameMap);
//   - baremetal_deploy.py populate_environment: the
//     OS::TripleO::DeployedServer::ControlPlanePort registry entry;
//   - tripleo_unmanaged_populate_environment.py: DeployedServerPortMap
//     {<hostname>-ctlplane: {fixed_ips: [{ip_address}]}};
//   - tripleo_network_ports_populate_environment.py: NodePortMap (here the
//     ctlplane entries only, as tripleo_overcloud_network_ports.py
//     generate_node_port_map shapes them).
//
// With iso (network isolation), each host also gets its role's isolated
// ports (isolation.addPorts).
func nodeEnvironment(tree, stack string, roles []nodeRole, counts map[string]int, removed map[string][]int, iso *isolation) (map[string]any, []Host, error) {
	rr := map[string]any{
		"OS::TripleO::DeployedServer::ControlPlanePort": filepath.Join(tree, "deployed-server", "deployed-neutron-port.yaml"),
	}
	pd := map[string]any{}
	hostnameMap := map[string]any{}
	portMap := map[string]any{}
	nodePortMap := map[string]any{}
	var hosts []Host
	_, prefix := ctlplaneNet(maxCtlplaneOffset(roles, counts, removed))
	for _, nr := range roles {
		count := counts[nr.name]
		if nr.optional && count == 0 && len(removed[nr.name]) == 0 {
			continue
		}
		gone := map[int]bool{}
		for _, i := range removed[nr.name] {
			if i < 0 || gone[i] {
				return nil, nil, fmt.Errorf("removed %s indices %v: each must be a distinct index >= 0", nr.name, removed[nr.name])
			}
			gone[i] = true
		}
		total := count + len(gone)
		for i := range gone {
			if i >= total {
				return nil, nil, fmt.Errorf("removed %s index %d: with %d %s nodes left and %d removed, indices go up to %d", nr.name, i, count, nr.name, len(gone), total-1)
			}
		}
		if total-1 > nr.maxIndex {
			return nil, nil, fmt.Errorf("%d %s nodes: this workload gives ctlplane addresses to %s indices 0-%d only", total, nr.name, nr.name, nr.maxIndex)
		}
		format := hostnameFormat(nr.name)
		pd[nr.name+"HostnameFormat"] = format
		pd[nr.name+"Count"] = count
		var policy []int
		for i := 0; i < total; i++ {
			name := hostname(format, i, stack)
			hostnameMap[name] = name
			if gone[i] {
				policy = append(policy, i)
				continue
			}
			ip := ctlplaneIP(nr.ipBase + i)
			h := Host{Name: name, Role: nr.name, Index: i, CtlplaneIP: ip}
			portMap[name+"-ctlplane"] = map[string]any{"fixed_ips": []any{map[string]any{"ip_address": ip}}}
			node := map[string]any{"ctlplane": map[string]any{
				"ip_address": ip, "ip_subnet": ip + prefix, "ip_address_uri": ip}}
			if iso != nil {
				if i > nr.isoMaxIndex {
					return nil, nil, fmt.Errorf("%d %s nodes: with network isolation this workload gives isolated addresses to %s indices 0-%d only", total, nr.name, nr.name, nr.isoMaxIndex)
				}
				if err := iso.addPorts(rr, tree, nr.name, nr.isoBase+i, node, &h); err != nil {
					return nil, nil, err
				}
			}
			nodePortMap[name] = node
			hosts = append(hosts, h)
		}
		if len(policy) > 0 {
			pd[nr.name+"RemovalPolicies"] = []any{map[string]any{"resource_list": policy}}
		}
	}
	pd["HostnameMap"] = hostnameMap
	pd["DeployedServerPortMap"] = portMap
	pd["NodePortMap"] = nodePortMap
	env := map[string]any{"resource_registry": rr, "parameter_defaults": pd}
	return env, hosts, nil
}

// writeYAML writes v as YAML with a comment header, atomically, leaving an
// identical file untouched.
func writeYAML(path, header string, v any, mode os.FileMode) error {
	b, err := yaml.Marshal(v)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return writeChanged(path, append([]byte("# "+strings.ReplaceAll(header, "\n", "\n# ")+"\n"), b...), mode)
}

// writeChanged writes data to path atomically, leaving an identical file
// (content and mode) untouched.
func writeChanged(path string, data []byte, mode os.FileMode) error {
	if fsutil.SameContent(path, data, mode) {
		return nil
	}
	return fsutil.WriteFileAtomic(path, data, mode)
}

func sortedKeys[M ~map[string]V, V any](m M) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
