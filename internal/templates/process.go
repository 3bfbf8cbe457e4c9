// Package templates does the client-side processing of Heat templates and
// environment files that python-heatclient does before it sends a stack to
// Heat (heatclient.common.template_utils):
//
//   - every file is named by its file:// URL;
//   - in a template, every "get_file: <path>" and every "type: <path>" ending
//     in .yaml or .template (anywhere, so also a ResourceGroup's resource_def)
//     is resolved against the referring file's directory, rewritten in place
//     to the absolute URL, and the file's content stored in Files under that
//     URL; a referenced file that is itself a template is processed the same
//     way, recursively, and stored as JSON; other files are stored as they
//     are, or base64-encoded (76-column lines, like Python's
//     base64.encodebytes) when they are not UTF-8;
//   - in an environment's resource_registry (and its "resources" per-resource
//     mappings) every string value without "::" is such a reference,
//     resolved against the environment's directory or the registry's
//     base_url; the rewritten environment is stored in Files as JSON and its
//     URL listed in EnvironmentFiles, so that the server merges the
//     environments itself, in order, honouring parameter_merge_strategies.
//
// YAML is read with the semantics of heatclient's loader (PyYAML SafeLoader,
// YAML 1.1 scalars, timestamps kept as strings); see ParseYAML.
//
// Where heatclient would crash or silently send something Heat will refuse,
// this package returns an error naming the file instead: a null
// resource_registry value (which unregisters a mapping) is accepted; a
// reference cycle, a provider template that is not valid YAML or has no or
// an unknown version, a file that cannot be read, or a non-local URL is
// refused. Nothing is fetched over the network.
package templates

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"
)

// Bundle is a processed template with its environments: what a create or
// update request sends. Template and Environment hold values as ParseYAML
// returns them (numbers are json.Number).
type Bundle struct {
	// Template is the top template, references rewritten to file:// URLs.
	Template map[string]any
	// TemplateURL is the file:// URL of the top template (not sent).
	TemplateURL string
	// Files maps each referenced file's and each environment's URL to its
	// content (templates and environments as JSON).
	Files map[string]string
	// EnvironmentFiles lists the environments' URLs, in the order given.
	EnvironmentFiles []string
	// Environment is the client-side merge of all environments in order
	// (heatclient's deep_update: maps merge deeply, lists and scalars
	// replace), with rewritten references; it is not sent (the server
	// merges EnvironmentFiles itself) but serves checks before a deploy.
	// A null resource_registry value removes that mapping ("X*": null
	// removes every string mapping whose name starts with X).
	Environment map[string]any
	// Hidden names the parameters declared hidden (hidden: true) in the
	// top template or any template it references: their values must not
	// be shown.
	Hidden map[string]bool
}

// Process reads the template at templatePath and the environment files at
// envPaths (in order: later ones override earlier ones) with everything they
// reference.
func Process(templatePath string, envPaths []string) (*Bundle, error) {
	return ProcessWith(DefaultLimits(), templatePath, envPaths)
}

// ProcessWith is Process with the given limits on the files read.
func ProcessWith(lim Limits, templatePath string, envPaths []string) (*Bundle, error) {
	p := newProcessor(lim)
	tplURL, err := pathToURL(templatePath)
	if err != nil {
		return nil, err
	}
	data, err := p.read(templatePath, "template", true)
	if err != nil {
		return nil, err
	}
	tpl, err := p.parseTemplate(data, templatePath, true)
	if err != nil {
		return nil, err
	}
	if err := p.template(tplURL, templatePath, tpl); err != nil {
		return nil, err
	}
	merged, urls, err := p.environments(envPaths)
	if err != nil {
		return nil, err
	}
	return &Bundle{
		Template:         tpl,
		TemplateURL:      tplURL,
		Files:            p.files,
		EnvironmentFiles: urls,
		Environment:      merged,
		Hidden:           p.hidden,
	}, nil
}

// ProcessEnvironments reads environment files alone, as Process does: the
// merged environment, the files to send (each environment and what its
// resource_registry references) and the environments' URLs in order.
func ProcessEnvironments(envPaths []string) (merged map[string]any, files map[string]string, urls []string, err error) {
	return ProcessEnvironmentsWith(DefaultLimits(), envPaths)
}

// ProcessEnvironmentsWith is ProcessEnvironments with the given limits on
// the files read.
func ProcessEnvironmentsWith(lim Limits, envPaths []string) (merged map[string]any, files map[string]string, urls []string, err error) {
	p := newProcessor(lim)
	merged, urls, err = p.environments(envPaths)
	if err != nil {
		return nil, nil, nil, err
	}
	return merged, p.files, urls, nil
}

type processor struct {
	lim    Limits
	files  map[string]string
	active []string        // URLs of the templates being processed, to catch cycles
	hidden map[string]bool // hidden parameters of the templates seen
}

func newProcessor(lim Limits) *processor {
	return &processor{lim: lim.withDefaults(), files: map[string]string{}, hidden: map[string]bool{}}
}

