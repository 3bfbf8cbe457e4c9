package configdownload

import (
	"context"
	"slices"
	"strings"
	"sync"

	"github.com/ephemeral-heat/ephemeral-heat/internal/heatapi"
)

// deployStackInput is the input Heat gives a deployment's derived config:
// the stack ("name/id") that holds the deployment resource.
const deployStackInput = "deploy_stack_id"

// deploymentResources finds the TripleODeployment resources of stack root
// as tripleo-common's listing finds them (all, deployments), in the order
// Heat lists them, without that listing: with nested_depth Heat loads every
// nested stack of the deploy to walk them (8.7 s at Compute 100, in
// heat-all), where the deployments live in a few of them.
//
// It reads instead each software deployment's derived config (its
// deploy_stack_id: the stack S holding the deployment; the configs are read
// for the rendering anyway), the stack list with the nested stacks (their
// parents, from the database alone), the resources of each stack on the
// way from root to an S (to order S as Heat's walk does), and the
// TripleODeployment of each S. Heat's walk (Stack.iter_resources, and the
// cache list_stack_resources fills for a name filter) yields a stack's own
// TripleODeployment, then goes into its nested stacks one by one in the
// order of their resources (database id order, the order Heat lists them),
// to nested_depth 7; into an S it does not go (its cached resources are the
// filtered ones). So the listing order is the order of each S's path of
// resource positions from root.
//
// ok is false, and the caller lists as tripleo-common does, for any shape
// this cannot prove equal: a deployment whose config names no stack, an S
// whose TripleODeployment is missing or names another deployment, two
// deployments in one S, an S below another S, a TripleODeployment in a
// stack on the way, a stack missing from a list. Deployments of other
// stacks on the same Heat (not under root) and below nested_depth are left
// out, as the listing leaves them.
func (f *Fetched) deploymentResources(ctx context.Context, c *heatapi.Client, root heatapi.StackRef, all []heatapi.SoftwareDeployment) ([]heatapi.Resource, bool) {
	ids := map[string]bool{}
	for _, d := range all {
		ids[d.ConfigID] = true
	}
	configs, err := f.readConfigs(ctx, c, sortedStringKeys(ids))
	if err != nil {
		return nil, false // the listing's way reads what it needs
	}
	stacks, err := c.ListStacks(ctx, heatapi.StackListOpts{ShowNested: true})
	f.Calls++
	if err != nil {
		return nil, false
	}
	parent := make(map[string]string, len(stacks))
	name := make(map[string]string, len(stacks))
	for _, s := range stacks {
		parent[s.ID], name[s.ID] = s.Parent, s.Name
	}
	if _, ok := name[root.ID]; !ok {
		return nil, false
	}

	// The S of each deployment under root, and the chain of stacks from
	// root down to it.
	deployOf := map[string]string{} // S -> its deployment
	chains := map[string][]string{} // S -> root ... S
	for _, d := range all {
		s := deployStack(configs[d.ConfigID])
		if s == "" {
			return nil, false
		}
		chain := []string{s}
		for cur := s; cur != root.ID; {
			p, known := parent[cur]
			if !known {
				return nil, false
			}
			if p == "" {
				chain = nil // another top-level stack's
				break
			}
			if len(chain) > len(parent) {
				return nil, false // parents in a loop: not Heat's answer
			}
			chain = append(chain, p)
			cur = p
		}
		if chain == nil || len(chain)-1 > NestedDepth {
			continue
		}
		if _, dup := deployOf[s]; dup {
			return nil, false
		}
		slices.Reverse(chain)
		deployOf[s], chains[s] = d.ID, chain
	}
	if len(deployOf) == 0 {
		return nil, true
	}

	// The position of each stack on the way in its parent's resources.
	ancestors := map[string]bool{}
	for _, chain := range chains {
		for _, a := range chain[:len(chain)-1] {
			if _, isS := deployOf[a]; isS {
				return nil, false // Heat does not walk below an S
			}
			ancestors[a] = true
		}
	}
	position := map[string]int{} // stack -> index among its parent's resources
	var mu sync.Mutex
	shapeOK := true
	f.each(sortedStringKeys(ancestors), func(a string) {
		res, err := c.ListResources(ctx, heatapi.StackRef{Name: name[a], ID: a}, heatapi.ResourceListOpts{})
		mu.Lock()
		defer mu.Unlock()
		f.Calls++
		if err != nil {
			shapeOK = false
			return
		}
		for i, r := range res {
			if r.Name == DeploymentResource {
				shapeOK = false
			}
			if r.PhysicalID != "" {
				position[r.PhysicalID] = i
			}
		}
	})
	if !shapeOK {
		return nil, false
	}

	// Each S's TripleODeployment, as the listing formats it.
	found := map[string]heatapi.Resource{}
	f.each(sortedStringKeys(deployOf), func(s string) {
		res, err := c.ListResources(ctx, heatapi.StackRef{Name: name[s], ID: s}, heatapi.ResourceListOpts{WithDetail: true, Name: []string{DeploymentResource}})
		mu.Lock()
		defer mu.Unlock()
		f.Calls++
		if err != nil || len(res) != 1 || res[0].Name != DeploymentResource {
			shapeOK = false
			return
		}
		value := asObject(FromGo(res[0].Attributes["value"]))
		if dep, _ := value.Value("deployment").(string); dep != deployOf[s] {
			shapeOK = false
			return
		}
		found[s] = res[0]
	})
	if !shapeOK {
		return nil, false
	}

	// Heat's order: by each S's path of positions from root.
	paths := make(map[string][]int, len(found))
	for s := range found {
		for _, st := range chains[s][1:] {
			i, ok := position[st]
			if !ok {
				return nil, false
			}
			paths[s] = append(paths[s], i)
		}
	}
	order := sortedStringKeys(found)
	slices.SortStableFunc(order, func(a, b string) int { return slices.Compare(paths[a], paths[b]) })
	out := make([]heatapi.Resource, 0, len(order))
	for _, s := range order {
		out = append(out, found[s])
	}
	return out, true
}

// deployStack is the id of the stack a derived config's deploy_stack_id
// input names ("" when it names none).
func deployStack(cfg *Object) string {
	inputs, _ := cfg.Value("inputs").([]any)
	for _, in := range inputs {
		o := asObject(in)
		if n, _ := o.Value("name").(string); n != deployStackInput {
			continue
		}
		v, _ := o.Value("value").(string)
		if i := strings.LastIndex(v, "/"); i >= 0 && i < len(v)-1 {
			return v[i+1:]
		}
		return ""
	}
	return ""
}

// each runs fn on every item, configWorkers at a time, and returns when
// all have run.
func (f *Fetched) each(items []string, fn func(string)) {
	work := make(chan string)
	var wg sync.WaitGroup
	for w := 0; w < configWorkers && w < len(items); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for it := range work {
				fn(it)
			}
		}()
	}
	for _, it := range items {
		work <- it
	}
	close(work)
	wg.Wait()
}
