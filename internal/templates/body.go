package templates

import (
	"fmt"
	"sort"
	"strings"
)

// DefaultMaxJSONBodySize is the max_json_body_size our heat.conf sets (Heat's
// own default is 1048576).
const DefaultMaxJSONBodySize = 8388608

// RequestBody returns the JSON body for POST /stacks, PUT or PATCH
// /stacks/{name}/{id} or a preview: template, files and environment_files
// (when there are environments), plus the fields in extra (stack_name,
// parameters, timeout_mins, ...; they may not replace those three). The
// client-merged Environment is not sent: Heat ignores it when
// environment_files is given. A body over maxBytes (<= 0 means
// DefaultMaxJSONBodySize), which Heat would refuse, is an error.
func (b *Bundle) RequestBody(extra map[string]any, maxBytes int) ([]byte, error) {
	if maxBytes <= 0 {
		maxBytes = DefaultMaxJSONBodySize
	}
	body := map[string]any{"template": b.Template, "files": b.Files}
	if len(b.EnvironmentFiles) > 0 {
		body["environment_files"] = b.EnvironmentFiles
	}
	for k, v := range extra {
		if _, taken := body[k]; taken || k == "environment_files" {
			return nil, fmt.Errorf("request body: field %q is set from the processed template and environments, do not pass it in extra", k)
		}
		body[k] = v
	}
	size := 1024
	for _, c := range b.Files {
		size += len(c) + len(c)/8 + 128
	}
	out, err := appendJSON(make([]byte, 0, size), body)
	if err != nil {
		return nil, fmt.Errorf("request body: encode as JSON: %w", err)
	}
	if len(out) > maxBytes {
		return nil, fmt.Errorf("request body is %d bytes, over Heat's max_json_body_size of %d bytes (largest files: %s); shrink the templates or files, or raise max_json_body_size in heat.conf", len(out), maxBytes, b.largestFiles(3))
	}
	return out, nil
}

func (b *Bundle) largestFiles(n int) string {
	urls := make([]string, 0, len(b.Files))
	for u := range b.Files {
		urls = append(urls, u)
	}
	sort.Slice(urls, func(i, j int) bool {
		if len(b.Files[urls[i]]) != len(b.Files[urls[j]]) {
			return len(b.Files[urls[i]]) > len(b.Files[urls[j]])
		}
		return urls[i] < urls[j]
	})
	if len(urls) > n {
		urls = urls[:n]
	}
	if len(urls) == 0 {
		return "none"
	}
	parts := make([]string, len(urls))
	for i, u := range urls {
		parts[i] = fmt.Sprintf("%s %d bytes", u, len(b.Files[u]))
	}
	return strings.Join(parts, ", ")
}
