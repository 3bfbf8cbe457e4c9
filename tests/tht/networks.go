package tht

import (
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

// Network isolation (Options.NetworkIsolation): the isolated networks of
// the tree's network_data.yaml, as wallaby's network v2 commands leave them
// in the user environments, with the addresses Neutron would have given:
//   - `overcloud network provision` (tripleo-ansible's
//     tripleo_composable_network and tripleo_network_populate_environment):
//     networks-deployed.yaml, OS::TripleO::Network to
//     network/deployed_networks.yaml and DeployedNetworkEnvironment;
//   - `overcloud network vip provision`
//     (tripleo_overcloud_network_vip_populate_environment): a VipPortMap
//     entry and an OS::TripleO::Network::Ports::<Name>VipPort registry
//     entry for every network with vip: true (THT's
//     vip-data-default-network-isolation.yaml);
//   - `overcloud node provision` with its network ports
//     (tripleo_overcloud_network_ports generate_node_port_map and
//     tripleo_network_ports_populate_environment): a NodePortMap entry per
//     host and network of its role (roles_data's networks), and the
//     OS::TripleO::<Role>::Ports::<Name>Port registry entries.
//
// Addresses: a network's VIP is at offset 5 in its subnet; a node gets the
// address at its role's isolated block plus its index in each subnet
// (nodeRole.isoBase), so it keeps it across scaling, as on the ctlplane.

// netData is a network of the tree's network_data.yaml (the file the
// templates were rendered with).
type netData struct {
	Name        string `yaml:"name"`
	NameLower   string `yaml:"name_lower"`
	VIP         bool   `yaml:"vip"`
	VLAN        *int   `yaml:"vlan"`
	IPSubnet    string `yaml:"ip_subnet"`
	GatewayIP   string `yaml:"gateway_ip"`
	IPv6Subnet  string `yaml:"ipv6_subnet"`
	GatewayIPv6 string `yaml:"gateway_ipv6"`
	MTU         int    `yaml:"mtu"`
	Enabled     *bool  `yaml:"enabled"`

	// prefix and gateway are the subnet used (IPv4 or, with IPv6, the
	// ipv6_ ones) and its gateway ("" for none).
	prefix  netip.Prefix
	gateway string
}

// vipOffset is the address of a network's VIP in its subnet.
const vipOffset = 5

// isolation is the isolated networks of a workload, in network_data's
// order, and each pre-provisioned role's networks (names as network_data
// gives them).
type isolation struct {
	nets     []netData
	roleNets map[string][]string
	byName   map[string]*netData
	domain   string // the overcloud's domain: "localdomain."
}

// readIsolation reads the enabled networks of networksFile and, from
// roles, the networks of each provisioned role.
//
// With ipv6 each network is its ipv6_subnet (and gateway_ipv6), as in THT's
// network-data-samples/default-network-isolation-ipv6.yaml.
func readIsolation(networksFile string, roles []roleData, provisioned []nodeRole, ipv6 bool) (*isolation, error) {
	b, err := os.ReadFile(networksFile)
	if err != nil {
		return nil, fmt.Errorf("tht: network isolation: %w", err)
	}
	var all []netData
	if err := yaml.Unmarshal(b, &all); err != nil {
		return nil, fmt.Errorf("tht: network isolation: %s: %w", networksFile, err)
	}
	iso := &isolation{roleNets: map[string][]string{}, byName: map[string]*netData{}, domain: "localdomain."}
	for _, n := range all {
		if n.Enabled != nil && !*n.Enabled {
			continue
		}
		if n.NameLower == "" {
			n.NameLower = strings.ToLower(n.Name)
		}
		if n.MTU == 0 {
			n.MTU = 1500
		}
		if ipv6 {
			p, err := netip.ParsePrefix(n.IPv6Subnet)
			if err != nil || !p.Addr().Is6() || p.Bits() > 112 {
				return nil, fmt.Errorf("tht: network isolation: %s: network %s: ipv6_subnet %q: want an IPv6 subnet of /112 or wider", networksFile, n.Name, n.IPv6Subnet)
			}
			n.prefix, n.gateway = p.Masked(), n.GatewayIPv6
		} else {
			p, err := netip.ParsePrefix(n.IPSubnet)
			if err != nil || !p.Addr().Is4() || p.Bits() > 24 {
				return nil, fmt.Errorf("tht: network isolation: %s: network %s: ip_subnet %q: want an IPv4 subnet of /24 or wider", networksFile, n.Name, n.IPSubnet)
			}
			n.prefix, n.gateway = p.Masked(), n.GatewayIP
		}
		iso.nets = append(iso.nets, n)
	}
	for i := range iso.nets {
		iso.byName[iso.nets[i].Name] = &iso.nets[i]
	}
	for _, nr := range provisioned {
		for _, r := range roles {
			if r.Name != nr.name {
				continue
			}
			names, err := roleNetworkNames(r.Networks)
			if err != nil {
				return nil, fmt.Errorf("tht: network isolation: role %s: %w", r.Name, err)
			}
			for _, name := range names {
				if iso.byName[name] == nil {
					return nil, fmt.Errorf("tht: network isolation: role %s names network %s, which %s does not enable", r.Name, name, networksFile)
				}
			}
			iso.roleNets[r.Name] = names
		}
	}
	return iso, nil
}

// roleNetworkNames reads roles_data's networks: a map of names (wallaby)
// or a list of names (earlier releases), sorted.
func roleNetworkNames(v any) ([]string, error) {
	var names []string
	switch n := v.(type) {
	case nil:
	case map[string]any:
		for k := range n {
			names = append(names, k)
		}
	case []any:
		for _, x := range n {
			s, ok := x.(string)
			if !ok {
				return nil, fmt.Errorf("networks entry %v is not a network name", x)
			}
			names = append(names, s)
		}
	default:
		return nil, fmt.Errorf("networks is %T, want a map or a list of network names", v)
	}
	sort.Strings(names)
	return names, nil
}

// addr is the address at offset in n's subnet, if the subnet holds it
// (network and broadcast addresses excluded).
func (n *netData) addr(offset int) (string, bool) {
	hostBits := n.prefix.Addr().BitLen() - n.prefix.Bits()
	if offset < 1 || hostBits < 31 && offset >= 1<<hostBits-1 {
		return "", false
	}
	b := n.prefix.Addr().AsSlice()
	carry := uint64(offset)
	for i := len(b) - 1; i >= 0 && carry > 0; i-- {
		v := uint64(b[i]) + carry
		b[i], carry = byte(v), v>>8
	}
	a, _ := netip.AddrFromSlice(b)
	return a.String(), true
}

// port is a NodePortMap or VipPortMap entry (tripleo-ansible's
// n_utils.wrap_ipv6 for the URI form).
func (n *netData) port(ip string) map[string]any {
	uri := ip
	if n.prefix.Addr().Is6() {
		uri = "[" + ip + "]"
	}
	return map[string]any{"ip_address": ip, "ip_address_uri": uri, "ip_subnet": fmt.Sprintf("%s/%d", ip, n.prefix.Bits())}
}

// version is the network's IP version.
func (n *netData) version() int {
	if n.prefix.Addr().Is6() {
		return 6
	}
	return 4
}

// networksEnvironment is networks-deployed.yaml.
func (iso *isolation) networksEnvironment(tree string) map[string]any {
	versions, cidrs, attrs := map[string]any{}, map[string]any{}, map[string]any{}
	for i, n := range iso.nets {
		tags := []any{"tripleo_network_name=" + n.Name, fmt.Sprintf("tripleo_net_idx=%d", i)}
		if n.VIP {
			tags = append(tags, "tripleo_vip=true")
		}
		vlan := 1
		if n.VLAN != nil {
			vlan = *n.VLAN
		}
		var gw any
		if n.gateway != "" {
			gw = n.gateway
		}
		subnet := n.NameLower + "_subnet"
		versions[n.NameLower] = n.version()
		cidrs[n.NameLower] = []any{n.prefix.String()}
		attrs[n.NameLower] = map[string]any{
			"network": map[string]any{"name": n.NameLower, "mtu": n.MTU,
				"dns_domain": strings.ToLower(n.Name) + "." + iso.domain, "tags": tags},
			"subnets": map[string]any{subnet: map[string]any{"name": subnet, "cidr": n.prefix.String(),
				"gateway_ip": gw, "host_routes": []any{}, "dns_nameservers": []any{}, "ip_version": n.version(),
				"tags": []any{fmt.Sprintf("tripleo_vlan_id=%d", vlan)}}},
		}
	}
	return map[string]any{
		"resource_registry": map[string]any{"OS::TripleO::Network": filepath.Join(tree, "network", "deployed_networks.yaml")},
		"parameter_defaults": map[string]any{"DeployedNetworkEnvironment": map[string]any{
			"net_ip_version_map": versions, "net_cidr_map": cidrs, "net_attributes_map": attrs}},
	}
}

// addVIPs adds the VIP of every network with vip: true to a VIP
// environment (vipEnvironment's).
func (iso *isolation) addVIPs(env map[string]any, tree string) {
	rr := env["resource_registry"].(map[string]any)
	vips := env["parameter_defaults"].(map[string]any)["VipPortMap"].(map[string]any)
	for _, n := range iso.nets {
		if !n.VIP {
			continue
		}
		ip, _ := n.addr(vipOffset)
		rr["OS::TripleO::Network::Ports::"+n.Name+"VipPort"] = filepath.Join(tree, "network", "ports", "deployed_vip_"+n.NameLower+".yaml")
		vips[n.NameLower] = n.port(ip)
	}
}

// addPorts adds the registry entries of role's ports to rr and the ports
// of the host at offset (in each subnet) to its NodePortMap entry and h.
func (iso *isolation) addPorts(rr map[string]any, tree, role string, offset int, node map[string]any, h *Host) error {
	for _, name := range iso.roleNets[role] {
		n := iso.byName[name]
		ip, ok := n.addr(offset)
		if !ok || offset == vipOffset {
			return fmt.Errorf("tht: network isolation: %s has no address at offset %d for %s (%s index %d)", n.prefix, offset, h.Name, role, h.Index)
		}
		rr["OS::TripleO::"+role+"::Ports::"+name+"Port"] = filepath.Join(tree, "network", "ports", "deployed_"+n.NameLower+".yaml")
		node[n.NameLower] = n.port(ip)
		if h.IPs == nil {
			h.IPs = map[string]string{}
		}
		h.IPs[n.NameLower] = ip
	}
	return nil
}
