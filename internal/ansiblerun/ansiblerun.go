// Package ansiblerun runs a playbook of a config-download directory the way
// TripleO runs its deploy steps and scale playbook: ansible-playbook with the
// ansible.cfg tripleo-common writes into that directory (utils/ansible.py
// write_default_ansible_cfg: ssh settings, fact cache) and the environment
// python-tripleoclient's utils.run_ansible_playbook adds (become, the
// private key, --limit/--tags/--skip-tags), with the command kept beside the
// log to run again by hand. The output is streamed to the run's own log as
// it comes (ansible.log-<UTC start>, ansible.log a hard link to the latest);
// what failed (host, task, message) is read from it and summed up in a few
// lines.
//
// Before anything runs, the inputs (playbook, inventory, ansible.cfg,
// private key) are read with fsutil's bounded reader, and the log
// directory and the files written there follow pathguard's policy (a
// symlink, another user's or a group- or other-writable directory is
// refused, never chmodded; no file is written through a symlink). One run
// at a time writes in a log directory (AcquireLock). A run that matched no
// host, or whose tags selected no task, fails unless allowed. A run stopped
// (a signal, its timeout) has every process it started stopped with it.
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
	// LogDir receives ansible.cfg, the logs and the command (default Dir;
	// a new temporary directory in check mode). An existing one must be a
	// private directory of the user running the module (pathguard); a
	// missing one is created, mode 0700.
	LogDir string
	// Playbook is a file name in Dir, or a path.
	Playbook string
	// Playbooks, when given, are run instead of Playbook, in order, in one
	// ansible-playbook run: a playbook importing each is written into the
	// log directory (tripleoclient's tripleo-multi-playbook.yaml).
	Playbooks []string
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
	// AllowNoHosts makes a run that matched no host, or whose tags
	// selected no task, a success (it fails otherwise).
	AllowNoHosts bool
	// Timeout bounds the run (0: none).
	Timeout time.Duration
	// KillGrace is the time the processes of a stopped run (timeout,
	// signal) get between SIGTERM and SIGKILL (default DefaultKillGrace).
	KillGrace time.Duration
	// LockToken is the token of the working dir lock a caller holds and
	// hands over (AcquireLock); LockWait bounds the wait for that lock.
	LockToken string
	LockWait  time.Duration
	// Env is added to the run's environment (KEY=VALUE).
	Env []string
	// Command is the ansible-playbook command (default "ansible-playbook").
	Command string
	// Now is the clock (for the logs' names).
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
	// Playbook is what ran: the playbook, or the one importing Playbooks.
	Playbook  string
	Playbooks []string
	Command   []string
	// CommandFile is the script that runs it again by hand.
	CommandFile string
	// LogDir is where the configuration, the logs and the command went.
	LogDir string
	// Log is this run's own log (LogName in LogDir links to the latest).
	Log      string
	Cfg      string
	RC       int
	Recap    map[string]Recap
	Failures []Failure
	// Errors are ansible-playbook's own "ERROR!" messages (a playbook it
	// cannot load, an inventory it cannot parse, an ansible.cfg it
	// cannot read).
	Errors []string
	// Warnings are ansible-playbook's "[WARNING]:" messages.
	Warnings []string
	// SelectedNothing says what selected nothing when the run matched no
	// host, or its tags no task ("" when something ran).
	SelectedNothing string
	// Interrupted names the signal that stopped the run ("" when none).
	Interrupted string
	// Failed is true when the run failed (rc not 0, but for an ignored
	// unreachable host; nothing selected, unless allowed; interrupted);
	// Summary then says what failed in a few lines.
	Failed  bool
	Summary []string
	Changed bool

	seen        seen
	tail        []string
	cfgGiven    bool
	leftRunning bool
}

