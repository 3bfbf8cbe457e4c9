package module

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
)

// flagName turns a parameter name into its command-line flag (heat_dir -> --heat-dir).
func flagName(param string) string { return "--" + strings.ReplaceAll(param, "_", "-") }

// runCLI is command-line mode: the same parameters as flags, a human summary
// (or the JSON result with --json), and a non-zero exit code on failure.
func runCLI(spec *Spec, h Handler, args []string, stdout, stderr io.Writer) int {
	user, opts, err := parseFlags(spec, args)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\nRun '%s --help' for the parameters.\n", spec.Name, err, spec.Name)
		return 2
	}
	if opts.help {
		Usage(spec, stdout)
		return 0
	}
	ctx := &Context{CheckMode: opts.check, Diff: opts.diff, Interactive: !opts.json, Progress: stderr}
	if opts.json {
		ctx.Progress = io.Discard
	}
	res := execute(spec, h, ctx, user)
	if opts.json {
		return emitJSON(stdout, res)
	}
	return summarize(stdout, stderr, res)
}

type cliOpts struct{ help, json, check, diff bool }

func parseFlags(spec *Spec, args []string) (map[string]any, cliOpts, error) {
	var opts cliOpts
	user := map[string]any{}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "--") {
			return nil, opts, fmt.Errorf("unexpected argument %q (parameters are given as --name value)", a)
		}
		name, val, hasVal := strings.Cut(a[2:], "=")
		switch name {
		case "help", "h":
			opts.help = true
			continue
		case "json":
			opts.json = true
			continue
		case "check":
			opts.check = true
			continue
		case "diff":
			opts.diff = true
			continue
		}
		pname := strings.ReplaceAll(name, "-", "_")
		negated := false
		p := spec.param(pname)
		if p == nil && strings.HasPrefix(pname, "no_") {
			if q := spec.param(strings.TrimPrefix(pname, "no_")); q != nil && q.Type == Bool && !hasVal {
				p, negated = q, true
			}
		}
		if p == nil {
			return nil, opts, fmt.Errorf("unknown flag --%s (supported: %s)", name, strings.Join(flagList(spec), ", "))
		}
		if p.Type == Bool && !hasVal {
			user[p.Name] = !negated
			continue
		}
		if !hasVal {
			if i+1 >= len(args) {
				return nil, opts, fmt.Errorf("flag --%s needs a value", name)
			}
			i++
			val = args[i]
		}
		switch p.Type {
		case List:
			prev, _ := user[p.Name].([]any)
			for _, s := range strings.Split(val, ",") {
				if s = strings.TrimSpace(s); s != "" {
					prev = append(prev, s)
				}
			}
			user[p.Name] = prev
		case Dict:
			m, _ := user[p.Name].(map[string]any)
			if m == nil {
				m = map[string]any{}
			}
			if strings.HasPrefix(strings.TrimSpace(val), "{") {
				var j map[string]any
				if err := json.Unmarshal([]byte(val), &j); err != nil {
					// The value is not quoted: it may hold a secret.
					return nil, opts, fmt.Errorf("flag --%s: its value is not a JSON object: %v", name, err)
				}
				for k, v := range j {
					m[k] = v
				}
			} else {
				k, v, ok := strings.Cut(val, "=")
				if !ok {
					return nil, opts, fmt.Errorf("flag --%s takes key=value or a JSON object, got a value with no \"=\"", name)
				}
				m[k] = v
			}
			user[p.Name] = m
		default:
			user[p.Name] = val
		}
	}
	return user, opts, nil
}

func flagList(spec *Spec) []string {
	var out []string
	for _, n := range spec.names() {
		out = append(out, flagName(n))
	}
	return append(out, "--check", "--diff", "--json", "--help")
}

