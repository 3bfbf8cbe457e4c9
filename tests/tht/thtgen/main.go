// Command thtgen writes the real tripleo-heat-templates workload (package
// tests/tht) into a directory and prints the top template and the -e files,
// in order, for heat_stack, `openstack stack create` or the benchmark.
//
//	go run ./tests/tht/thtgen -dir /tmp/oc -computes 10
//	go run ./tests/tht/thtgen -dir /tmp/oc -tht-env environments/services/octavia.yaml
//	go run ./tests/tht/thtgen -dir /tmp/oc -roles Controller,Networker,Compute -role-count Networker=1
//	go run ./tests/tht/thtgen -dir /tmp/oc -json
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/ephemeral-heat/ephemeral-heat/tests/tht"
)

type countFlag map[string]int

func (c countFlag) String() string { return fmt.Sprint(map[string]int(c)) }

func (c countFlag) Set(v string) error {
	role, n, ok := strings.Cut(v, "=")
	i, err := strconv.Atoi(n)
	if !ok || err != nil || role == "" {
		return fmt.Errorf("want ROLE=COUNT (e.g. Networker=1), got %q", v)
	}
	c[role] = i
	return nil
}

type removedFlag map[string][]int

func (r removedFlag) String() string { return fmt.Sprint(map[string][]int(r)) }

func (r removedFlag) Set(v string) error {
	role, idx, ok := strings.Cut(v, ":")
	i, err := strconv.Atoi(idx)
	if !ok || err != nil || role == "" {
		return fmt.Errorf("want ROLE:INDEX (e.g. Compute:1), got %q", v)
	}
	r[role] = append(r[role], i)
	return nil
}

func main() {
	var o tht.Options
	removed := removedFlag{}
	roleCounts := countFlag{}
	var roles string
	var extra, treeEnvs multiFlag
	asJSON := flag.Bool("json", false, "print the whole workload (template, environments, hosts, timings) as JSON")
	flag.StringVar(&o.WorkDir, "dir", "", "work directory to write into (required; created 0700)")
	flag.StringVar(&o.THT, "tht", "", "tripleo-heat-templates directory or .tar.gz (default $"+tht.EnvTHT+", else ../shared/reference/"+tht.THTTarball+")")
	flag.StringVar(&o.TripleoCommon, "tripleo-common", "", "tripleo-common directory or .tar.gz (default $"+tht.EnvTripleoCommon+", else ../shared/reference/"+tht.TripleoCommonTarball+")")
	flag.IntVar(&o.ControllerCount, "controllers", 0, fmt.Sprintf("Controller nodes (0: %d, or none when -roles has no Controller)", tht.DefaultControllerCount))
	flag.IntVar(&o.ComputeCount, "computes", 0, fmt.Sprintf("Compute nodes (0: %d, or none when -roles has no Compute)", tht.DefaultComputeCount))
	flag.IntVar(&o.CephStorageCount, "ceph-storage", 0, "CephStorage nodes")
	flag.StringVar(&o.StackName, "stack", tht.DefaultStackName, "stack name")
	flag.Int64Var(&o.DeployIdentifier, "deploy-identifier", tht.DefaultDeployIdentifier, "DeployIdentifier")
	flag.StringVar(&roles, "roles", "", "roles to generate from the tree's roles/, comma-separated, as `openstack overcloud roles generate` takes them (e.g. Controller,Networker,Compute,Compute:ComputeLeaf1); default the tree's roles_data.yaml")
	flag.Var(roleCounts, "role-count", "ROLE=COUNT: the nodes of a role of -roles, or of Controller, Compute or CephStorage, winning over their flags (Compute=0: none) (repeatable)")
	flag.Var(removed, "removed", "ROLE:INDEX of a node removed by a scale-down (repeatable)")
	flag.BoolVar(&o.NetworkIsolation, "network-isolation", false, "provision the tree's isolated networks (network_data.yaml): networks, VIPs and each node's ports, as wallaby's network v2 commands write them")
	flag.BoolVar(&o.IPv6, "ipv6", false, "with -network-isolation, IPv6 isolated networks (each network's ipv6_subnet)")
	flag.Var(&treeEnvs, "tht-env", "environment of the rendered tree, by path from its root (e.g. environments/services/octavia.yaml), before the -e files (repeatable)")
	flag.Var(&extra, "e", "extra environment file, last (repeatable)")
	flag.Parse()
	if o.WorkDir == "" || flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "usage: thtgen -dir DIR [flags]")
		flag.PrintDefaults()
		os.Exit(2)
	}
	o.Removed = removed
	o.RoleCounts = roleCounts
	if roles != "" {
		o.Roles = strings.Split(roles, ",")
	}
	o.THTEnvironments = treeEnvs
	o.ExtraEnvironments = extra
	w, err := tht.Generate(o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "thtgen:", err)
		os.Exit(1)
	}
	if *asJSON {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(w); err != nil {
			fmt.Fprintln(os.Stderr, "thtgen:", err)
			os.Exit(1)
		}
		return
	}
	fmt.Printf("--template %s", w.Template)
	for _, e := range w.EnvironmentFiles {
		fmt.Printf(" \\\n  -e %s", e)
	}
	fmt.Println()
}

type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }
