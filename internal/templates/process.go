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
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"runtime"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/ephemeral-heat/ephemeral-heat/internal/fsutil"
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

// ProcessWith is Process with the given limits on the files read. A result
// is taken from the processing cache (cache.go) while every file it was
// made from has the same content.
func ProcessWith(lim Limits, templatePath string, envPaths []string) (*Bundle, error) {
	lim = lim.withDefaults()
	dir := cacheDir()
	key := ""
	if dir != "" {
		if k, err := cacheKey(lim, templatePath, envPaths); err == nil {
			key = k
			if b := cacheLoad(dir, key, lim); b != nil {
				return b, nil
			}
		}
	}
	b, inputs, err := process(lim, templatePath, envPaths)
	if err != nil {
		return nil, err
	}
	if key != "" {
		cacheStore(dir, key, inputs, b)
	}
	return b, nil
}

// process is ProcessWith without the cache; it also returns the files it
// read, by path, with the sha256 of their content.
func process(lim Limits, templatePath string, envPaths []string) (*Bundle, map[string][32]byte, error) {
	b, p, err := processUncached(lim, templatePath, envPaths)
	if err != nil {
		return nil, nil, err
	}
	return b, p.inputs(), nil
}

func processUncached(lim Limits, templatePath string, envPaths []string) (*Bundle, *processor, error) {
	p := newProcessor(lim)
	tplURL, err := pathToURL(templatePath)
	if err != nil {
		return nil, nil, err
	}
	data, err := p.read(templatePath, "template", true)
	if err != nil {
		return nil, nil, err
	}
	if path, err := urlToPath(tplURL); err == nil {
		p.readSums[path] = sha256.Sum256(data)
	}
	tpl, err := p.parseTemplate(data, templatePath, true)
	if err != nil {
		return nil, nil, err
	}
	if err := p.template(tplURL, templatePath, tpl); err != nil {
		return nil, nil, err
	}
	merged, urls, err := p.environments(envPaths)
	if err != nil {
		return nil, nil, err
	}
	if err := p.marshalPending(); err != nil {
		return nil, nil, err
	}
	return &Bundle{
		Template:         tpl,
		TemplateURL:      tplURL,
		Files:            p.files,
		EnvironmentFiles: urls,
		Environment:      merged,
		Hidden:           p.hidden,
	}, p, nil
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
	if err := p.marshalPending(); err != nil {
		return nil, nil, nil, err
	}
	return merged, p.files, urls, nil
}

// processor walks the references in order, one file at a time, as
// heatclient does; what does not depend on the order runs on every core:
// files are read and parsed ahead of their turn (fetch, prefetched as soon
// as a parsed file shows its references), and the processed documents are
// encoded as JSON at the end (marshalPending). The result is the same as
// doing everything in turn.
type processor struct {
	lim    Limits
	files  map[string]string
	active []string        // URLs of the templates being processed, to catch cycles
	hidden map[string]bool // hidden parameters of the templates seen
	loads  map[string]*load
	sem    chan struct{} // bounds the files read and parsed at once
	// pending are the documents to encode into files (URL order of
	// processing), with the path for messages.
	pending []pendingDoc
	// readSums holds the files read outside fetch (the top template).
	readSums map[string][32]byte
}

type pendingDoc struct {
	url, path string
	doc       any
}

// load is one file read and parsed in the background: done is closed when
// the fields are set. A template reference and an environment file of the
// same URL are loaded separately (an environment is always YAML).
type load struct {
	done     chan struct{}
	path     string
	data     []byte
	readErr  error
	v        any   // the parsed document (valid UTF-8 only)
	parseErr error // the parse error, if any
}

func newProcessor(lim Limits) *processor {
	return &processor{lim: lim.withDefaults(), files: map[string]string{}, hidden: map[string]bool{}, loads: map[string]*load{},
		sem: make(chan struct{}, runtime.GOMAXPROCS(0)), readSums: map[string][32]byte{}}
}

// limit is the size limit of a template (mustBeTemplate) or of another file.
func (p *processor) limit(template bool) int64 {
	if template {
		return p.lim.Template
	}
	return p.lim.Body
}

// inputs are the files read, by path, with the sha256 of their content
// (after processing: every load has ended).
func (p *processor) inputs() map[string][32]byte {
	out := make(map[string][32]byte, len(p.loads)+len(p.readSums))
	for path, sum := range p.readSums {
		out[path] = sum
	}
	for _, l := range p.loads {
		<-l.done
		if l.readErr == nil {
			out[l.path] = sha256.Sum256(l.data)
		}
	}
	return out
}

