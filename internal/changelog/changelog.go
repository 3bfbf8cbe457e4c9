// Package changelog reads and writes the collection's release notes in the
// format antsibull-changelog uses (changelogs/config.yaml,
// changelogs/changelog.yaml, changelogs/fragments/*.yml) and renders them as
// CHANGELOG.rst the way antsibull-changelog lays it out. antsibull-changelog
// is not packaged by Debian; this is the subset the collection needs:
// fragments, a release that folds them in with the new modules, roles and
// playbooks, the decision what `make changelog` does with galaxy.yml's
// version (Plan), and the rendering. A release is a function of its
// fragments, the collection tree and its date: entries are kept sorted, as
// antsibull-changelog keeps them, so folding fragments in two steps
// (UpdateRelease) gives what folding them at once gives.
package changelog

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/ephemeral-heat/ephemeral-heat/internal/fsutil"
)

// Config is the part of changelogs/config.yaml this package reads.
type Config struct {
	Title               string     `yaml:"title"`
	ChangesFile         string     `yaml:"changes_file"`
	NotesDir            string     `yaml:"notesdir"`
	Output              string     `yaml:"changelog_filename_template"`
	KeepFragments       bool       `yaml:"keep_fragments"`
	PreludeSectionName  string     `yaml:"prelude_section_name"`
	PreludeSectionTitle string     `yaml:"prelude_section_title"`
	TrivialSectionName  string     `yaml:"trivial_section_name"`
	Sections            [][]string `yaml:"sections"`
	UseFQCN             bool       `yaml:"use_fqcn"`
}

// Object is a module, role or playbook a release added.
// Namespace is "" for a module directly in plugins/modules and null (nil)
// for a role or playbook, as antsibull-changelog writes them.
type Object struct {
	Description string  `yaml:"description"`
	Name        string  `yaml:"name"`
	Namespace   *string `yaml:"namespace"`
	// VersionAdded is a module's version_added (Scan reads it; not saved).
	VersionAdded string `yaml:"-"`
}

// Release is one release in changelog.yaml.
type Release struct {
	Changes     map[string]any      `yaml:"changes,omitempty"`
	Fragments   []string            `yaml:"fragments,omitempty"`
	Modules     []Object            `yaml:"modules,omitempty"`
	Objects     map[string][]Object `yaml:"objects,omitempty"`
	ReleaseDate string              `yaml:"release_date"`
}

// Changelog is changelogs/changelog.yaml.
type Changelog struct {
	Ancestor *string            `yaml:"ancestor"`
	Releases map[string]Release `yaml:"releases"`
}

// Object kinds of Release.Objects, as antsibull-changelog names them.
const (
	KindRole     = "role"
	KindPlaybook = "playbook"
)

// Dir is a changelogs/ directory with its configuration.
type Dir struct {
	Path   string
	Config Config
}

// Open reads changelogs/config.yaml of dir.
func Open(dir string) (*Dir, error) {
	p := filepath.Join(dir, "config.yaml")
	b, err := os.ReadFile(p)
	if err != nil {
		return nil, fmt.Errorf("reading the changelog configuration: %w", err)
	}
	d := &Dir{Path: dir}
	// Config keys of antsibull-changelog this package does not read are allowed.
	if err := yaml.Unmarshal(b, &d.Config); err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	c := d.Config
	if c.Title == "" || c.ChangesFile == "" || c.NotesDir == "" || c.Output == "" || c.PreludeSectionName == "" || len(c.Sections) == 0 {
		return nil, fmt.Errorf("%s: title, changes_file, notesdir, changelog_filename_template, prelude_section_name and sections are required", p)
	}
	for _, s := range c.Sections {
		if len(s) != 2 || s[0] == "" || s[1] == "" {
			return nil, fmt.Errorf("%s: each entry of sections is [key, title], got %v", p, s)
		}
	}
	return d, nil
}

// strictYAML decodes b into v, refusing keys v does not have.
func strictYAML(b []byte, v any) error {
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("not the expected YAML: %w", err)
	}
	return nil
}

