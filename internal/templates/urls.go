package templates

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
)

// schemeRE matches a URL scheme the way Python's urllib.parse.urlsplit does.
var schemeRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*:`)

// pathToURL turns a local path into the file:// URL heatclient would use
// (utils.normalise_file_path_to_url: os.path.abspath, then pathname2url,
// which percent-encodes everything except letters, digits, "_.-~" and "/").
func pathToURL(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", fmt.Errorf("make %q absolute: %w", path, err)
	}
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	b.WriteString("file://")
	for i := 0; i < len(abs); i++ {
		c := abs[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9',
			c == '_', c == '.', c == '-', c == '~', c == '/':
			b.WriteByte(c)
		default:
			b.WriteByte('%')
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&15])
		}
	}
	return b.String(), nil
}

// dirURL is the directory of a file URL with a trailing slash: the base
// heatclient resolves a file's references against (utils.base_url_for_url
// plus the "/" get_file_contents appends).
func dirURL(fileURL string) string {
	i := strings.LastIndex(fileURL, "/")
	if i < 0 {
		return fileURL
	}
	return fileURL[:i+1]
}

// joinURL resolves ref against base like Python's urllib.parse.urljoin does
// for the cases heatclient meets: a ref with a scheme other than the base's is
// returned unchanged; otherwise an absolute path replaces the base path, a
// relative one is appended to the base directory, and "." and ".." segments
// are resolved ("..", above the root, is dropped).
func joinURL(base, ref string) string {
	if ref == "" {
		return base
	}
	baseScheme, baseRest := splitScheme(base)
	if m := schemeRE.FindString(ref); m != "" {
		if !strings.EqualFold(m[:len(m)-1], baseScheme) {
			return ref
		}
		ref = ref[len(m):]
	}
	netloc, basePath := splitNetloc(baseRest)
	if strings.HasPrefix(ref, "//") {
		refNetloc, refPath := splitNetloc(ref)
		if refNetloc != "" {
			return baseScheme + ":" + ref // urljoin keeps a ref with a host as it is
		}
		ref = refPath
	}
	var segments []string
	if strings.HasPrefix(ref, "/") {
		segments = strings.Split(ref, "/")
	} else {
		baseParts := strings.Split(basePath, "/")
		baseParts = baseParts[:len(baseParts)-1] // drop the file name (or the empty last part)
		segments = append(baseParts, strings.Split(ref, "/")...)
		// urljoin drops empty segments in the middle (no "//" after joining).
		kept := segments[:1]
		for _, s := range segments[1 : len(segments)-1] {
			if s != "" {
				kept = append(kept, s)
			}
		}
		segments = append(kept, segments[len(segments)-1])
	}
	return baseScheme + "://" + netloc + removeDots(segments)
}

func removeDots(segments []string) string {
	var out []string
	for _, s := range segments {
		switch s {
		case "..":
			if len(out) > 0 {
				out = out[:len(out)-1]
			}
		case ".":
		default:
			out = append(out, s)
		}
	}
	if last := segments[len(segments)-1]; last == "." || last == ".." {
		out = append(out, "")
	}
	p := strings.Join(out, "/")
	if !strings.HasPrefix(p, "/") {
		p = "/" + p // urlunparse puts the path of a file: URL after "///"
	}
	return p
}

func splitScheme(u string) (scheme, rest string) {
	if m := schemeRE.FindString(u); m != "" {
		return strings.ToLower(m[:len(m)-1]), u[len(m):]
	}
	return "", u
}

// splitNetloc splits "//host/path" into "host" and "/path"; anything else
// has no netloc.
func splitNetloc(rest string) (netloc, path string) {
	if !strings.HasPrefix(rest, "//") {
		return "", rest
	}
	rest = rest[2:]
	if i := strings.IndexByte(rest, '/'); i >= 0 {
		return rest[:i], rest[i:]
	}
	return rest, ""
}

// urlToPath maps a file:// URL to a local path, undoing percent-encoding
// leniently like Python's url2pathname (bad escapes are kept as they are).
// Other schemes are refused: this package never fetches over the network.
func urlToPath(u string) (string, error) {
	scheme, rest := splitScheme(u)
	if scheme != "file" {
		return "", fmt.Errorf("%q is not a local file: only local paths and file:// URLs are supported, copy the file next to the template and refer to it by a relative path", u)
	}
	netloc, path := splitNetloc(rest)
	if netloc != "" && netloc != "localhost" {
		return "", fmt.Errorf("%q names host %q: only local files are supported", u, netloc)
	}
	return unquote(path), nil
}

func unquote(s string) string {
	if !strings.Contains(s, "%") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) {
			b.WriteByte(unhex(s[i+1])<<4 | unhex(s[i+2]))
			i += 2
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case '0' <= c && c <= '9':
		return c - '0'
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10
	default:
		return c - 'A' + 10
	}
}

// URLToPath returns the local path a file:// URL names (false for any other
// URL).
func URLToPath(u string) (string, bool) {
	p, err := urlToPath(u)
	return p, err == nil
}