// fetch returns the load of the file at URL u (a template reference, or an
// environment with env), starting it if needed.
func (p *processor) fetch(u string, env bool) *load {
	key := u
	if env {
		key = "env " + u
	}
	if l, ok := p.loads[key]; ok {
		return l
	}
	l := &load{done: make(chan struct{})}
	p.loads[key] = l
	go func() {
		p.sem <- struct{}{}
		defer func() { <-p.sem; close(l.done) }()
		path, err := urlToPath(u)
		if err != nil {
			l.readErr = err
			return
		}
		l.path = path
		// Through the bounded reader (regular files only), within the
		// larger limit: the file may be a template or a get_file target;
		// whoever uses it checks its own limit (reference, environment).
		what, lim := "environment file", p.lim.Body
		if !env {
			what, lim = "file", max(p.lim.Template, p.lim.Body)
		}
		if l.data, l.readErr = fsutil.ReadInput(path, fsutil.Limit{Bytes: lim, Option: "max_json_body_size"}, what); l.readErr != nil {
			return
		}
		switch {
		case env:
			l.v, l.parseErr = ParseYAML(l.data, path)
		case utf8.Valid(l.data):
			l.v, l.parseErr = parseDocument(l.data, path)
		}
	}()
	return l
}

// wait returns l once loaded.
func (l *load) wait() *load {
	<-l.done
	return l
}

// later queues doc to be encoded as JSON into p.files[u]: a placeholder
// marks u as done meanwhile.
func (p *processor) later(u, path string, doc any) {
	p.files[u] = ""
	p.pending = append(p.pending, pendingDoc{url: u, path: path, doc: doc})
}

// marshalPending encodes the queued documents, on every core; the first
// failure in queue order is returned.
func (p *processor) marshalPending() error {
	errs := make([]error, len(p.pending))
	out := make([]string, len(p.pending))
	var wg sync.WaitGroup
	next := make(chan int)
	for w := 0; w < runtime.GOMAXPROCS(0); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				out[i], errs[i] = marshal(p.pending[i].doc)
			}
		}()
	}
	for i := range p.pending {
		next <- i
	}
	close(next)
	wg.Wait()
	for i, d := range p.pending {
		if errs[i] != nil {
			return fmt.Errorf("%s: %w", d.path, errs[i])
		}
		p.files[d.url] = out[i]
	}
	p.pending = nil
	return nil
}

// prefetch starts loading the files a parsed template refers to (what walk
// will resolve), so that they are parsed while earlier ones are processed.
func (p *processor) prefetch(v any, base string) {
	switch t := v.(type) {
	case []any:
		for _, item := range t {
			p.prefetch(item, base)
		}
	case map[string]any:
		for k, x := range t {
			if s, ok := x.(string); ok && (k == "get_file" || k == "type" && isTemplatePath(s)) {
				if u := joinURL(base, s); strings.HasPrefix(u, "file:") {
					if _, done := p.files[u]; !done {
						p.fetch(u, false)
					}
				}
				continue
			}
			p.prefetch(x, base)
		}
	}
}

// parseTemplate parses template text like heatclient's template_format.parse
// (surrounding white space ignored, JSON when it starts with "{", else YAML).
// With strict, anything but a valid template with a known version is an
// error; without, (nil, nil) means "not a template" (heatclient's
// is_template) and the caller keeps the raw content.
func (p *processor) parseTemplate(data []byte, name string, strict bool) (map[string]any, error) {
	v, err := parseDocument(data, name)
	return asTemplate(v, err, name, strict)
}

// parseDocument parses template text as parseTemplate does, without deciding
// whether it is a template.
func parseDocument(data []byte, name string) (any, error) {
	// Drop leading white space but keep its line breaks, so that line numbers
	// in errors stay those of the file.
	trimmed := bytes.TrimLeft(data, " \t\r\n\f\v")
	lead := bytes.Count(data[:len(data)-len(trimmed)], []byte("\n"))
	trimmed = bytes.TrimRight(trimmed, " \t\r\n\f\v")
	if bytes.HasPrefix(trimmed, []byte("{")) {
		return parseJSONTemplate(append(bytes.Repeat([]byte("\n"), lead), trimmed...), name)
	}
	return ParseYAML(append(bytes.Repeat([]byte("\n"), lead), trimmed...), name)
}

// asTemplate is parseTemplate's decision on a parsed document v (or its
// parse error err).
func asTemplate(v any, err error, name string, strict bool) (map[string]any, error) {
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
	p.prefetch(tpl, dirURL(url))
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
	l := p.fetch(u, false).wait()
	data, err := l.data, l.readErr
	if err != nil || int64(len(data)) > p.limit(mustBeTemplate) {
		// Read again in turn for the error that names this use and its
		// limit (the background read took the larger of the two limits).
		if data, err = p.read(path, kind, mustBeTemplate); err == nil {
			err = fmt.Errorf("%s changed while it was read", path)
		}
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
		tpl, err := asTemplate(l.v, l.parseErr, path, mustBeTemplate)
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
		p.later(u, path, tpl)
		return u, nil
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

// marshal encodes v as compact JSON without HTML escaping (encoding/json's
// bytes: appendJSON).
func marshal(v any) (string, error) {
	b, err := appendJSON(nil, v)
	if err != nil {
		return "", fmt.Errorf("encode as JSON: %w", err)
	}
	return string(b), nil
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