// OutputPath is the rendered changelog's path (config's template is relative to changelogs/).
func (d *Dir) OutputPath() string { return filepath.Join(d.Path, d.Config.Output) }

// sectionKeys are the keys a fragment may use.
func (d *Dir) sectionKeys() map[string]bool {
	keys := map[string]bool{d.Config.PreludeSectionName: true}
	if d.Config.TrivialSectionName != "" {
		keys[d.Config.TrivialSectionName] = true
	}
	for _, s := range d.Config.Sections {
		keys[s[0]] = true
	}
	return keys
}

// Load reads changelog.yaml.
func (d *Dir) Load() (*Changelog, error) {
	p := filepath.Join(d.Path, d.Config.ChangesFile)
	b, err := os.ReadFile(p)
	if err != nil {
		return nil, fmt.Errorf("reading the changelog: %w", err)
	}
	var cl Changelog
	if err := strictYAML(b, &cl); err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	if cl.Releases == nil {
		cl.Releases = map[string]Release{}
	}
	for v, r := range cl.Releases {
		if _, err := parseVersion(v); err != nil {
			return nil, fmt.Errorf("%s: release %q: %w", p, v, err)
		}
		if err := d.checkChanges(r.Changes); err != nil {
			return nil, fmt.Errorf("%s: release %s: %w", p, v, err)
		}
	}
	return &cl, nil
}

// checkChanges refuses unknown sections and entries of the wrong shape: the
// prelude is one string, every other section a list of strings.
func (d *Dir) checkChanges(ch map[string]any) error {
	keys := d.sectionKeys()
	for _, k := range sortedKeys(ch) {
		if !keys[k] {
			return fmt.Errorf("unknown section %q (sections: %s)", k, strings.Join(sortedKeys(keys), ", "))
		}
		switch v := ch[k].(type) {
		case string:
			if k != d.Config.PreludeSectionName {
				return fmt.Errorf("section %s must be a list of strings", k)
			}
		case []any:
			if k == d.Config.PreludeSectionName {
				return fmt.Errorf("section %s must be one string", k)
			}
			for _, e := range v {
				if s, ok := e.(string); !ok || strings.TrimSpace(s) == "" {
					return fmt.Errorf("section %s: %v is not a non-empty string", k, e)
				}
			}
		default:
			return fmt.Errorf("section %s: unexpected %T", k, v)
		}
	}
	return nil
}

// Fragment is one file of changelogs/fragments.
type Fragment struct {
	Name    string
	Changes map[string]any
}

// Fragments reads the fragments in name order (files starting with "." are skipped).
func (d *Dir) Fragments() ([]Fragment, error) {
	dir := d.fragmentsDir()
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("reading the changelog fragments: %w", err)
	}
	var out []Fragment
	for _, e := range ents {
		n := e.Name()
		if e.IsDir() || strings.HasPrefix(n, ".") {
			continue
		}
		if ext := filepath.Ext(n); ext != ".yml" && ext != ".yaml" {
			return nil, fmt.Errorf("%s: fragments are .yml or .yaml files", filepath.Join(dir, n))
		}
		b, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil {
			return nil, fmt.Errorf("reading a changelog fragment: %w", err)
		}
		var ch map[string]any
		if err := yaml.Unmarshal(b, &ch); err != nil {
			return nil, fmt.Errorf("%s: not valid YAML: %w", filepath.Join(dir, n), err)
		}
		if len(ch) == 0 {
			return nil, fmt.Errorf("%s: empty fragment", filepath.Join(dir, n))
		}
		if err := d.checkChanges(ch); err != nil {
			return nil, fmt.Errorf("%s: %w", filepath.Join(dir, n), err)
		}
		out = append(out, Fragment{Name: n, Changes: ch})
	}
	return out, nil
}

// Objects are what a collection holds, by kind ("module", KindRole, KindPlaybook).
type Objects map[string][]Object

