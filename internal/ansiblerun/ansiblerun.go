// Package ansiblerun runs a playbook of a config-download directory the way
// TripleO runs its deploy steps and scale playbook: ansible-playbook with the
// ansible.cfg tripleo-common writes into that directory (utils/ansible.py
// write_default_ansible_cfg: log_path ansible.log, an earlier log renamed
// ansible.log-<time>, ssh settings, fact cache) and the environment
// python-tripleoclient's utils.run_ansible_playbook adds (become, the
// private key, --limit/--tags/--skip-tags), with the command kept beside the
// log to run again by hand. The output is streamed to the log as it comes;
// what failed (host, task, message) is read from it and summed up in a few
// lines.
package ansiblerun

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/ephemeral-heat/ephemeral-heat/internal/configdownload"
	"github.com/ephemeral-heat/ephemeral-heat/internal/fsutil"
)

// Options say what to run.
type Options struct {
	// Dir is the config-download directory: the playbook's directory, the
	// working directory of the run and the roles path's root.
	Dir string
	// LogDir receives ansible.cfg, ansible.log and the command (default
	// Dir; a temporary directory in check mode).
	LogDir string
	// Playbook is a file name in Dir, or a path.
	Playbook string
	// Inventory defaults to Dir's tripleo-ansible-inventory.yaml.
	Inventory string
	// Limit, Tags and SkipTags become --limit, --tags and --skip-tags.
	Limit          string
	Tags, SkipTags []string
	// Check runs the playbook with --check, Diff with --diff.
	Check, Diff bool
	// ExtraVars are passed as one -e JSON document.
	ExtraVars map[string]any
	// AnsibleCfg is an ansible.cfg to use instead of writing ours
	// (tripleoclient's --override-ansible-cfg).
	AnsibleCfg string
	// Become sets ANSIBLE_BECOME (tripleoclient runs the deploy steps and
	// the scale playbook with ANSIBLE_BECOME=True).
	Become bool
	// PrivateKey sets ANSIBLE_PRIVATE_KEY_FILE.
	PrivateKey string
	// IgnoreUnreachable makes an unreachable host (ansible-playbook exit
	// code 4, nothing failed) a success, as tripleoclient's node delete
	// does for nodes already gone.
	IgnoreUnreachable bool
	// Timeout bounds the run (0: none).
	Timeout time.Duration
	// Env is added to the run's environment (KEY=VALUE).
	Env []string
	// Command is the ansible-playbook command (default "ansible-playbook").
	Command string
	// Now is the clock (for the log's rotation name).
	Now func() time.Time
}

// Failure is one failed task on one host.
type Failure struct {
	Host        string `json:"host"`
	Task        string `json:"task"`
	Msg         string `json:"msg"`
	Item        string `json:"item,omitempty"`
	Unreachable bool   `json:"unreachable,omitempty"`
}

// Recap is a host's line of the PLAY RECAP.
type Recap struct {
	OK          int `json:"ok"`
	Changed     int `json:"changed"`
	Unreachable int `json:"unreachable"`
	Failed      int `json:"failed"`
	Skipped     int `json:"skipped"`
	Rescued     int `json:"rescued"`
	Ignored     int `json:"ignored"`
}

// Result is the outcome of a run.
type Result struct {
	Playbook string
	Command  []string
	// CommandFile is the script that runs it again by hand.
	CommandFile string
	Log         string
	Cfg         string
	RC          int
	Recap       map[string]Recap
	Failures    []Failure
	// Errors are ansible-playbook's own "ERROR!" messages (a playbook it
	// cannot load, an inventory it cannot parse).
	Errors []string
	// Failed is true when the run failed (rc not 0, but for an ignored
	// unreachable host); Summary then says what failed in a few lines.
	Failed  bool
	Summary []string
	Changed bool
}

