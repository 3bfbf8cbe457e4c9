package configdownload

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"sort"
	"strings"
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
	// Lookup is how the TripleODeployment resources were found
	// (LookupStacks, LookupListing; "" when there is no deployment).
	Lookup string
	// configs are the software configs read so far, by id.
	configs map[string]*Object
}

// How Fetch found the TripleODeployment resources: through the stacks of
// the software deployments (deploymentResources), or by tripleo-common's
// listing of every nested stack's.
const (
	LookupStacks  = "deployment stacks"
	LookupListing = "nested listing"
)

func (f *Fetched) warn(format string, args ...any) {
	f.Warnings = append(f.Warnings, fmt.Sprintf(format, args...))
}

// pendingDeployment is a TripleODeployment whose software deployment is
// still to be read.
type pendingDeployment struct {
	dep          Deployment
	deploymentID string
	configID     string
}

// Fetch reads what a rendering needs, in few API calls:
//
//	1 call  to resolve the name (Heat's redirect),
//	1 call  for the stack with its outputs (kept in Heat's key order),
//	1 call  for every software deployment (their config ids); when there
//	        is none, nothing else is needed for the deployments,
//	N calls for the N software configs, concurrently,
//	the TripleODeployment resources (deploymentResources): 1 call for the
//	        stacks, 1 for the resources of each stack on the way to a
//	        deployment's stack, 1 for each deployment's TripleODeployment,
//	        concurrently; or, for a shape it cannot prove equal, 1 call
//	        for those of every nested stack (nested_depth 7, with their
//	        attributes), tripleo-common's,
//	1 call  for the stack's environment (ContainerCli),
//	the first three concurrently with the others; and, when needed: the nested stack of a deployment named by its stack,
//	the group of a deployment named by an index (tripleo-common's
//	grandparent lookup, 4 calls per group), the software configs
//	RoleNetworkConfigMap names.
func Fetch(ctx context.Context, c *heatapi.Client, name string, release Release) (*Fetched, error) {
	f := &Fetched{Data: StackData{NetworkConfigs: map[string]any{}}}
	ref, err := c.FindStack(ctx, name)
	f.Calls++
	if err != nil {
		if heatapi.IsNotFound(err) {
			return f, fmt.Errorf("stack %s not found at %s", name, c.Endpoint())
		}
		return f, fmt.Errorf("finding stack %s: %w", name, err)
	}
	f.Ref = ref
	// The outputs (slow: Heat resolves them), the deployments and the
	// environment are read concurrently.
	var wg sync.WaitGroup
	var outErr, envErr error
	var env map[string]any
	dep := &Fetched{}
	wg.Add(2)
	go func() {
		defer wg.Done()
		outErr = f.readOutputs(ctx, c, ref)
	}()
	go func() {
		defer wg.Done()
		env, envErr = c.GetEnvironment(ctx, ref)
		dep.Calls++
	}()
	depErr := dep.readDeployments(ctx, c, ref)
	wg.Wait()
	f.Calls += dep.Calls
	f.Warnings = append(f.Warnings, dep.Warnings...)
	f.Data.Deployments = dep.Data.Deployments
	f.Lookup = dep.Lookup
	if outErr != nil {
		return f, outErr
	}
	if depErr != nil {
		return f, depErr
	}
	switch {
	case envErr == nil:
		if pd, ok := env["parameter_defaults"].(map[string]any); ok {
			f.Data.ContainerCLI = FromGo(pd["ContainerCli"])
		}
	case heatapi.IsNotFound(envErr):
	default:
		return f, fmt.Errorf("reading the environment of stack %s: %w", name, envErr)
	}
	out := f.Data.Outputs
	if release != Zed {
		if m := asObject(out.Value(OutRoleNetworkConfigMap)); m != nil {
			for _, role := range m.Keys() {
				id, ok := m.Value(role).(string)
				if !ok {
					continue
				}
				if _, done := f.Data.NetworkConfigs[id]; done {
					continue
				}
				sc, err := c.GetSoftwareConfig(ctx, id)
				f.Calls++
				if err != nil {
					f.warn("%s.%s: software config %s: %v", OutRoleNetworkConfigMap, role, id, err)
					continue
				}
				f.Data.NetworkConfigs[id] = FromGo(sc.Config)
			}
		}
	}
	return f, nil
}