// parseTemplate parses template text like heatclient's template_format.parse
// (surrounding white space ignored, JSON when it starts with "{", else YAML).
// With strict, anything but a valid template with a known version is an
// error; without, (nil, nil) means "not a template" (heatclient's
// is_template) and the caller keeps the raw content.
func (p *processor) parseTemplate(data []byte, name string, strict bool) (map[string]any, error) {
	// Drop leading white space but keep its line breaks, so that line numbers
	// in errors stay those of the file.
	trimmed := bytes.TrimLeft(data, " \t\r\n\f\v")
	lead := bytes.Count(data[:len(data)-len(trimmed)], []byte("\n"))
	trimmed = bytes.TrimRight(trimmed, " \t\r\n\f\v")
	var v any
	var err error
	if bytes.HasPrefix(trimmed, []byte("{")) {
		v, err = parseJSONTemplate(append(bytes.Repeat([]byte("\n"), lead), trimmed...), name)
	} else {
		v, err = ParseYAML(append(bytes.Repeat([]byte("\n"), lead), trimmed...), name)
	}
	if err != nil {
		if strict {
			return nil, err
		}
		return nil, nil
	}
	tpl, ok := v.(map[string]any)
	if !ok || !hasVersionKey(tpl) {
		if !strict {
			return nil, nil
		}
		if !ok && v != nil {
			return nil, fmt.Errorf("%s: not a Heat template: the top level must be a mapping with heat_template_version", name)
		}
		if tpl == nil {
			tpl = map[string]any{}
		}
	}
	if err := checkVersion(tpl, name); err != nil {
		return nil, err
	}
	return tpl, nil
}

// template processes a parsed template in place: its references are
// resolved against its own directory, rewritten and stored in p.files.
func (p *processor) template(url, name string, tpl map[string]any) error {
	for _, section := range []string{"parameters", "Parameters"} {
		params, _ := tpl[section].(map[string]any)
		for k, v := range params {
			def, _ := v.(map[string]any)
			for _, key := range []string{"hidden", "NoEcho"} {
				if isTrue(def[key]) {
					p.hidden[k] = true
				}
			}
		}
	}
	p.active = append(p.active, url)
	defer func() { p.active = p.active[:len(p.active)-1] }()
	return p.walk(tpl, dirURL(url), name)
}

// walk follows heatclient's resolve_template_get_files: children first, then
// the map's own "get_file" (any string) and "type" (a string ending in .yaml
// or .template) keys.
func (p *processor) walk(v any, base, name string) error {
	switch t := v.(type) {
	case []any:
		for _, item := range t {
			if err := p.walk(item, base, name); err != nil {
				return err
			}
		}
	case map[string]any:
		keys := sortedKeys(t)
		for _, k := range keys {
			if err := p.walk(t[k], base, name); err != nil {
				return err
			}
		}
		for _, k := range keys {
			s, ok := t[k].(string)
			if !ok {
				continue
			}
			var mustBeTemplate bool
			switch {
			case k == "get_file":
			case k == "type" && isTemplatePath(s):
				mustBeTemplate = true
			default:
				continue
			}
			u, err := p.reference(base, s, name, fmt.Sprintf("%s %q", k, s), mustBeTemplate)
			if err != nil {
				return err
			}
			t[k] = u
		}
	}
	return nil
}

func isTemplatePath(s string) bool {
	return strings.HasSuffix(s, ".yaml") || strings.HasSuffix(s, ".template")
}

// reference resolves ref against base, stores the file it names (once) and
// returns its URL. from names the referring file and what refers, for
// messages.
func (p *processor) reference(base, ref, from, what string, mustBeTemplate bool) (string, error) {
	u := joinURL(base, ref)
	if _, done := p.files[u]; done {
		return u, nil
	}
	for i, a := range p.active {
		if a == u {
			chain := append(append([]string(nil), p.active[i:]...), u)
			return "", fmt.Errorf("%s: %s: template reference cycle %s; Heat cannot nest a template inside itself", from, what, strings.Join(chain, " -> "))
		}
	}
	path, err := urlToPath(u)
	if err != nil {
		return "", fmt.Errorf("%s: %s: cannot read the file it names: %w", from, what, err)
	}
	kind := "file"
	if mustBeTemplate {
		kind = "template"
	}
	data, err := p.read(path, kind, mustBeTemplate)
	if err != nil {
		return "", fmt.Errorf("%s: %s: %w", from, what, err)
	}
	var content string
	switch {
	case !utf8.Valid(data):
		if mustBeTemplate {
			return "", fmt.Errorf("%s: %s: %s is binary, not a Heat template", from, what, path)
		}
		content = base64.StdEncoding.EncodeToString(data)
		content = wrap76(content)
	default:
		tpl, err := p.parseTemplate(data, path, mustBeTemplate)
		if err != nil {
			return "", fmt.Errorf("%s: %s: %w", from, what, err)
		}
		if tpl == nil {
			content = string(data)
			break
		}
		if err := p.template(u, path, tpl); err != nil {
			return "", err
		}
		if content, err = marshal(tpl); err != nil {
			return "", fmt.Errorf("%s: %w", path, err)
		}
	}
	p.files[u] = content
	return u, nil
}

// wrap76 splits base64 text into 76-character lines each ending in "\n", as
// Python's base64.encodebytes does.
func wrap76(s string) string {
	var b strings.Builder
	for len(s) > 76 {
		b.WriteString(s[:76])
		b.WriteByte('\n')
		s = s[76:]
	}
	if s != "" {
		b.WriteString(s)
		b.WriteByte('\n')
	}
	return b.String()
}

// marshal encodes v as compact JSON without HTML escaping.
func marshal(v any) (string, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return "", fmt.Errorf("encode as JSON: %w", err)
	}
	return strings.TrimSuffix(buf.String(), "\n"), nil
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// isTrue reads a template's boolean the way Heat does (true, or a string
// such as "true" / "yes").
func isTrue(v any) bool {
	switch b := v.(type) {
	case bool:
		return b
	case string:
		switch strings.ToLower(b) {
		case "true", "yes", "on", "y", "t", "1":
			return true
		}
	}
	return false
}