// Release folds the fragments into a new release of cl dated date and lists
// the objects of have that no earlier release added.
func (d *Dir) Release(cl *Changelog, version, date string, have Objects, frags []Fragment) error {
	if _, err := parseVersion(version); err != nil {
		return fmt.Errorf("release %q: %w", version, err)
	}
	if _, ok := cl.Releases[version]; ok {
		return fmt.Errorf("release %s is already in the changelog", version)
	}
	if !regexp.MustCompile(`^\d{4}-\d{2}-\d{2}$`).MatchString(date) {
		return fmt.Errorf("release date %q is not YYYY-MM-DD", date)
	}
	if len(frags) == 0 {
		return fmt.Errorf("no changelog fragments in %s: write one for release %s", d.fragmentsDir(), version)
	}
	return d.fold(cl, version, Release{ReleaseDate: date}, have, frags)
}

// UpdateRelease folds the fragments into version, the newest release of cl,
// keeping its date: the result is what releasing all its fragments at once
// gives (antsibull-changelog's release --update-existing).
func (d *Dir) UpdateRelease(cl *Changelog, version string, have Objects, frags []Fragment) error {
	r, ok := cl.Releases[version]
	if !ok {
		return fmt.Errorf("release %s is not in the changelog: nothing to update", version)
	}
	if n := cl.Newest(); n != version {
		return fmt.Errorf("release %s is not the newest (%s): only the newest release can be updated", version, n)
	}
	if len(frags) == 0 {
		return fmt.Errorf("no changelog fragments in %s to add to release %s", d.fragmentsDir(), version)
	}
	return d.fold(cl, version, r, have, frags)
}

// fold adds the fragments to r as antsibull-changelog does (one release
// summary per release, trivial entries left out), lists the objects of
// have that no other release added, sorts, checks the modules'
// version_added and stores r as release version of cl. cl is unchanged on
// error.
func (d *Dir) fold(cl *Changelog, version string, r Release, have Objects, frags []Fragment) error {
	if err := released(cl, frags); err != nil {
		return err
	}
	changes := map[string]any{}
	for k, v := range r.Changes {
		if l, ok := v.([]any); ok {
			v = append([]any(nil), l...)
		}
		changes[k] = v
	}
	r.Changes = changes
	r.Fragments = append([]string(nil), r.Fragments...)
	for _, f := range frags {
		r.Fragments = append(r.Fragments, f.Name)
		for _, k := range sortedKeys(f.Changes) {
			switch v := f.Changes[k]; k {
			case d.Config.PreludeSectionName:
				if _, ok := r.Changes[k]; ok {
					return fmt.Errorf("%s: release %s already has a %s, and a release has one: merge the two", filepath.Join(d.fragmentsDir(), f.Name), version, k)
				}
				r.Changes[k] = v
			case d.Config.TrivialSectionName:
				// antsibull-changelog leaves trivial changes out of the changelog.
			default:
				prev, _ := r.Changes[k].([]any)
				r.Changes[k] = append(prev, v.([]any)...)
			}
		}
	}
	if len(r.Changes) == 0 {
		r.Changes = nil
	}
	known := map[string]bool{}
	for v, old := range cl.Releases {
		if v == version {
			continue
		}
		for _, m := range old.Modules {
			known["module/"+m.Name] = true
		}
		for kind, list := range old.Objects {
			for _, o := range list {
				known[kind+"/"+o.Name] = true
			}
		}
	}
	r.Modules, r.Objects = nil, nil
	for _, kind := range sortedKeys(have) {
		var added []Object
		for _, o := range have[kind] {
			if !known[kind+"/"+o.Name] {
				added = append(added, o)
			}
		}
		if len(added) == 0 {
			continue
		}
		if kind == "module" {
			for i := range added {
				if added[i].VersionAdded != version {
					return fmt.Errorf("module %s is new in release %s but its documentation says version_added: %q: set version_added: %s in its sidecar plugins/modules/%s.yml", added[i].Name, version, added[i].VersionAdded, version, added[i].Name)
				}
				added[i].Namespace = new(string)
			}
			r.Modules = added
			continue
		}
		if r.Objects == nil {
			r.Objects = map[string][]Object{}
		}
		r.Objects[kind] = added
	}
	sortRelease(&r, d.Config.PreludeSectionName)
	cl.Releases[version] = r
	return nil
}

