package changelog

import (
	"fmt"
	"sort"
	"strings"
)

// objectSections are the headings of what a release added, in
// antsibull-changelog's order, after the change sections.
var objectSections = []struct{ kind, title string }{
	{"module", "New Modules"},
	{KindPlaybook, "New Playbooks"},
	{KindRole, "New Roles"},
}

// RenderRST renders the changelog as antsibull-changelog lays out
// CHANGELOG.rst: a title, the releases newest first, in each the release
// summary, the change sections in the configured order, then the modules,
// playbooks and roles it added (named NAMESPACE.NAME.OBJECT with use_fqcn).
func (d *Dir) RenderRST(cl *Changelog, namespace, name string) string {
	var b strings.Builder
	title := d.Config.Title + " Release Notes"
	bar := strings.Repeat("=", len(title))
	fmt.Fprintf(&b, "%s\n%s\n%s\n\n.. contents:: Topics\n", bar, title, bar)
	versions := sortedKeys(cl.Releases)
	sort.SliceStable(versions, func(i, j int) bool { return newer(versions[i], versions[j]) })
	for _, v := range versions {
		r := cl.Releases[v]
		heading(&b, "v"+v, "=")
		if s, ok := r.Changes[d.Config.PreludeSectionName].(string); ok {
			heading(&b, d.Config.PreludeSectionTitle, "-")
			b.WriteString(strings.TrimSpace(s) + "\n")
		}
		for _, sec := range d.Config.Sections {
			list, _ := r.Changes[sec[0]].([]any)
			if len(list) == 0 {
				continue
			}
			heading(&b, sec[1], "-")
			for _, e := range list {
				item(&b, fmt.Sprint(e))
			}
		}
		for _, os := range objectSections {
			list := r.Objects[os.kind]
			if os.kind == "module" {
				list = r.Modules
			}
			if len(list) == 0 {
				continue
			}
			heading(&b, os.title, "-")
			for _, o := range list {
				n := o.Name
				if d.Config.UseFQCN {
					n = namespace + "." + name + "." + n
				}
				item(&b, n+" - "+o.Description)
			}
		}
	}
	return b.String()
}

// heading writes a section title, one blank line before and after it.
func heading(b *strings.Builder, title, underline string) {
	if !strings.HasSuffix(b.String(), "\n\n") {
		b.WriteString("\n")
	}
	fmt.Fprintf(b, "%s\n%s\n\n", title, strings.Repeat(underline, len([]rune(title))))
}

// item writes a bullet, its continuation lines indented under the text.
func item(b *strings.Builder, text string) {
	lines := strings.Split(strings.TrimSpace(text), "\n")
	for i, l := range lines {
		switch {
		case i == 0:
			b.WriteString("- " + l + "\n")
		case strings.TrimSpace(l) == "":
			b.WriteString("\n")
		default:
			b.WriteString("  " + l + "\n")
		}
	}
}
