package module

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"

	"github.com/ephemeral-heat/ephemeral-heat/internal/fsutil"
)

// Masked replaces the value of a no_log parameter or other secret in results,
// with the same text Ansible itself uses.
const Masked = "VALUE_SPECIFIED_IN_NO_LOG_PARAMETER"

// Result is what a module returns: arbitrary fields plus the protocol's
// changed, failed, msg, warnings and diff, which Run fills in.
type Result map[string]any

// Context is what a module's handler gets: its parameters and the mode of the run.
type Context struct {
	Params Params
	// CheckMode: report what would change, change nothing.
	CheckMode bool
	// Diff: the caller wants a diff of what changes.
	Diff bool
	// Verbosity is Ansible's -v count.
	Verbosity int
	// Interactive is true in command-line mode (a person is watching);
	// Progress writes go to stderr then, and are dropped under Ansible.
	Interactive bool
	Progress    io.Writer

	warnings []string
	secrets  []string
}

// Warn adds a warning to the result.
func (c *Context) Warn(format string, args ...any) {
	c.warnings = append(c.warnings, fmt.Sprintf(format, args...))
}

// Warnings returns the warnings added so far.
func (c *Context) Warnings() []string { return c.warnings }

// AddSecret registers a value that must never appear in the result
// (a generated password, a database URL with credentials, ...).
func (c *Context) AddSecret(s string) {
	if s != "" {
		c.secrets = append(c.secrets, s)
	}
}

// Handler is a module's logic. A non-nil error fails the module; the fields of
// the returned Result are kept in the failed result too (for example the
// failures of a stack).
type Handler func(ctx *Context) (Result, error)

// Main runs the module with the process's arguments and exits.
func Main(spec *Spec, h Handler) {
	os.Exit(Run(spec, h, os.Args[1:], os.Stdout, os.Stderr))
}

// Run decides between Ansible mode (a single argument naming the args file)
// and command-line mode (flags), runs the handler and prints the result. It
// returns the process exit code.
func Run(spec *Spec, h Handler, args []string, stdout, stderr io.Writer) int {
	if len(args) == 1 && !strings.HasPrefix(args[0], "-") {
		res := runAnsible(spec, h, args[0])
		return emitJSON(stdout, res)
	}
	return runCLI(spec, h, args, stdout, stderr)
}

// argsLimit bounds the arguments file Ansible writes.
var argsLimit = fsutil.Limit{Bytes: 64 << 20}

func runAnsible(spec *Spec, h Handler, argsFile string) Result {
	data, err := fsutil.ReadInput(argsFile, argsLimit, "module arguments file")
	if err != nil {
		return failure(fmt.Sprintf("%s: cannot read its arguments: %v", spec.Name, err))
	}
	var all map[string]any
	if err := json.Unmarshal(data, &all); err != nil {
		return failure(fmt.Sprintf("%s: the module arguments file %s is not a JSON object: %v", spec.Name, argsFile, err))
	}
	ctx := &Context{Progress: io.Discard}
	user := map[string]any{}
	for k, v := range all {
		if !strings.HasPrefix(k, "_ansible_") {
			user[k] = v
			continue
		}
		switch k {
		case "_ansible_check_mode":
			ctx.CheckMode, _ = v.(bool)
		case "_ansible_diff":
			ctx.Diff, _ = v.(bool)
		case "_ansible_verbosity":
			if f, ok := v.(float64); ok {
				ctx.Verbosity = int(f)
			}
		}
		// Other _ansible_* keys are ignored: newer cores add more.
	}
	return execute(spec, h, ctx, user)
}

