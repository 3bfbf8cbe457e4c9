package configdownload

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"sync"

	"github.com/ephemeral-heat/ephemeral-heat/internal/heatapi"
)

// DeploymentResource is the name of the resources that stand for the
// software deployments of config-download (tripleo-common's
// TRIPLEO_DEPLOYMENT_RESOURCE); NestedDepth is how deep they are looked for.
const (
	DeploymentResource = "TripleODeployment"
	NestedDepth        = 7
	// softwareDeploymentResource holds the deployment in a nested stack
	// when TripleODeployment's value names that stack instead of the
	// deployment.
	softwareDeploymentResource = "TripleOSoftwareDeployment"
	configWorkers              = 8
)

// Fetched is what Fetch read, with how many API calls it took.
type Fetched struct {
	Data     StackData
	Ref      heatapi.StackRef
	Calls    int
	Warnings []string
}

// Fetch reads a stack's outputs and software deployments:
//
//	1 call  to resolve the name (Heat's redirect),
//	1 call  for the stack with its outputs,
//	1 call  for the TripleODeployment resources of every nested stack
//	        (nested_depth 7, with their attributes),
//	1 call  for every software deployment (their config ids and servers),
//	N calls for the N software configs (Heat cannot list configs with their
//	        content), done concurrently.
func Fetch(ctx context.Context, c *heatapi.Client, name string) (*Fetched, error) {
	f := &Fetched{}
	warn := func(format string, args ...any) { f.Warnings = append(f.Warnings, fmt.Sprintf(format, args...)) }
	ref, err := c.FindStack(ctx, name)
	f.Calls++
	if err != nil {
		if heatapi.IsNotFound(err) {
			return f, fmt.Errorf("stack %s not found at %s", name, c.Endpoint())
		}
		return f, fmt.Errorf("finding stack %s: %w", name, err)
	}
	f.Ref = ref
	st, err := c.GetStack(ctx, ref, true)
	f.Calls++
	if err != nil {
		return f, fmt.Errorf("reading stack %s: %w", name, err)
	}
	outputs, errs := st.OutputMap()
	for _, k := range sortedStringKeys(errs) {
		warn("stack output %s could not be resolved: %s", k, errs[k])
	}
	f.Data = StackData{Name: st.Name, Outputs: outputs}

	res, err := c.ListResources(ctx, ref, heatapi.ResourceListOpts{NestedDepth: NestedDepth, WithDetail: true, Name: []string{DeploymentResource}})
	f.Calls++
	if err != nil {
		return f, fmt.Errorf("listing the %s resources of stack %s: %w", DeploymentResource, name, err)
	}
	// Creation order, as tripleo-common sorts them.
	sort.SliceStable(res, func(i, j int) bool { return res[i].CreationTime < res[j].CreationTime })

	type pending struct {
		dep          Deployment
		deploymentID string
	}
	var todo []pending
	for _, r := range res {
		if r.Name != DeploymentResource {
			continue
		}
		value, _ := r.Attributes["value"].(map[string]any)
		depRef, _ := value["deployment"].(string)
		server, _ := value["server"].(string)
		depName, _ := value["name"].(string)
		if depName == "" {
			depName = r.ParentResource
		}
		if depRef == "" || depRef == softwareDeploymentResource {
			warn("skipping deployment %s: it has no software deployment id (not triggered by this stack action?)", r.PhysicalID)
			continue
		}
		if server == "" {
			warn("skipping deployment %s: its value names no server", r.PhysicalID)
			continue
		}
		if depName == "" {
			warn("skipping deployment %s: its name cannot be determined (set the name property of the deployment)", r.PhysicalID)
			continue
		}
		if _, err := strconv.Atoi(depName); err == nil {
			warn("deployment %s is named %q (a ResourceGroup index): set the name property of the deployment in the templates", r.PhysicalID, depName)
		}
		if nested, ok := heatapi.RefFromURL(depRef); ok {
			// The value names the nested stack holding the deployment.
			sd, err := c.GetResource(ctx, nested, softwareDeploymentResource)
			f.Calls++
			if err != nil {
				warn("skipping deployment %s: %v", r.PhysicalID, err)
				continue
			}
			depRef = sd.PhysicalID
		}
		todo = append(todo, pending{dep: Deployment{Name: depName, ServerID: server, ResourceID: r.PhysicalID}, deploymentID: depRef})
	}
	if len(todo) == 0 {
		return f, nil
	}

	all, err := c.ListSoftwareDeployments(ctx, "")
	f.Calls++
	if err != nil {
		return f, fmt.Errorf("listing software deployments: %w", err)
	}
	byID := make(map[string]heatapi.SoftwareDeployment, len(all))
	for _, d := range all {
		byID[d.ID] = d
	}
	configIDs := make([]string, len(todo))
	for i, p := range todo {
		sd, ok := byID[p.deploymentID]
		if !ok {
			// Not visible in the listing (another project?): ask for it.
			one, err := c.GetSoftwareDeployment(ctx, p.deploymentID)
			f.Calls++
			if err != nil {
				warn("skipping deployment %s of server %s: %v", p.dep.Name, p.dep.ServerID, err)
				continue
			}
			sd = *one
		}
		configIDs[i] = sd.ConfigID
	}

	// The configs, concurrently, each once.
	configs := map[string]map[string]any{}
	var mu sync.Mutex
	var firstErr error
	ids := make(chan string)
	var wg sync.WaitGroup
	unique := map[string]bool{}
	for _, id := range configIDs {
		if id != "" {
			unique[id] = true
		}
	}
	for w := 0; w < configWorkers && w < len(unique); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for id := range ids {
				sc, err := c.GetSoftwareConfig(ctx, id)
				mu.Lock()
				f.Calls++
				if err != nil {
					if firstErr == nil {
						firstErr = fmt.Errorf("reading software config %s: %w", id, err)
					}
				} else {
					configs[id] = map[string]any{
						"id": sc.ID, "name": sc.Name, "group": sc.Group, "config": sc.Config,
						"inputs": mapsToAny(sc.Inputs), "outputs": mapsToAny(sc.Outputs),
						"options": sc.Options, "creation_time": sc.CreationTime,
					}
				}
				mu.Unlock()
			}
		}()
	}
	for _, id := range sortedBoolKeys(unique) {
		ids <- id
	}
	close(ids)
	wg.Wait()
	if firstErr != nil {
		return f, firstErr
	}
	for i, p := range todo {
		cfg := configs[configIDs[i]]
		if cfg == nil {
			continue
		}
		p.dep.Config = cfg
		f.Data.Deployments = append(f.Data.Deployments, p.dep)
	}
	return f, nil
}

func mapsToAny(l []map[string]any) []any {
	out := make([]any, 0, len(l))
	for _, m := range l {
		out = append(out, m)
	}
	return out
}

func sortedStringKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func sortedBoolKeys(m map[string]bool) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