// Run runs the playbook. An error is returned only when it could not be
// run at all; a playbook that fails is a Result with Failed set.
func Run(ctx context.Context, o Options) (*Result, error) {
	if o.Dir == "" || o.Playbook == "" {
		return nil, fmt.Errorf("the config-download directory and the playbook are required")
	}
	if o.LogDir == "" {
		o.LogDir = o.Dir
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Command == "" {
		o.Command = "ansible-playbook"
	}
	book := o.Playbook
	if !filepath.IsAbs(book) {
		book = filepath.Join(o.Dir, book)
	}
	if st, err := os.Stat(book); err != nil || !st.Mode().IsRegular() {
		return nil, fmt.Errorf("playbook %s: %v (is %s rendered? config_download writes it from the stack's RoleConfig)", book, errOr(err, "not a file"), filepath.Base(book))
	}
	inv := o.Inventory
	if inv == "" {
		inv = filepath.Join(o.Dir, configdownload.InventoryFile)
	}
	if _, err := os.Stat(inv); err != nil {
		return nil, fmt.Errorf("inventory %s: %w", inv, err)
	}
	if _, err := exec.LookPath(o.Command); err != nil {
		return nil, fmt.Errorf("%s is not installed (apt-get install ansible-core): %w", o.Command, err)
	}
	if _, err := fsutil.EnsurePrivateDir(o.LogDir); err != nil {
		return nil, err
	}
	res := &Result{Playbook: book, Log: filepath.Join(o.LogDir, configdownload.AnsibleLogFile), Recap: map[string]Recap{},
		Failures: []Failure{}, Errors: []string{}, Summary: []string{}}
	res.Cfg = o.AnsibleCfg
	if res.Cfg == "" {
		res.Cfg = filepath.Join(o.LogDir, configdownload.AnsibleCfgFile)
		if err := fsutil.WriteFileAtomic(res.Cfg, Config(o.Dir, o.LogDir), fsutil.SecretFileMode); err != nil {
			return nil, fmt.Errorf("writing %s: %w", res.Cfg, err)
		}
	}
	if err := rotateLog(res.Log, o.Now()); err != nil {
		return nil, err
	}

	args := []string{"-i", inv}
	if o.Limit != "" {
		args = append(args, "--limit", o.Limit)
	}
	if len(o.Tags) > 0 {
		args = append(args, "--tags", strings.Join(o.Tags, ","))
	}
	if len(o.SkipTags) > 0 {
		args = append(args, "--skip-tags", strings.Join(o.SkipTags, ","))
	}
	if o.Check {
		args = append(args, "--check")
	}
	if o.Diff {
		args = append(args, "--diff")
	}
	if len(o.ExtraVars) > 0 {
		b, err := json.Marshal(o.ExtraVars)
		if err != nil {
			return nil, fmt.Errorf("extra vars: %w", err)
		}
		args = append(args, "-e", string(b))
	}
	args = append(args, book)
	res.Command = append([]string{o.Command}, args...)
	env := []string{
		"ANSIBLE_CONFIG=" + res.Cfg,
		"ANSIBLE_LOG_PATH=" + res.Log,
		// The output we read failures from: the default callback, one
		// JSON result per line, no colours.
		"ANSIBLE_STDOUT_CALLBACK=default",
		"ANSIBLE_CALLBACK_RESULT_FORMAT=json",
		"ANSIBLE_CALLBACK_FORMAT_PRETTY=false",
		"ANSIBLE_NOCOLOR=1",
		"ANSIBLE_FORCE_COLOR=0",
		"ANSIBLE_RETRY_FILES_ENABLED=False",
		"ANSIBLE_BECOME=" + strconv.FormatBool(o.Become),
	}
	if o.PrivateKey != "" {
		env = append(env, "ANSIBLE_PRIVATE_KEY_FILE="+o.PrivateKey)
	}
	env = append(env, o.Env...)
	res.CommandFile = filepath.Join(o.LogDir, configdownload.AnsibleCommandFile)
	if err := writeCommand(res.CommandFile, o.Dir, env, res.Command); err != nil {
		return nil, err
	}

	if o.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.Timeout)
		defer cancel()
	}
	cmd := exec.Command(o.Command, args...)
	cmd.Dir = o.Dir
	cmd.Env = append(withoutKeys(os.Environ(), env), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd.Stdout, cmd.Stderr = pw, pw
	if err := cmd.Start(); err != nil {
		pr.Close()
		pw.Close()
		return nil, fmt.Errorf("starting %s: %w", o.Command, err)
	}
	pw.Close()
	p := newParser()
	done := make(chan error, 1)
	go func() { done <- p.read(pr) }()
	stop := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
			// The whole process group: ansible-playbook and its workers.
			syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
			select {
			case <-stop:
			case <-time.After(10 * time.Second):
				syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			}
		case <-stop:
		}
	}()
	readErr := <-done
	werr := cmd.Wait()
	close(stop)
	pr.Close()
	res.RC = 0
	if werr != nil {
		var ee *exec.ExitError
		if !errors.As(werr, &ee) {
			return nil, fmt.Errorf("running %s: %w", o.Command, werr)
		}
		res.RC = ee.ExitCode()
	}
	if readErr != nil {
		res.Errors = append(res.Errors, "reading the output: "+readErr.Error())
	}
	p.finish(res)
	res.Changed = true
	if ctx.Err() != nil {
		res.Errors = append(res.Errors, fmt.Sprintf("stopped after %s (timeout)", o.Timeout))
	}
	unreachableOnly := res.RC == 4 && len(res.Errors) == 0
	for _, f := range res.Failures {
		if !f.Unreachable {
			unreachableOnly = false
		}
	}
	res.Failed = res.RC != 0 && !(o.IgnoreUnreachable && unreachableOnly)
	if res.Failed {
		res.Summary = summary(res)
	}
	return res, nil
}

