package templates

import (
	"fmt"
	"strings"
)

// envSections are the sections heatclient's environment_format allows.
var envSections = []string{
	"parameters", "parameter_defaults", "resource_registry",
	"encrypted_param_names", "event_sinks", "parameter_merge_strategies",
}

// environments processes the environment files in order and merges them.
func (p *processor) environments(paths []string) (map[string]any, []string, error) {
	merged := map[string]any{}
	urls := make([]string, 0, len(paths))
	for _, path := range paths {
		if u, err := pathToURL(path); err == nil {
			p.fetch(u, true)
		}
	}
	for _, path := range paths {
		u, env, err := p.environment(path)
		if err != nil {
			return nil, nil, err
		}
		urls = append(urls, u)
		deepUpdate(merged, env, false)
	}
	return merged, urls, nil
}

// environment reads one environment file, resolves and stores what its
// resource_registry references, and stores the rewritten environment as JSON.
func (p *processor) environment(path string) (string, map[string]any, error) {
	u, err := pathToURL(path)
	if err != nil {
		return "", nil, err
	}
	l := p.fetch(u, true).wait()
	if l.readErr != nil {
		return "", nil, l.readErr
	}
	v, err := l.v, l.parseErr
	if err != nil {
		return "", nil, err
	}
	env, ok := v.(map[string]any)
	switch {
	case v == nil:
		env = map[string]any{}
	case !ok:
		return "", nil, fmt.Errorf("%s: an environment must be a YAML mapping with sections such as parameter_defaults and resource_registry", path)
	}
	for _, k := range sortedKeys(env) {
		if !contains(envSections, k) {
			return "", nil, fmt.Errorf("%s: environment has unknown section %q; allowed sections are %s (parameters usually go under parameter_defaults)", path, k, strings.Join(envSections, ", "))
		}
	}
	if err := p.registry(env["resource_registry"], dirURL(u), path); err != nil {
		return "", nil, err
	}
	p.later(u, path, env)
	return u, env, nil
}

// registry follows heatclient's resolve_environment_urls: the registry's own
// string values, then those of each entry of its "resources" section, each
// against its base_url, else the registry's base_url, else the environment's
// directory. Values with "::" (type aliases), maps, and the keys base_url,
// hooks and restricted_actions are left alone; null (which unregisters a
// mapping) too.
func (p *processor) registry(section any, envDir, path string) error {
	if section == nil {
		return nil
	}
	rr, ok := section.(map[string]any)
	if !ok {
		return fmt.Errorf("%s: resource_registry must be a mapping of resource types to types or template paths", path)
	}
	base, err := registryBase(rr, envDir, path, "resource_registry")
	if err != nil {
		return err
	}
	if err := p.registryEntries(rr, base, path, "resource_registry"); err != nil {
		return err
	}
	resources, ok := rr["resources"].(map[string]any)
	if !ok {
		if rr["resources"] != nil {
			return fmt.Errorf("%s: resource_registry.resources must be a mapping of resource names to mappings", path)
		}
		return nil
	}
	for _, name := range sortedKeys(resources) {
		if resources[name] == nil {
			continue
		}
		entry, ok := resources[name].(map[string]any)
		if !ok {
			return fmt.Errorf("%s: resource_registry.resources.%s must be a mapping such as {OS::Nova::Server: server.yaml} or {hooks: pre-create}", path, name)
		}
		where := "resource_registry.resources." + name
		entryBase, err := registryBase(entry, base, path, where)
		if err != nil {
			return err
		}
		if err := p.registryEntries(entry, entryBase, path, where); err != nil {
			return err
		}
	}
	return nil
}

// registryBase is the base URL for a registry level: its base_url if it has
// one (heatclient needs a URL there; a path, absolute or relative to the
// environment's directory, is accepted too), else inherited.
func registryBase(level map[string]any, inherited, path, where string) (string, error) {
	raw, ok := level["base_url"]
	if !ok {
		return inherited, nil
	}
	s, ok := raw.(string)
	if !ok || s == "" {
		return "", fmt.Errorf("%s: %s.base_url must be a directory path or file:// URL", path, where)
	}
	u := joinURL(inherited, s)
	if !strings.HasSuffix(u, "/") {
		u += "/"
	}
	return u, nil
}

func (p *processor) registryEntries(level map[string]any, base, path, where string) error {
	// Load what the entries name ahead (see processor).
	for k, x := range level {
		if v, ok := x.(string); ok && k != "base_url" && k != "hooks" && k != "restricted_actions" && !strings.Contains(v, "::") {
			if u := joinURL(base, v); strings.HasPrefix(u, "file:") {
				if _, done := p.files[u]; !done {
					p.fetch(u, false)
				}
			}
		}
	}
	for _, k := range sortedKeys(level) {
		switch k {
		case "base_url", "hooks", "restricted_actions":
			continue
		}
		switch v := level[k].(type) {
		case nil, map[string]any:
		case string:
			if strings.Contains(v, "::") {
				continue
			}
			what := fmt.Sprintf("%s %q: %q", where, k, v)
			u, err := p.reference(base, v, path, what, isTemplatePath(v))
			if err != nil {
				return err
			}
			level[k] = u
		default:
			return fmt.Errorf("%s: %s %q: %v is neither a resource type nor a template path", path, where, k, v)
		}
	}
	return nil
}

// deepUpdate merges src into dst like heatclient's deep_update: maps merge
// deeply (a null does not wipe a map), anything else replaces. Inside
// resource_registry a null removes the mapping instead (Heat's way to
// unregister; heatclient crashes on it), a "prefix*" key every string mapping
// with that prefix.
func deepUpdate(dst, src map[string]any, inRegistry bool) {
	for _, k := range sortedKeys(src) {
		v := src[k]
		sub := inRegistry || k == "resource_registry"
		switch t := v.(type) {
		case map[string]any:
			old, ok := dst[k].(map[string]any)
			if !ok {
				old = map[string]any{}
			}
			deepUpdate(old, t, sub)
			dst[k] = old
		case nil:
			if inRegistry {
				delete(dst, k)
				if prefix, ok := strings.CutSuffix(k, "*"); ok {
					for name, mapping := range dst {
						if _, isString := mapping.(string); isString && strings.HasPrefix(name, prefix) {
							delete(dst, name)
						}
					}
				}
				continue
			}
			if _, isMap := dst[k].(map[string]any); !isMap {
				dst[k] = nil
			}
		default:
			dst[k] = v
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
