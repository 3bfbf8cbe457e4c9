package templates

import "github.com/ephemeral-heat/ephemeral-heat/internal/fsutil"

// DefaultMaxTemplateSize is Heat's own max_template_size (our heat.conf
// keeps it): the largest template, top or provider, Heat parses.
const DefaultMaxTemplateSize = 524288

// MaxInputSize is the largest limit a caller may set (1 GiB).
const MaxInputSize = 1 << 30

// Limits bound the files processing reads, as Heat bounds what it gets: a
// template (the top one and each provider template) by max_template_size,
// any other file (an environment, a get_file target) by max_json_body_size,
// since it travels in the request body. Every file is read through
// fsutil.ReadInput: regular files only.
type Limits struct {
	Template int64 // max_template_size
	Body     int64 // max_json_body_size
}

// DefaultLimits are Heat's max_template_size and our heat.conf's
// max_json_body_size.
func DefaultLimits() Limits {
	return Limits{Template: DefaultMaxTemplateSize, Body: DefaultMaxJSONBodySize}
}

func (l Limits) withDefaults() Limits {
	d := DefaultLimits()
	if l.Template <= 0 {
		l.Template = d.Template
	}
	if l.Body <= 0 {
		l.Body = d.Body
	}
	return l
}

// read reads one input file (what names its role in errors) within the
// template limit or the body limit.
func (p *processor) read(path, what string, template bool) ([]byte, error) {
	lim := fsutil.Limit{Bytes: p.lim.Body, Option: "max_json_body_size"}
	if template {
		lim = fsutil.Limit{Bytes: p.lim.Template, Option: "max_template_size"}
	}
	return fsutil.ReadInput(path, lim, what)
}
