package stack

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
)

// Digest is a sha256 of the inputs in a canonical form (JSON, sorted keys,
// numbers as written): equal inputs, equal digests. It depends on what
// the files hold, not on where they lie: every local file's URL (in the
// template, in every file, in the environment list and as a key of Files)
// is replaced by a name made of its content, with the URLs inside that
// content replaced the same way first (a Merkle tree of the references,
// which the template processing keeps free of cycles). So the same
// templates and environments copied to another directory, and a working
// dir restored to another path, give the same digest; an edit of any file
// (or of which file a reference names) gives another.
func (in *Inputs) Digest() string {
	c := canonicalizer{files: in.Files, names: map[string]string{}, busy: map[string]bool{}}
	tmpl, _ := json.Marshal(in.Template) // JSON values only: cannot fail
	files := make(map[string]string, len(in.Files))
	for u, content := range in.Files {
		files[c.name(u)] = c.rewrite(content)
	}
	envs := make([]string, len(in.EnvironmentFiles))
	for i, u := range in.EnvironmentFiles {
		envs[i] = c.name(u)
	}
	canon := struct {
		Template         json.RawMessage   `json:"template"`
		Files            map[string]string `json:"files"`
		EnvironmentFiles []string          `json:"environment_files"`
		Tags             []string          `json:"tags"`
		TimeoutMins      int               `json:"timeout_mins"`
		DisableRollback  bool              `json:"disable_rollback"`
	}{json.RawMessage(c.rewrite(string(tmpl))), files, envs, in.Tags, in.TimeoutMins, in.DisableRollback}
	h := sha256.New()
	enc := json.NewEncoder(h)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(canon) // maps of JSON values only: cannot fail
	return hex.EncodeToString(h.Sum(nil))
}

// contentPrefix starts the content name of a local file in the canonical
// form (never a URL the template processing makes).
const contentPrefix = "content:sha256:"

// canonicalizer names the local files of Inputs by their content.
type canonicalizer struct {
	files map[string]string
	names map[string]string
	busy  map[string]bool
}

// local says whether u is a local file the inputs hold (the parameters
// environment is no file: its name stays).
func (c *canonicalizer) local(u string) bool {
	if u == ParametersEnvURL || !strings.HasPrefix(u, fileScheme) {
		return false
	}
	_, ok := c.files[u]
	return ok
}

// name is u's content name: the sha256 of its content with the local URLs
// in it named first. A URL that is not a local file of the inputs keeps
// its name; so does one met again while it is being named (a cycle, which
// the processing refuses, would only cost the digest its independence of
// the location).
func (c *canonicalizer) name(u string) string {
	if !c.local(u) || c.busy[u] {
		return u
	}
	if n, ok := c.names[u]; ok {
		return n
	}
	c.busy[u] = true
	sum := sha256.Sum256([]byte(c.rewrite(c.files[u])))
	delete(c.busy, u)
	n := contentPrefix + hex.EncodeToString(sum[:])
	c.names[u] = n
	return n
}

const fileScheme = "file://"

// urlByte says whether b may be part of a file:// URL as the template
// processing writes them (percent-encoded: letters, digits, "_.-~/" and
// %XX).
func urlByte(b byte) bool {
	return 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z' || '0' <= b && b <= '9' ||
		b == '_' || b == '.' || b == '-' || b == '~' || b == '/' || b == '%'
}

// rewrite replaces every local file URL in s by its content name. A URL is
// the longest run of URL bytes after "file://", so one URL that begins
// with another is never mistaken for it.
func (c *canonicalizer) rewrite(s string) string {
	if !strings.Contains(s, fileScheme) {
		return s
	}
	var b strings.Builder
	for {
		i := strings.Index(s, fileScheme)
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		j := i + len(fileScheme)
		for j < len(s) && urlByte(s[j]) {
			j++
		}
		b.WriteString(s[:i])
		b.WriteString(c.name(s[i:j]))
		s = s[j:]
	}
}