// readOutputs reads the stack and its outputs, keeping the order of keys.
func (f *Fetched) readOutputs(ctx context.Context, c *heatapi.Client, ref heatapi.StackRef) error {
	var raw json.RawMessage
	err := c.GetJSON(ctx, []string{"stacks", ref.Name, ref.ID}, nil, &raw)
	f.Calls++
	if err != nil {
		return fmt.Errorf("reading stack %s: %w", ref.Name, err)
	}
	doc, err := DecodeJSON(raw)
	if err != nil {
		return fmt.Errorf("reading stack %s: the answer is not JSON: %w", ref.Name, err)
	}
	st := asObject(asObject(doc).Value("stack"))
	if st == nil {
		return fmt.Errorf("reading stack %s: the answer holds no stack", ref.Name)
	}
	f.Data.Name = ref.Name
	if n, ok := st.Value("stack_name").(string); ok {
		f.Data.Name = n
	}
	f.Data.Outputs = NewObject()
	outs, _ := st.Value("outputs").([]any)
	for _, o := range outs {
		x := asObject(o)
		key, _ := x.Value("output_key").(string)
		if e := x.Value("output_error"); truthy(e) {
			f.warn("stack output %s could not be resolved: %s", key, pyStr(e))
			continue
		}
		f.Data.Outputs.Set(key, x.Value("output_value"))
	}
	return nil
}

// readDeployments finds the TripleODeployment resources and reads their
// software deployments and configs.
func (f *Fetched) readDeployments(ctx context.Context, c *heatapi.Client, ref heatapi.StackRef) error {
	// Listing the TripleODeployment resources loads every nested stack (10 s
	// on a real overcloud); the software deployments are one query. A
	// TripleODeployment only leads to a deployment that exists, so when
	// there is none the listing would find nothing to render.
	all, err := c.ListSoftwareDeployments(ctx, "")
	f.Calls++
	if err != nil {
		return fmt.Errorf("listing software deployments: %w", err)
	}
	if len(all) == 0 {
		return nil
	}
	res, found := f.deploymentResources(ctx, c, ref, all)
	f.Lookup = LookupStacks
	if !found {
		f.Lookup = LookupListing
		res, err = c.ListResources(ctx, ref, heatapi.ResourceListOpts{NestedDepth: NestedDepth, WithDetail: true, Name: []string{DeploymentResource}})
		f.Calls++
		if err != nil {
			return fmt.Errorf("listing the %s resources of stack %s: %w", DeploymentResource, ref.Name, err)
		}
	}
	// Creation order, as tripleo-common sorts them (stable).
	sort.SliceStable(res, func(i, j int) bool { return res[i].CreationTime < res[j].CreationTime })

	groups := map[string]string{} // parent stack id -> its group's resource name
	var todo []pendingDeployment
	for _, r := range res {
		if r.Name != DeploymentResource {
			continue
		}
		value := asObject(FromGo(r.Attributes["value"]))
		if value == nil {
			f.warn("skipping deployment %s: its value is not a mapping", r.PhysicalID)
			continue
		}
		depRef, _ := value.Value("deployment").(string)
		if depRef == softwareDeploymentResource {
			f.warn("Skipping deployment %s because it has no valid uuid (physical_resource_id) associated.", r.PhysicalID)
			continue
		}
		depID := depRef
		if strings.Contains(depRef, "/") {
			id, err := f.nestedDeploymentID(ctx, c, depRef)
			if err != nil {
				return fmt.Errorf("deployment %s: %w", r.PhysicalID, err)
			}
			depID = id
		}
		if depID == "" {
			f.warn("Skipping deployment %s because it has no valid uuid (physical_resource_id) associated.", r.PhysicalID)
			continue
		}
		nameV := value.Value("name")
		if !truthy(nameV) {
			nameV = r.ParentResource
		}
		if !truthy(nameV) {
			return fmt.Errorf("the name of deployment %s cannot be determined: set the name property of its Deployment resource in the templates", r.PhysicalID)
		}
		depName := pyStr(nameV)
		if pyIsInt(nameV) {
			f.warn("Determining grandparent resource name for deployment %s. Ensure the name property is set on the deployment resource in the templates.", depRef)
			n, err := f.groupName(ctx, c, r, depRef, groups)
			if err != nil {
				return fmt.Errorf("deployment %s: %w", r.PhysicalID, err)
			}
			depName = n
		}
		todo = append(todo, pendingDeployment{
			dep:          Deployment{Name: depName, ServerID: value.Value("server"), ResourceID: r.PhysicalID},
			deploymentID: depID,
		})
	}
	if len(todo) == 0 {
		return nil
	}
	byID := make(map[string]string, len(all))
	for _, d := range all {
		byID[d.ID] = d.ConfigID
	}
	unique := map[string]bool{}
	for i := range todo {
		cid, ok := byID[todo[i].deploymentID]
		if !ok {
			// Not in the listing (another project?): ask for it.
			one, err := c.GetSoftwareDeployment(ctx, todo[i].deploymentID)
			f.Calls++
			if err != nil {
				return fmt.Errorf("reading software deployment %s (%s): %w", todo[i].deploymentID, todo[i].dep.Name, err)
			}
			cid = one.ConfigID
		}
		todo[i].configID = cid
		unique[cid] = true
	}

	configs, err := f.readConfigs(ctx, c, sortedStringKeys(unique))
	if err != nil {
		return err
	}
	for _, p := range todo {
		p.dep.Config = asObject(deepCopy(configs[p.configID]))
		f.Data.Deployments = append(f.Data.Deployments, p.dep)
	}
	return nil
}

