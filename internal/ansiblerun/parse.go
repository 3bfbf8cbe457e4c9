package ansiblerun

import (
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
)

// What the default stdout callback of ansible-core prints (2.14:
// plugins/callback/default.py), one line each with
// ANSIBLE_CALLBACK_RESULT_FORMAT=json and no pretty printing:
//
//	TASK [role : name] ****
//	RUNNING HANDLER [name] ****
//	fatal: [host]: FAILED! => {...}
//	fatal: [host -> delegate]: UNREACHABLE! => {...}
//	failed: [host] (item=x) => {...}
//	...ignoring
//	PLAY RECAP ****
//	host : ok=1 changed=0 unreachable=0 failed=1 skipped=0 rescued=0 ignored=0
//	ERROR! message
//	ERROR: Error reading config file (path): ...   (ansible.cfg unreadable)
//	[WARNING]: provided hosts list is empty, ...     (wrapped at 80 columns)
//	skipping: no hosts matched                      (a play no host matched)
var (
	taskRE    = regexp.MustCompile(`^(?:TASK|RUNNING HANDLER) \[(.*)\] \**$`)
	fatalRE   = regexp.MustCompile(`^(?:fatal|failed): \[([^\]]+)\](?:: (FAILED|UNREACHABLE)!)?(?: \(item=(.*?)\))? => (.*)$`)
	recapRE   = regexp.MustCompile(`^(\S+)\s+: ok=(\d+)\s+changed=(\d+)\s+unreachable=(\d+)\s+failed=(\d+)(?:\s+skipped=(\d+))?(?:\s+rescued=(\d+))?(?:\s+ignored=(\d+))?`)
	playRecap = "PLAY RECAP "
)

// maxLine bounds the bytes of an output line kept (a failed task's result
// can carry megabytes of stdout).
const maxLine = 1 << 20

type parser struct {
	task      string
	inRecap   bool
	failures  []Failure
	recap     map[string]Recap
	errors    []string
	inError   bool
	warnings  []string
	inWarning bool
	seen      seen
	// tail is the last non-empty lines, for a failure that printed
	// neither a failed task nor an error.
	tail []string
}

// seen counts what a run printed: plays, the plays no host matched, the
// tasks run (fact gathering left out), and whether the recap came.
type seen struct {
	plays, noHostPlays, tasks int
	recap                     bool
}

// Bounds of what is kept of the output besides failures.
const (
	maxWarnings = 20
	maxTail     = 5
	gatherTask  = "Gathering Facts"
)

func newParser() *parser { return &parser{recap: map[string]Recap{}} }

func (p *parser) read(r io.Reader) error { return readLines(r, maxLine, p.line) }

func (p *parser) line(l string) {
	if strings.TrimSpace(l) != "" {
		if len(p.tail) == maxTail {
			p.tail = p.tail[1:]
		}
		p.tail = append(p.tail, clip(l))
	}
	if p.inWarning {
		if continuesWarning(l) {
			if w := &p.warnings[len(p.warnings)-1]; len(*w) < 1000 {
				*w += " " + strings.TrimSpace(l)
			}
			return
		}
		p.inWarning = false
	}
	if p.inError {
		// An ERROR! message goes on until an empty line.
		if strings.TrimSpace(l) == "" {
			p.inError = false
		} else if len(p.errors) > 0 && len(p.errors[len(p.errors)-1]) < 2000 {
			p.errors[len(p.errors)-1] += "\n" + l
		}
		return
	}
	switch {
	case strings.HasPrefix(l, "ERROR! ") || strings.HasPrefix(l, "ERROR: "):
		p.errors = append(p.errors, l[len("ERROR! "):])
		p.inError = true
	case strings.HasPrefix(l, "[WARNING]: "):
		if len(p.warnings) < maxWarnings {
			p.warnings = append(p.warnings, strings.TrimPrefix(l, "[WARNING]: "))
			p.inWarning = true
		}
	case strings.HasPrefix(l, playRecap):
		p.inRecap = true
		p.seen.recap = true
	case l == "skipping: no hosts matched":
		p.seen.noHostPlays++
	case strings.HasPrefix(l, "PLAY [") || strings.HasPrefix(l, "TASK [") || strings.HasPrefix(l, "RUNNING HANDLER ["):
		p.inRecap = false
		if strings.HasPrefix(l, "PLAY [") {
			p.seen.plays++
		}
		if m := taskRE.FindStringSubmatch(l); m != nil {
			p.task = m[1]
			if p.task != gatherTask {
				p.seen.tasks++
			}
		}
	case l == "...ignoring":
		if n := len(p.failures); n > 0 {
			p.failures = p.failures[:n-1]
		}
	case p.inRecap:
		if m := recapRE.FindStringSubmatch(l); m != nil {
			n := func(i int) int { v, _ := strconv.Atoi(m[i]); return v }
			p.recap[m[1]] = Recap{OK: n(2), Changed: n(3), Unreachable: n(4), Failed: n(5), Skipped: n(6), Rescued: n(7), Ignored: n(8)}
		}
	default:
		if m := fatalRE.FindStringSubmatch(l); m != nil {
			host := strings.SplitN(m[1], " -> ", 2)[0]
			p.failures = append(p.failures, Failure{Host: host, Task: p.task, Item: m[3],
				Unreachable: m[2] == "UNREACHABLE", Msg: resultMessage(m[4])})
		}
	}
}