// execute validates the parameters, runs the handler with panic recovery and
// builds the final, masked result.
func execute(spec *Spec, h Handler, ctx *Context, user map[string]any) (res Result) {
	// Secrets of no_log parameters are known even if validation fails.
	for _, p := range spec.Params {
		if p.NoLog {
			collectSecrets(user[p.Name], ctx)
		}
		if len(p.SecretKeys) > 0 {
			collectKeySecrets(user[p.Name], p.SecretKeys, ctx)
		}
	}
	params, err := spec.Validate(user)
	if err != nil {
		res = failure(err.Error())
		res["invocation"] = map[string]any{"module_args": user}
		return mask(res, ctx.secrets)
	}
	ctx.Params = params

	res = call(spec, h, ctx)
	res["invocation"] = map[string]any{"module_args": params.All()}
	if len(ctx.warnings) > 0 {
		res["warnings"] = ctx.warnings
	}
	if !ctx.Diff {
		delete(res, "diff")
	}
	if _, ok := res["changed"]; !ok {
		res["changed"] = false
	}
	return mask(res, ctx.secrets)
}

// call runs the handler and turns an error or a panic into a failed result.
func call(spec *Spec, h Handler, ctx *Context) (res Result) {
	defer func() {
		if r := recover(); r != nil {
			res = failure(fmt.Sprintf("%s: internal error (this is a bug, please report it with the module arguments): %v", spec.Name, r))
			res["exception"] = string(debug.Stack())
		}
	}()
	out, err := h(ctx)
	if out == nil {
		out = Result{}
	}
	if err != nil {
		out["failed"] = true
		out["msg"] = err.Error()
	} else if f, _ := out["failed"].(bool); f {
		if _, ok := out["msg"]; !ok {
			out["msg"] = spec.Name + " failed"
		}
	} else {
		out["failed"] = false
	}
	return out
}

func failure(msg string) Result {
	return Result{"failed": true, "changed": false, "msg": msg}
}

func collectSecrets(v any, ctx *Context) {
	switch x := v.(type) {
	case string:
		ctx.AddSecret(x)
	case []any:
		for _, e := range x {
			collectSecrets(e, ctx)
		}
	case map[string]any:
		for _, e := range x {
			collectSecrets(e, ctx)
		}
	case nil:
	default:
		// Numbers are masked only as whole values.
		ctx.AddSecret(fmt.Sprint(x))
	}
}

// collectKeySecrets registers the values of keys of a dict parameter (given
// as a dict, or as a string Dict accepts).
func collectKeySecrets(v any, keys []string, ctx *Context) {
	if s, ok := v.(string); ok {
		c, err := convert(Dict, "", s)
		if err != nil {
			return
		}
		v = c
	}
	m, ok := v.(map[string]any)
	if !ok {
		return
	}
	for _, k := range keys {
		if x, ok := m[k]; ok {
			collectSecrets(x, ctx)
		}
	}
}

// mask replaces every secret in every string (values and keys) of v, and
// every number that is one.
func mask(res Result, secrets []string) Result {
	if len(secrets) == 0 {
		return res
	}
	m := newMasker(secrets)
	// The result's own keys (changed, failed, msg, invocation ...) and the
	// parameter names in invocation are the protocol: a short secret ("a")
	// must not turn "failed" into something Ansible does not read.
	out := make(Result, len(res))
	for k, v := range res {
		if inv, ok := v.(map[string]any); ok && k == "invocation" {
			args, _ := inv["module_args"].(map[string]any)
			masked := make(map[string]any, len(args))
			for ak, av := range args {
				masked[ak] = m.value(av)
			}
			out[k] = map[string]any{"module_args": masked}
			continue
		}
		out[k] = m.value(v)
	}
	return out
}

// Mask returns s with every secret registered so far masked, as the
// result will be (for what a module writes elsewhere: a log, a file).
func (c *Context) Mask(s string) string {
	if len(c.secrets) == 0 {
		return s
	}
	return newMasker(c.secrets).text(s)
}

// minShown is the shortest start of a secret that is masked when a message
// quotes it cut ("s3cr...", as yaml.v3's "cannot unmarshal !!str
// `s3cr3t-...`" and messages that shorten long values do).
const minShown = 4