func errOr(err error, s string) any {
	if err != nil {
		return err
	}
	return s
}

// withoutKeys drops from env the variables that set defines.
func withoutKeys(env, set []string) []string {
	keys := map[string]bool{}
	for _, kv := range set {
		keys[strings.SplitN(kv, "=", 2)[0]] = true
	}
	out := make([]string, 0, len(env))
	for _, kv := range env {
		if !keys[strings.SplitN(kv, "=", 2)[0]] {
			out = append(out, kv)
		}
	}
	return out
}

// Config is the ansible.cfg of a run: tripleo-common's
// write_default_ansible_cfg settings (stable/wallaby), for playbooks in dir
// and logs in logDir, with the default stdout callback (tripleo-ansible's
// tripleo_dense and its other callbacks are not installed here: the
// failures are read from the default callback's output).
func Config(dir, logDir string) []byte {
	forks := runtime.NumCPU() * 4
	if forks > 100 {
		forks = 100
	}
	validations := "/usr/share/ansible/validation-playbooks"
	lines := []string{
		"# Written by ephemeral.heat for the playbooks of this directory, with the settings",
		"# tripleo-common's utils/ansible.py write_default_ansible_cfg writes (stable/wallaby).",
		"[defaults]",
		"retry_files_enabled = False",
		"roles_path = " + dir + "/roles:/root/.ansible/roles:/usr/share/ansible/tripleo-roles:/usr/share/ansible/roles:/etc/ansible/roles:" + dir,
		"library = /root/.ansible/plugins/modules:/usr/share/ansible/tripleo-plugins/modules:/usr/share/ansible/plugins/modules:/usr/share/ansible-modules:" + validations + "/library",
		"callback_plugins = ~/.ansible/plugins/callback:/usr/share/ansible/tripleo-plugins/callback:/usr/share/ansible/plugins/callback:" + validations + "/callback_plugins",
		"stdout_callback = default",
		"action_plugins = ~/.ansible/plugins/action:/usr/share/ansible/plugins/action:/usr/share/ansible/tripleo-plugins/action:" + validations + "/action_plugins",
		"lookup_plugins = /root/.ansible/plugins/lookup:/usr/share/ansible/tripleo-plugins/lookup:/usr/share/ansible/plugins/lookup:" + validations + "/lookup_plugins",
		"filter_plugins = ~/.ansible/plugins/filter:/usr/share/ansible/plugins/filter:/usr/share/ansible/tripleo-plugins/filter:" + validations + "/filter_plugins",
		"log_path = " + filepath.Join(logDir, configdownload.AnsibleLogFile),
		"forks = " + strconv.Itoa(forks),
		"timeout = 30",
		"gather_timeout = 30",
		"gathering = smart",
		"fact_caching = jsonfile",
		"fact_caching_connection = ~/.ansible/fact_cache",
		"gather_subset = !all,min",
		"inject_facts_as_vars = false",
		"internal_poll_interval = 0.01",
		"interpreter_python = auto",
		"fact_caching_timeout = 7200",
		"",
		"[ssh_connection]",
		"ssh_args = -o UserKnownHostsFile=/dev/null -o StrictHostKeyChecking=no -o ControlMaster=auto -o ControlPersist=30m -o ServerAliveInterval=5 -o ServerAliveCountMax=5 -o PreferredAuthentications=publickey",
		"control_path_dir = " + filepath.Join(logDir, configdownload.AnsibleSSHDir),
		"retries = 8",
		"pipelining = True",
		"scp_if_ssh = True",
		"",
	}
	return []byte(strings.Join(lines, "\n"))
}