// released refuses fragments whose names a release already lists: they
// were folded before (a merge brought them back), or a new change took an
// old name.
func released(cl *Changelog, frags []Fragment) error {
	in := map[string]string{}
	for _, v := range sortedKeys(cl.Releases) {
		for _, f := range cl.Releases[v].Fragments {
			in[f] = v
		}
	}
	var errs []error
	for _, f := range frags {
		if v, ok := in[f.Name]; ok {
			errs = append(errs, fmt.Errorf("fragment %s is already in release %s: delete it if it was folded in before, or rename it if it is a new change", f.Name, v))
		}
	}
	return errors.Join(errs...)
}

// sortRelease orders a release as antsibull-changelog saves it: the
// entries of each section but the release summary, the fragments, and the
// modules and objects by name.
func sortRelease(r *Release, prelude string) {
	for k, v := range r.Changes {
		if l, ok := v.([]any); ok && k != prelude {
			sort.SliceStable(l, func(i, j int) bool { return fmt.Sprint(l[i]) < fmt.Sprint(l[j]) })
		}
	}
	sort.Strings(r.Fragments)
	byName := func(l []Object) {
		sort.SliceStable(l, func(i, j int) bool { return l[i].Name < l[j].Name })
	}
	byName(r.Modules)
	for _, l := range r.Objects {
		byName(l)
	}
}

// Newest is the newest release's version ("" without releases).
func (cl *Changelog) Newest() string {
	n := ""
	for v := range cl.Releases {
		if n == "" || newer(v, n) {
			n = v
		}
	}
	return n
}

func (d *Dir) fragmentsDir() string { return filepath.Join(d.Path, d.Config.NotesDir) }

// savedHeader opens changelog.yaml: entries are one line each (as the
// fragments' folded text), longer than the line length yamllint allows.
const savedHeader = "# yamllint disable rule:line-length\n# Written by `make changelog` (tools/changelog) in antsibull-changelog's format.\n---\n"

// Save writes changelog.yaml atomically, in antsibull-changelog's layout
// and order (sortRelease: the same releases give the same file).
func (d *Dir) Save(cl *Changelog) error {
	for v, r := range cl.Releases {
		sortRelease(&r, d.Config.PreludeSectionName)
		cl.Releases[v] = r
	}
	var buf bytes.Buffer
	buf.WriteString(savedHeader)
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(cl); err != nil {
		return fmt.Errorf("encoding the changelog: %w", err)
	}
	return fsutil.WriteFileAtomic(filepath.Join(d.Path, d.Config.ChangesFile), buf.Bytes(), 0o644)
}

// RemoveFragments deletes folded fragments unless the config keeps them.
func (d *Dir) RemoveFragments(frags []Fragment) error {
	if d.Config.KeepFragments {
		return nil
	}
	var errs []error
	for _, f := range frags {
		if err := os.Remove(filepath.Join(d.Path, d.Config.NotesDir, f.Name)); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// version is a semantic version's numbers and pre-release part.
type version struct {
	nums [3]int
	pre  string
}

func parseVersion(s string) (version, error) {
	var v version
	main, pre, _ := strings.Cut(s, "-")
	main, _, _ = strings.Cut(main, "+")
	parts := strings.Split(main, ".")
	if len(parts) != 3 {
		return v, fmt.Errorf("not a semantic version X.Y.Z")
	}
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 {
			return v, fmt.Errorf("not a semantic version X.Y.Z")
		}
		v.nums[i] = n
	}
	v.pre = pre
	return v, nil
}

// newer orders versions newest first (a pre-release before its release).
func newer(a, b string) bool {
	va, _ := parseVersion(a)
	vb, _ := parseVersion(b)
	if va.nums != vb.nums {
		for i := range va.nums {
			if va.nums[i] != vb.nums[i] {
				return va.nums[i] > vb.nums[i]
			}
		}
	}
	if (va.pre == "") != (vb.pre == "") {
		return va.pre == ""
	}
	return va.pre > vb.pre
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