// Run runs the playbook. An error is returned only when it could not be
// run at all (nothing ran then); a playbook that fails, or is stopped by a
// signal (ctx canceled with an *Interrupted cause), is a Result with
// Failed set.
func Run(ctx context.Context, o Options) (*Result, error) {
	if o.Dir == "" || (o.Playbook == "" && len(o.Playbooks) == 0) {
		return nil, fmt.Errorf("the config-download directory and the playbook are required")
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Command == "" {
		o.Command = "ansible-playbook"
	}
	if o.KillGrace <= 0 {
		o.KillGrace = DefaultKillGrace
	}
	if err := stopped(ctx, "nothing was written"); err != nil {
		return nil, err
	}
	books, inv, err := checkInputs(o)
	if err != nil {
		return nil, err
	}
	if _, err := exec.LookPath(o.Command); err != nil {
		return nil, fmt.Errorf("%s is not installed (apt-get install ansible-core): %w", o.Command, err)
	}

	// The log directory: checked, created when missing, locked, then its
	// files checked before any is written.
	param, tempDir := "log_dir", false
	switch {
	case o.LogDir == "" && o.Check:
		// The playbook runs with --check; its configuration and log go to a
		// directory of their own, leaving dir as it is.
		tmp, err := os.MkdirTemp("", "overcloud-playbook-check-")
		if err != nil {
			return nil, fmt.Errorf("creating a temporary log_dir for check mode: %w", err)
		}
		o.LogDir, tempDir = tmp, true
	case o.LogDir == "":
		o.LogDir, param = o.Dir, "dir"
	}
	o.LogDir = filepath.Clean(o.LogDir)
	res, err := start(ctx, o, param, books, inv)
	if err != nil && tempDir {
		os.RemoveAll(o.LogDir)
	}
	return res, err
}

// stopped is the error of a run stopped by ctx before ansible-playbook
// started (nil when ctx is live); what says what was written.
func stopped(ctx context.Context, what string) error {
	if ctx.Err() == nil {
		return nil
	}
	return fmt.Errorf("%v before ansible-playbook started: nothing ran (%s)", context.Cause(ctx), what)
}

// MultiPlaybookFile is the playbook a run of several writes into the log
// directory, importing each in order (tripleoclient's name).
const MultiPlaybookFile = "tripleo-multi-playbook.yaml"

// multiPlaybook imports each of books, in order.
func multiPlaybook(books []string) []byte {
	var b strings.Builder
	b.WriteString("# Written by ephemeral.heat: the playbooks of one run, in order (tripleoclient's tripleo-multi-playbook.yaml).\n")
	for _, p := range books {
		fmt.Fprintf(&b, "- import_playbook: %s\n", strconv.Quote(p))
	}
	return []byte(b.String())
}

// checkInputs checks the playbook(s), the inventory, the user's
// ansible.cfg and the private key, and returns the playbooks' and the
// inventory's paths.
func checkInputs(o Options) (books []string, inv string, err error) {
	param, names := "playbook", []string{o.Playbook}
	if len(o.Playbooks) > 0 {
		param, names = "playbooks", o.Playbooks
	}
	for _, book := range names {
		if !filepath.IsAbs(book) {
			book = filepath.Join(o.Dir, book)
		}
		if err := checkInput(param, book, playbookLimit,
			fmt.Sprintf("is %s rendered? config_download writes it from the stack's RoleConfig", filepath.Base(book))); err != nil {
			return nil, "", err
		}
		books = append(books, book)
	}
	inv = o.Inventory
	if inv == "" {
		inv = filepath.Join(o.Dir, configdownload.InventoryFile)
	}
	if err := checkInput("inventory", inv, inventoryLimit, "the inventory is a YAML or INI file of hosts"); err != nil {
		return nil, "", err
	}
	if o.AnsibleCfg != "" {
		if err := checkInput("ansible_cfg", o.AnsibleCfg, ansibleCfgLimit, "leave ansible_cfg out to use the one written into log_dir"); err != nil {
			return nil, "", err
		}
	}
	if o.PrivateKey != "" {
		if err := checkInput("private_key", o.PrivateKey, privateKeyLimit, ""); err != nil {
			return nil, "", err
		}
	}
	return books, inv, nil
}

// start prepares the log directory (named param) and runs the playbook.
func start(ctx context.Context, o Options, param string, books []string, inv string) (*Result, error) {
	if _, err := prepareLogDir(param, o.LogDir); err != nil {
		return nil, err
	}
	release, err := AcquireLock(o.LogDir, o.LockToken, o.LockWait)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", param, o.LogDir, err)
	}
	defer release()
	names := []string{LogName, configdownload.AnsibleCommandFile}
	if o.AnsibleCfg == "" {
		names = append(names, configdownload.AnsibleCfgFile)
	}
	if len(books) > 1 {
		names = append(names, MultiPlaybookFile)
	}
	for _, n := range names {
		if err := checkRunFile(param, o.LogDir, n); err != nil {
			return nil, err
		}
	}
	if err := stopped(ctx, "no file was written"); err != nil {
		return nil, err
	}
	// Temporary names a run killed meanwhile left.
	fsutil.RemoveStaleTemps(o.LogDir, LogName)

	book := books[0]
	if len(books) > 1 {
		book = filepath.Join(o.LogDir, MultiPlaybookFile)
		if err := fsutil.WriteFileAtomic(book, multiPlaybook(books), fsutil.SecretFileMode); err != nil {
			return nil, fmt.Errorf("writing %s: %w", book, err)
		}
	}
	res := &Result{Playbook: book, Playbooks: books, LogDir: o.LogDir, Recap: map[string]Recap{}, Failures: []Failure{}, Errors: []string{},
		Warnings: []string{}, Summary: []string{}, cfgGiven: o.AnsibleCfg != ""}
	if res.Log, err = startLog(o.LogDir, o.Now()); err != nil {
		return nil, fmt.Errorf("%s %s: %w", param, o.LogDir, err)
	}
	res.Cfg = o.AnsibleCfg
	if res.Cfg == "" {
		res.Cfg = filepath.Join(o.LogDir, configdownload.AnsibleCfgFile)
		if err := fsutil.WriteFileAtomic(res.Cfg, Config(o.Dir, o.LogDir, res.Log), fsutil.SecretFileMode); err != nil {
			return nil, fmt.Errorf("writing %s: %w", res.Cfg, err)
		}
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
		// JSON result per line, no colours, every task's banner printed
		// (the tasks a run's tags selected are counted by them).
		"ANSIBLE_STDOUT_CALLBACK=default",
		"ANSIBLE_CALLBACK_RESULT_FORMAT=json",
		"ANSIBLE_CALLBACK_FORMAT_PRETTY=false",
		"ANSIBLE_DISPLAY_SKIPPED_HOSTS=True",
		"ANSIBLE_DISPLAY_OK_HOSTS=True",
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
	if err := stopped(ctx, "the log "+res.Log+" is empty"); err != nil {
		return nil, err
	}
	if err := execute(ctx, o, res, args, env); err != nil {
		return nil, err
	}
	judge(o, res, inv)
	return res, nil
}

// execute runs ansible-playbook, reads its output and, when ctx is done
// (a signal, the timeout), stops every process of the run.
func execute(ctx context.Context, o Options, res *Result, args, env []string) error {
	if o.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.Timeout)
		defer cancel()
	}
	marker := newMarker()
	cmd := exec.Command(o.Command, args...)
	cmd.Dir = o.Dir
	// The marker is not in the command file: a run by hand is not ours to stop.
	runEnv := append(append([]string{}, env...), marker)
	cmd.Env = append(withoutKeys(os.Environ(), runEnv), runEnv...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	pr, pw, err := os.Pipe()
	if err != nil {
		return err
	}
	cmd.Stdout, cmd.Stderr = pw, pw
	if err := cmd.Start(); err != nil {
		pr.Close()
		pw.Close()
		return fmt.Errorf("starting %s: %w", o.Command, err)
	}
	pw.Close()
	p := newParser()
	readDone := make(chan error, 1)
	go func() { readDone <- p.read(pr) }()
	exited := make(chan struct{})
	var werr error
	go func() { werr = cmd.Wait(); close(exited) }()

	var left []int
	stoppedRun := false
	select {
	case <-exited:
	case <-ctx.Done():
		stoppedRun = true
		left = stopRun(cmd.Process.Pid, marker, o.KillGrace, exited)
		<-exited
	}
	// The output ends when the last process holding it is gone; one that
	// outlives ansible-playbook (started in the background) is not waited
	// for beyond a bound.
	var readErr error
	select {
	case readErr = <-readDone:
	case <-time.After(outputGrace):
		pr.Close()
		<-readDone
		res.Warnings = append(res.Warnings, fmt.Sprintf("a process the run started still held its output %s after ansible-playbook ended; "+
			"its later output is only in the log", outputGrace))
	}
	pr.Close()
	res.RC = 0
	if werr != nil {
		var ee *exec.ExitError
		if !errors.As(werr, &ee) {
			return fmt.Errorf("running %s: %w", o.Command, werr)
		}
		res.RC = ee.ExitCode()
	}
	if readErr != nil {
		res.Errors = append(res.Errors, "reading the output: "+readErr.Error())
	}
	p.finish(res)
	res.Changed = true
	if !stoppedRun {
		return nil
	}
	var why string
	var sig *Interrupted
	switch cause := context.Cause(ctx); {
	case errors.As(cause, &sig):
		res.Interrupted = sig.Name()
		why = "interrupted by " + sig.Name()
	default:
		why = fmt.Sprintf("stopped after %s (timeout)", o.Timeout)
		res.Errors = append(res.Errors, why)
	}
	note := why + ": ansible-playbook and every process of the run were stopped (SIGTERM, then SIGKILL to any left after " + o.KillGrace.String() + ")"
	if len(left) > 0 {
		note = why + ": " + pidList(left) + " of the run could not be stopped"
		res.Errors = append(res.Errors, note)
		res.leftRunning = true
	}
	appendLog(res.Log, note)
	return nil
}