// ellipses are what marks a value cut short in messages.
var ellipses = []string{"...", "…"}

// masker replaces secrets in text: each whole, and its start cut short
// (minShown characters or more followed by an ellipsis); and it replaces a
// number that is a secret.
type masker struct {
	r       *strings.Replacer
	whole   map[string]bool
	secrets []string
}

func newMasker(secrets []string) *masker {
	m := &masker{whole: map[string]bool{}}
	for _, s := range secrets {
		if !m.whole[s] {
			m.whole[s] = true
			m.secrets = append(m.secrets, s)
		}
	}
	// Longest first, so a secret containing another is masked whole.
	sort.SliceStable(m.secrets, func(i, j int) bool { return len(m.secrets[i]) > len(m.secrets[j]) })
	pairs := make([]string, 0, 2*len(m.secrets))
	for _, s := range m.secrets {
		pairs = append(pairs, s, Masked)
	}
	m.r = strings.NewReplacer(pairs...)
	return m
}

// text masks the secrets in s: whole, then cut short before an ellipsis.
func (m *masker) text(s string) string {
	s = m.r.Replace(s)
	var b strings.Builder
	done := 0 // s[:done] is in b
	for i := 0; i < len(s); i++ {
		for _, e := range ellipses {
			if !strings.HasPrefix(s[i:], e) {
				continue
			}
			if n := m.cut(s[done:i]); n > 0 {
				b.WriteString(s[done : i-n])
				b.WriteString(Masked)
				done = i + len(e)
				i = done - 1
			}
			break
		}
	}
	if done == 0 {
		return s
	}
	b.WriteString(s[done:])
	return b.String()
}

// cut returns the length of the longest start of a secret (minShown
// characters or more, shorter than the secret) that before ends with; 0
// when none does.
func (m *masker) cut(before string) int {
	best := 0
	for _, s := range m.secrets {
		for n := min(len(s)-1, len(before)); n >= minShown && n > best; n-- {
			if before[len(before)-n] == s[0] && before[len(before)-n:] == s[:n] {
				best = n
				break
			}
		}
	}
	return best
}

// number masks a number whose text is a secret (a hidden parameter given as
// a number): numbers are masked only as whole values.
func (m *masker) number(x any, texts ...string) any {
	for _, t := range texts {
		if m.whole[t] {
			return Masked
		}
	}
	return x
}

func (m *masker) value(v any) any {
	switch x := v.(type) {
	case string:
		return m.text(x)
	case []string:
		out := make([]string, len(x))
		for i, e := range x {
			out[i] = m.text(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = m.value(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[m.text(k)] = m.value(e)
		}
		return out
	case Result:
		return m.value(map[string]any(x))
	case map[string]string:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[m.text(k)] = m.text(e)
		}
		return out
	case nil, bool:
		return x
	case int:
		return m.number(x, strconv.Itoa(x))
	case int64:
		return m.number(x, strconv.FormatInt(x, 10))
	case float64:
		return m.number(x, strconv.FormatFloat(x, 'f', -1, 64), fmt.Sprint(x))
	case json.Number:
		return m.number(x, x.String())
	default:
		// Structs and other values: go through JSON so nothing escapes masking.
		b, err := json.Marshal(x)
		if err != nil {
			return m.text(fmt.Sprint(x))
		}
		var g any
		if json.Unmarshal(b, &g) != nil {
			return m.text(string(b))
		}
		return m.value(g)
	}
}

func emitJSON(w io.Writer, res Result) int {
	b, err := json.Marshal(res)
	if err != nil {
		b, _ = json.Marshal(failure(fmt.Sprintf("cannot encode the module result as JSON: %v", err)))
	}
	w.Write(append(b, '\n'))
	if f, _ := res["failed"].(bool); f {
		return 1
	}
	return 0
}

// ErrUsage marks command-line usage errors.
var ErrUsage = errors.New("usage error")