// LogRotationLayout is the time suffix of an earlier log
// (ansible.log-<datetime.now() %Y-%m-%dT%H:%M:%S>).
const LogRotationLayout = "2006-01-02T15:04:05"

// rotateLog renames a non-empty log as tripleo-common does and starts an
// empty one, mode 0600 (tripleo-common: 0640; the log may hold secrets).
func rotateLog(log string, now time.Time) error {
	if st, err := os.Stat(log); err == nil && st.Size() > 0 {
		dest := log + "-" + now.Format(LogRotationLayout)
		for i := 1; ; i++ {
			if _, err := os.Lstat(dest); errors.Is(err, os.ErrNotExist) {
				break
			}
			dest = fmt.Sprintf("%s-%s.%d", log, now.Format(LogRotationLayout), i)
		}
		if err := os.Rename(log, dest); err != nil {
			return fmt.Errorf("keeping the previous log: %w", err)
		}
	}
	f, err := os.OpenFile(log, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, fsutil.SecretFileMode)
	if err != nil {
		return fmt.Errorf("creating the log: %w", err)
	}
	if err := f.Chmod(fsutil.SecretFileMode); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// writeCommand writes the script that runs the same command by hand
// (tripleoclient's ansible-playbook-command.sh, reproduce_command).
func writeCommand(path, dir string, env, argv []string) error {
	var b strings.Builder
	b.WriteString("#!/usr/bin/env bash\n# Runs the playbook again as ephemeral.heat ran it; extra arguments are passed on.\n")
	b.WriteString("echo -e \"Exporting environment variables\"\n")
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		fmt.Fprintf(&b, "export %s=%s\n", k, quote(v))
	}
	b.WriteString("echo -e \"Running Ansible command\"\n")
	fmt.Fprintf(&b, "cd %s || exit 1\n", quote(dir))
	for i, a := range argv {
		if i > 0 {
			b.WriteString(" ")
		}
		b.WriteString(quote(a))
	}
	b.WriteString(" \"$@\"\n")
	return fsutil.WriteFileAtomic(path, []byte(b.String()), fsutil.PrivateDirMode)
}

var safeWord = regexp.MustCompile(`^[A-Za-z0-9_@%+=:,./-]+$`)

func quote(s string) string {
	if s != "" && safeWord.MatchString(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'"'"'`) + "'"
}

// sortedHosts returns the recap's hosts in order.
func sortedHosts(r map[string]Recap) []string {
	h := make([]string, 0, len(r))
	for k := range r {
		h = append(h, k)
	}
	sort.Strings(h)
	return h
}

// Hosts lists the hosts of the PLAY RECAP.
func (r *Result) Hosts() []string { return sortedHosts(r.Recap) }

// readLines calls fn for every line of r, a line longer than max cut to
// max bytes (the rest is read and dropped).
func readLines(r io.Reader, max int, fn func(string)) error {
	br := bufio.NewReaderSize(r, 64*1024)
	var line []byte
	for {
		chunk, isPrefix, err := br.ReadLine()
		if len(chunk) > 0 && len(line) < max {
			room := max - len(line)
			if len(chunk) > room {
				chunk = chunk[:room]
			}
			line = append(line, chunk...)
		}
		if err != nil {
			if len(line) > 0 {
				fn(string(line))
			}
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		if !isPrefix {
			fn(string(line))
			line = line[:0]
		}
	}
}