// finish puts what was read into res: the failures of the hosts the
// recap counts as failed or unreachable (a rescued failure is not one).
func (p *parser) finish(res *Result) {
	res.Recap = p.recap
	res.Errors = append(p.errors, res.Errors...)
	res.Warnings = append(res.Warnings, p.warnings...)
	res.seen = p.seen
	res.tail = p.tail
	for _, f := range p.failures {
		r, ok := p.recap[f.Host]
		if ok && r.Failed == 0 && r.Unreachable == 0 {
			continue
		}
		res.Failures = append(res.Failures, f)
	}
}

// continuesWarning tells a line that continues a warning ansible wrapped
// at 80 columns from the next line of output.
func continuesWarning(l string) bool {
	if strings.TrimSpace(l) == "" || strings.HasPrefix(l, " ") {
		return false
	}
	for _, p := range []string{"[", "PLAY ", "TASK [", "RUNNING HANDLER [", "ok: ", "changed: ", "skipping: ", "fatal: ", "failed: ",
		"included: ", "ERROR", "...", "Using ", "statically imported: "} {
		if strings.HasPrefix(l, p) {
			return false
		}
	}
	return true
}

// maxMsg bounds a failure's message in the summary.
const maxMsg = 400

// resultMessage makes a short message of a task result (JSON): its msg,
// with the end of stderr (or stdout) and rc of a command.
func resultMessage(js string) string {
	var r map[string]any
	if err := json.Unmarshal([]byte(js), &r); err != nil {
		return clip(js)
	}
	var parts []string
	switch m := r["msg"].(type) {
	case string:
		if m != "" {
			parts = append(parts, m)
		}
	case nil:
	default:
		b, _ := json.Marshal(m)
		parts = append(parts, string(b))
	}
	if rc, ok := r["rc"].(float64); ok && rc != 0 {
		parts = append(parts, fmt.Sprintf("rc %d", int(rc)))
	}
	for _, k := range []string{"stderr", "module_stderr", "stdout"} {
		if s, ok := r[k].(string); ok && strings.TrimSpace(s) != "" {
			parts = append(parts, k+": "+lastLines(s, 3))
			break
		}
	}
	if len(parts) == 0 {
		if res, ok := r["results"].([]any); ok {
			for _, it := range res {
				if m, ok := it.(map[string]any); ok && m["failed"] == true {
					if s, ok := m["msg"].(string); ok {
						parts = append(parts, s)
						break
					}
				}
			}
		}
	}
	if len(parts) == 0 {
		return clip(js)
	}
	return clip(strings.Join(parts, "; "))
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " / ")
}

// clip makes s one line of at most maxMsg characters.
func clip(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > maxMsg {
		return string(r[:maxMsg-1]) + "…"
	}
	return s
}

// maxShown bounds the failures listed in a summary.
const maxShown = 5

// summary is the few lines that say what failed.
func summary(res *Result) []string {
	name := res.Playbook
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		name = name[i+1:]
	}
	hosts := map[string]bool{}
	for _, f := range res.Failures {
		hosts[f.Host] = true
	}
	var head string
	switch {
	case res.Interrupted != "" && res.leftRunning:
		head = fmt.Sprintf("%s interrupted by %s: processes of the run could not be stopped (below)", name, res.Interrupted)
	case res.Interrupted != "":
		head = fmt.Sprintf("%s interrupted by %s: ansible-playbook and every process of the run were stopped", name, res.Interrupted)
	case res.SelectedNothing != "":
		head = fmt.Sprintf("%s ran nothing: %s (allow_no_hosts: true accepts that)", name, res.SelectedNothing)
	default:
		head = fmt.Sprintf("%s failed (ansible-playbook exit code %d)", name, res.RC)
		if len(hosts) > 0 {
			head += fmt.Sprintf(" on %d host(s)", len(hosts))
		}
	}
	out := []string{head + "; log: " + res.Log}
	for i, f := range res.Failures {
		if i == maxShown {
			out = append(out, fmt.Sprintf("... and %d more failure(s) in the log", len(res.Failures)-maxShown))
			break
		}
		what := "failed"
		if f.Unreachable {
			what = "unreachable"
		}
		line := fmt.Sprintf("%s: task %q %s", f.Host, f.Task, what)
		if f.Item != "" {
			line += fmt.Sprintf(" (item %s)", clip(f.Item))
		}
		out = append(out, line+": "+f.Msg)
	}
	for _, e := range res.Errors {
		line := "ERROR! " + clip(e)
		if strings.Contains(e, "config file") && strings.Contains(e, res.Cfg) {
			which := "the ansible.cfg written into log_dir"
			if res.cfgGiven {
				which = "ansible_cfg"
			}
			line = fmt.Sprintf("%s %s: ansible-playbook cannot read it: %s", which, res.Cfg, clip(e))
		}
		out = append(out, line)
	}
	if len(res.Failures) == 0 && res.SelectedNothing == "" {
		for i, w := range res.Warnings {
			if i == 3 {
				break
			}
			out = append(out, "[WARNING]: "+clip(w))
		}
	}
	if len(res.Failures) == 0 && len(res.Errors) == 0 && res.Interrupted == "" && res.SelectedNothing == "" {
		if len(res.tail) > 0 {
			out = append(out, "no failed task was printed; the output ended with: "+strings.Join(res.tail, " / "))
		} else {
			out = append(out, "no failed task was printed, nor any output: see the log")
		}
	}
	out = append(out, "run it again by hand: "+res.CommandFile)
	return out
}