// Usage prints the command-line help of a module. Each parameter is one line,
// in a form ParseHelp reads back (so tests can hold --help against the
// module's documentation):
//
//	--flag-name   HELP (TYPE[ of ELEMENTS][: how to give it]) [required; default D; one of A|B; range MIN-MAX]
func Usage(spec *Spec, w io.Writer) {
	fmt.Fprintf(w, "%s: %s\n\nUsage: %s [--check] [--diff] [--json] [flags]\n", spec.Name, spec.Short, spec.Name)
	fmt.Fprintf(w, "       %s ARGS_FILE   (as an Ansible module)\n\nFlags:\n", spec.Name)
	for _, p := range spec.Params {
		var notes []string
		if p.Required {
			notes = append(notes, "required")
		}
		if p.Default != nil {
			notes = append(notes, "default "+formatDefault(p.Default))
		}
		if len(p.Choices) > 0 {
			notes = append(notes, "one of "+strings.Join(p.Choices, "|"))
		}
		if p.Range != nil {
			notes = append(notes, "range "+p.Range.String())
		}
		typ := typeName(p.Type)
		switch p.Type {
		case List:
			typ = "list of " + typeName(p.Elements) + ": repeat or comma-separate"
		case Dict:
			typ = "dict: key=value, repeated, or JSON"
		case Bool:
			typ = "bool: " + flagName(p.Name) + " or --no-" + flagName(p.Name)[2:]
		}
		n := ""
		if len(notes) > 0 {
			n = " [" + strings.Join(notes, "; ") + "]"
		}
		fmt.Fprintf(w, "  %-24s %s (%s)%s\n", flagName(p.Name), p.Help, typ, n)
	}
	fmt.Fprintf(w, "  %-24s %s\n  %-24s %s\n  %-24s %s\n", "--check", "report what would change, change nothing",
		"--diff", "show what changes", "--json", "print the result as JSON (as Ansible sees it)")
}

// typeName is a parameter type's Ansible name (str when unset).
func typeName(t Type) string {
	if t == "" {
		return string(Str)
	}
	return string(t)
}

// formatDefault writes a default as --help shows it: a list comma-separated
// (as the flag takes it), anything else as fmt prints it.
func formatDefault(v any) string {
	switch x := v.(type) {
	case []string:
		return strings.Join(x, ",")
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = fmt.Sprint(e)
		}
		return strings.Join(parts, ",")
	}
	return fmt.Sprint(v)
}

// summarize prints a human summary of a result and returns the exit code.
func summarize(stdout, stderr io.Writer, res Result) int {
	failed, _ := res["failed"].(bool)
	changed, _ := res["changed"].(bool)
	status := "ok"
	switch {
	case failed:
		status = "FAILED"
	case res["skipped"] == true:
		status = "skipped"
	case changed:
		status = "changed"
	}
	if w, ok := res["warnings"].([]string); ok {
		for _, s := range w {
			fmt.Fprintf(stderr, "[WARNING] %s\n", s)
		}
	}
	msg, _ := res["msg"].(string)
	if msg != "" {
		fmt.Fprintf(stdout, "%s: %s\n", status, msg)
	} else {
		fmt.Fprintln(stdout, status)
	}
	keys := make([]string, 0, len(res))
	for k := range res {
		switch k {
		case "failed", "changed", "msg", "warnings", "invocation", "skipped", "exception":
			continue
		}
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := res[k]
		switch v.(type) {
		case nil:
		case string:
			if v != "" {
				fmt.Fprintf(stdout, "  %s: %v\n", k, v)
			}
		case bool, int, int64, float64:
			fmt.Fprintf(stdout, "  %s: %v\n", k, v)
		default:
			b, _ := json.MarshalIndent(v, "    ", "  ")
			fmt.Fprintf(stdout, "  %s: %s\n", k, b)
		}
	}
	if failed {
		if ex, ok := res["exception"].(string); ok && os.Getenv("EPHEMERAL_HEAT_DEBUG") != "" {
			fmt.Fprintln(stderr, ex)
		}
		return 1
	}
	return 0
}