// readConfigs reads software configs concurrently, keeping key order; a
// config read before is not read again.
func (f *Fetched) readConfigs(ctx context.Context, c *heatapi.Client, want []string) (map[string]*Object, error) {
	configs := map[string]*Object{}
	var ids []string
	for _, id := range want {
		if sc, ok := f.configs[id]; ok {
			configs[id] = sc
		} else {
			ids = append(ids, id)
		}
	}
	if f.configs == nil {
		f.configs = map[string]*Object{}
	}
	var mu sync.Mutex
	var firstErr error
	f.each(ids, func(id string) {
		var raw json.RawMessage
		err := c.GetJSON(ctx, []string{"software_configs", id}, nil, &raw)
		var sc *Object
		if err == nil {
			var doc any
			if doc, err = DecodeJSON(raw); err == nil {
				if sc = asObject(asObject(doc).Value("software_config")); sc == nil {
					err = fmt.Errorf("the answer holds no software_config")
				}
			}
		}
		mu.Lock()
		defer mu.Unlock()
		f.Calls++
		if err != nil && firstErr == nil {
			firstErr = fmt.Errorf("reading software config %s: %w", id, err)
		}
		configs[id] = sc
		if err == nil {
			f.configs[id] = sc
		}
	})
	return configs, firstErr
}

// stackID returns the stack id at the end of a reference to a stack (an
// id, a URL, or Heat's "arn:...:stacks/NAME/ID").
func stackID(s string) string {
	parts := strings.Split(s, "/")
	return parts[len(parts)-1]
}

// nestedDeploymentID reads the TripleOSoftwareDeployment of the nested
// stack a TripleODeployment names.
func (f *Fetched) nestedDeploymentID(ctx context.Context, c *heatapi.Client, depRef string) (string, error) {
	ref, err := c.FindStack(ctx, stackID(depRef))
	f.Calls++
	if err != nil {
		return "", fmt.Errorf("finding the stack of %s: %w", depRef, err)
	}
	sd, err := c.GetResource(ctx, ref, softwareDeploymentResource)
	f.Calls++
	if err != nil {
		return "", fmt.Errorf("reading %s of stack %s: %w", softwareDeploymentResource, ref, err)
	}
	return sd.PhysicalID, nil
}

// groupName finds the name of the resource that holds the group a
// deployment named by an index belongs to: the deployment's stack's
// parent's resource in its own parent (tripleo-common's grandparent
// lookup).
func (f *Fetched) groupName(ctx context.Context, c *heatapi.Client, r heatapi.Resource, depRef string, cache map[string]string) (string, error) {
	var depStack string
	if strings.Contains(depRef, "/") {
		depStack = stackID(depRef)
	} else if s, ok := r.Stack(); ok {
		depStack = s.ID
	} else {
		return "", fmt.Errorf("could not find its parent stack")
	}
	parentOf := func(id string) (string, error) {
		ref, err := c.FindStack(ctx, id)
		f.Calls++
		if err != nil {
			return "", err
		}
		st, err := c.GetStack(ctx, ref, false)
		f.Calls++
		if err != nil {
			return "", err
		}
		return st.Parent, nil
	}
	parent, err := parentOf(depStack)
	if err != nil {
		return "", fmt.Errorf("reading its stack %s: %w", depStack, err)
	}
	if n, ok := cache[parent]; ok {
		return n, nil
	}
	grand, err := parentOf(parent)
	if err != nil {
		return "", fmt.Errorf("reading stack %s: %w", parent, err)
	}
	if grand == "" {
		return "", fmt.Errorf("the deployment resource grandparent name could not be determined: stack %s has no parent", parent)
	}
	gref, err := c.FindStack(ctx, grand)
	f.Calls++
	if err != nil {
		return "", fmt.Errorf("reading stack %s: %w", grand, err)
	}
	var list struct {
		Resources []heatapi.Resource `json:"resources"`
	}
	err = c.GetJSON(ctx, []string{"stacks", gref.Name, gref.ID, "resources"}, url.Values{"physical_resource_id": {parent}}, &list)
	f.Calls++
	if err != nil {
		return "", fmt.Errorf("listing the resources of stack %s: %w", gref, err)
	}
	if len(list.Resources) == 0 {
		return "", fmt.Errorf("the deployment resource grandparent name could not be determined")
	}
	cache[parent] = list.Resources[0].Name
	return list.Resources[0].Name, nil
}