// outputGrace bounds the wait for the end of the output once
// ansible-playbook has exited.
const outputGrace = 5 * time.Second

// judge decides whether the run failed, and sums it up when it did.
func judge(o Options, res *Result, inv string) {
	unreachableOnly := res.RC == 4 && len(res.Errors) == 0
	for _, f := range res.Failures {
		if !f.Unreachable {
			unreachableOnly = false
		}
	}
	res.Failed = res.RC != 0 && !(o.IgnoreUnreachable && unreachableOnly)
	if res.Interrupted == "" {
		res.SelectedNothing = selectedNothing(o, res, inv)
	}
	switch {
	case res.Interrupted != "":
		res.Failed = true
	case res.SelectedNothing != "" && o.AllowNoHosts:
		res.Failed = false
	case res.SelectedNothing != "":
		res.Failed = true
	}
	if res.Failed {
		res.Summary = summary(res)
	}
}

// noHostsError is how ansible-playbook refuses a --limit (or host
// pattern) that leaves no host at all.
const noHostsError = "no hosts to target"

// selectedNothing says what selected nothing in a run that ran no task on
// any host: the inventory (empty, or not parsed), the limit, the plays'
// host patterns, or the tags ("" when something ran).
func selectedNothing(o Options, res *Result, inv string) string {
	s := res.seen
	limitRefused := res.RC == 1 && len(res.Failures) == 0 && len(res.Errors) == 1 && strings.Contains(res.Errors[0], noHostsError)
	noHosts := limitRefused || (res.RC == 0 && s.recap && len(res.Recap) == 0 && (s.plays == 0 || s.noHostPlays == s.plays))
	if noHosts {
		var inventoryNotes []string
		empty := false
		for _, w := range res.Warnings {
			switch {
			case strings.Contains(w, "provided hosts list is empty"):
				empty = true
			case strings.Contains(w, inv) || strings.Contains(w, "inventory") || strings.Contains(w, "group definition"):
				inventoryNotes = append(inventoryNotes, clip(w))
			}
		}
		var why string
		switch {
		case empty:
			why = fmt.Sprintf("inventory %s holds no host (is it empty, or not an inventory?)", inv)
		case o.Limit != "":
			why = fmt.Sprintf("limit %q matched no host of inventory %s that a play of %s targets", o.Limit, inv, filepath.Base(res.Playbook))
		default:
			why = fmt.Sprintf("no play of %s targets a host of inventory %s", filepath.Base(res.Playbook), inv)
		}
		if len(inventoryNotes) > 0 {
			why += "; ansible-playbook warned: " + strings.Join(inventoryNotes, "; ")
		}
		return why
	}
	if res.RC == 0 && s.tasks == 0 && (len(o.Tags) > 0 || len(o.SkipTags) > 0) {
		var sel []string
		if len(o.Tags) > 0 {
			sel = append(sel, fmt.Sprintf("tags %s", strings.Join(o.Tags, ",")))
		}
		if len(o.SkipTags) > 0 {
			sel = append(sel, fmt.Sprintf("skip_tags %s", strings.Join(o.SkipTags, ",")))
		}
		return fmt.Sprintf("%s selected no task of %s (ansible-playbook --list-tags %s lists its tags)",
			strings.Join(sel, " and "), filepath.Base(res.Playbook), res.Playbook)
	}
	return ""
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
// and ssh's control sockets in logDir, with the run's own log, with the default stdout callback (tripleo-ansible's
// tripleo_dense and its other callbacks are not installed here: the
// failures are read from the default callback's output).
func Config(dir, logDir, log string) []byte {
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
		"log_path = " + log,
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
