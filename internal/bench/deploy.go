package bench

import (
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/ephemeral-heat/ephemeral-heat/internal/configdownload"
	"github.com/ephemeral-heat/ephemeral-heat/internal/heatdb"
	"github.com/ephemeral-heat/ephemeral-heat/internal/heatdir"
	"github.com/ephemeral-heat/ephemeral-heat/internal/launch/backend"
	"github.com/ephemeral-heat/ephemeral-heat/internal/proc"
	"github.com/ephemeral-heat/ephemeral-heat/internal/testutil/ansibletest"
	"github.com/ephemeral-heat/ephemeral-heat/internal/testutil/mariadbtest"
	"github.com/ephemeral-heat/ephemeral-heat/tests/tht"
	"github.com/ephemeral-heat/ephemeral-heat/tests/tripleocommon"
)

// The phases of a deploy, in order, as both sides of deploy_playbook_tht
// time them.
const (
	phaseLaunch   = "launch"
	phaseStack    = "stack"
	phaseConfig   = "config-download"
	phaseDump     = "dump+teardown"
	phaseRest     = "rest"
	deployRowName = "deploy_playbook_tht"
)

var deployPhases = []string{phaseLaunch, phaseStack, phaseConfig, phaseDump, phaseRest}

// DeployControllers and DeployComputes are the overcloud of
// deploy_playbook_tht (the one a new user deploys first).
const (
	DeployControllers = 3
	DeployComputes    = 2
)

// phaseTimes is one run's time per phase.
type phaseTimes map[string]time.Duration

// DeployPlaybookTHTRow runs the deploy playbook (playbooks/deploy-overcloud.yml,
// the installed collection) on the real tripleo-heat-templates overcloud
// with 3 Controllers and 2 Computes, from a cold start (a fresh working
// dir, no Heat) to the teardown, against what a TripleO user runs instead,
// composed here phase by phase: tripleoclient's stock ephemeral heat.conf
// with heat-manage db_sync and heat-all on MariaDB (the pod launcher's
// database), heatclient's create waited as tripleoclient waits,
// tripleo-common's own config download and inventory code on the result
// (tests/tripleocommon's harness, timed inside its process), mysqldump of
// Heat's database and heat-all's end (SIGKILL, as tripleoclient's native
// launcher ends it). The playbook's phases come
// from ansible-core's junit callback (each task's time, by the role or
// task that ran it); what ansible-playbook spends outside its tasks
// (start, facts, includes) is "rest".
func DeployPlaybookTHTRow(ctx context.Context, env *Env, rounds int) Row {
	const title = "the deploy playbook on the real THT overcloud (Controller ×3, Compute ×2), cold start to teardown"
	cand := "ansible-playbook playbooks/deploy-overcloud.yml (native heat-all, sqlite; deploy steps off: no real nodes)"
	base := "composed: stock heat.conf db_sync + heat-all on MariaDB, heatclient create, tripleo-common config download + inventory, mysqldump, stop"
	unavailable := func(why string) Row { return Unavailable(deployRowName, title, cand, base, why) }
	root := tripleocommon.RepoRoot()
	ansibleEnv, err := ansibletest.Environ(root)
	if err != nil {
		return unavailable(err.Error())
	}
	if err := tripleocommon.RequirePython(); err != nil {
		return unavailable(err.Error())
	}
	bins, err := mariadbtest.FindBinaries()
	if err != nil {
		return unavailable(err.Error())
	}
	dir, err := os.MkdirTemp(env.Work, "deploy-")
	if err != nil {
		return unavailable(err.Error())
	}
	defer os.RemoveAll(dir)
	w, err := tht.Generate(tht.Options{WorkDir: filepath.Join(dir, "overcloud-deploy"), ControllerCount: DeployControllers, ComputeCount: DeployComputes})
	if err != nil {
		return unavailable("generating the THT workload: " + err.Error())
	}
	tc, err := tripleocommon.ExtractTripleoCommonFrom(w.TripleoCommonSource, filepath.Join(dir, "tripleo-common"))
	if err != nil {
		return unavailable(err.Error())
	}
	srv, t, err := startMariaDB()
	if err != nil {
		return unavailable("starting MariaDB: " + err.Error())
	}
	defer t.Close()
	rt := &RealTHT{W: w}
	var ours, stock []phaseTimes
	n := 0
	s := Interleave(ctx, env.Log, deployRowName, rounds, []Variant{
		{Name: "playbook", Run: func(ctx context.Context) (time.Duration, error) {
			n++
			d, p, err := deployPlaybook(ctx, root, ansibleEnv, filepath.Join(dir, fmt.Sprintf("ours-%d", n)), w)
			if err == nil {
				ours = append(ours, p)
				fmt.Fprintf(env.Log, "  %s playbook phases: %s\n", deployRowName, p)
			}
			return d, err
		}},
		{Name: "stock", Run: func(ctx context.Context) (time.Duration, error) {
			n++
			d, p, err := deployStock(ctx, filepath.Join(dir, fmt.Sprintf("stock-%d", n)), rt, tc, srv, bins.Dump, fmt.Sprintf("heat_stock_%d", n))
			if err == nil {
				stock = append(stock, p)
				fmt.Fprintf(env.Log, "  %s stock phases: %s\n", deployRowName, p)
			}
			return d, err
		}},
	})
	note := fmt.Sprintf("%d hosts; per phase, median seconds ours / stock: %s; ours' phases are its tasks' times (junit callback), "+
		"rest is ansible-playbook outside them and the playbook's own checks and bookkeeping; stock's launch is db_sync + heat-all until "+
		"the API answers, its config-download tripleo-common's code timed inside its process (interpreter start and imports excluded), "+
		"its dump+teardown mysqldump of Heat's database and SIGKILL of heat-all (tripleoclient's native kill_heat); MariaDB %s",
		len(w.Hosts), phaseSplit(ours, stock), srv.Version)
	return NewRow(deployRowName, title, cand, base, s["playbook"], s["stock"], note)
}

// phaseSplit prints each phase's median, ours against stock.
func phaseSplit(ours, stock []phaseTimes) string {
	med := func(runs []phaseTimes, ph string) string {
		var s Samples
		for _, r := range runs {
			s = append(s, r[ph])
		}
		if len(s) == 0 {
			return "–"
		}
		m, _, _ := s.stats()
		return strconv.FormatFloat(m, 'f', 1, 64)
	}
	var parts []string
	for _, ph := range deployPhases {
		parts = append(parts, fmt.Sprintf("%s %s / %s", ph, med(ours, ph), med(stock, ph)))
	}
	return strings.Join(parts, ", ")
}

// deployPlaybook runs the deploy playbook into a fresh working dir and
// returns its wall time and phases.
func deployPlaybook(ctx context.Context, root string, ansibleEnv []string, workDir string, w *tht.Workload) (time.Duration, phaseTimes, error) {
	junit := workDir + "-junit"
	if err := os.MkdirAll(junit, 0o700); err != nil {
		return 0, nil, err
	}
	port, err := proc.FreePort()
	if err != nil {
		return 0, nil, err
	}
	vars, err := json.Marshal(map[string]any{
		"stack_name": w.StackName, "work_dir": workDir, "template": w.Template,
		"environment_files": w.EnvironmentFiles, "parameters": w.Parameters, "stack_timeout": w.TimeoutMins,
		"heat_api_port": port, "run_deploy": false,
		// The workload's passwords file is already among its environments.
		"generate_passwords": false,
		// The nodes of the inventory are not reachable hosts.
		"deploy_node_checks": false,
	})
	if err != nil {
		return 0, nil, err
	}
	cmd := exec.CommandContext(ctx, "ansible-playbook", "-i", "localhost,", "-e", string(vars),
		filepath.Join(root, "playbooks", "deploy-overcloud.yml"))
	cmd.Dir = filepath.Dir(workDir)
	cmd.Env = append(append([]string(nil), ansibleEnv...),
		"ANSIBLE_CALLBACKS_ENABLED=ansible.builtin.junit", "JUNIT_OUTPUT_DIR="+junit, "JUNIT_HIDE_TASK_ARGUMENTS=true")
	start := time.Now()
	out, err := cmd.CombinedOutput()
	d := time.Since(start)
	if err != nil {
		return d, nil, fmt.Errorf("deploy-overcloud.yml: %v: %s", err, tailString(string(out), 1500))
	}
	tasks, err := readJUnit(junit)
	if err != nil {
		return d, nil, err
	}
	return d, playbookPhases(tasks, d), nil
}

// junitTask is one task of the junit callback's report.
type junitTask struct {
	Class string  `xml:"classname,attr"`
	Name  string  `xml:"name,attr"`
	Time  float64 `xml:"time,attr"`
}

// readJUnit reads the tasks of the one report in dir, in order.
func readJUnit(dir string) ([]junitTask, error) {
	files, _ := filepath.Glob(filepath.Join(dir, "*.xml"))
	if len(files) != 1 {
		return nil, fmt.Errorf("want one junit report in %s, found %d", dir, len(files))
	}
	b, err := os.ReadFile(files[0])
	if err != nil {
		return nil, err
	}
	var doc struct {
		Suites []struct {
			Cases []junitTask `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("junit report %s: %w", files[0], err)
	}
	var tasks []junitTask
	for _, s := range doc.Suites {
		tasks = append(tasks, s.Cases...)
	}
	if len(tasks) == 0 {
		return nil, fmt.Errorf("junit report %s lists no task", files[0])
	}
	return tasks, nil
}

// playbookPhases charges each task to a phase by the role that ran it: the
// first run of ephemeral_heat launches, the next one dumps and tears down;
// overcloud_stack's tasks and the save of the stack's outputs are the
// stack; config_download's and the export files are config-download;
// anything else, and the wall time outside the tasks, is rest.
func playbookPhases(tasks []junitTask, wall time.Duration) phaseTimes {
	p := phaseTimes{}
	heatRole := phaseLaunch
	var sum time.Duration
	for _, t := range tasks {
		d := time.Duration(t.Time * float64(time.Second))
		sum += d
		ph := phaseRest
		switch {
		case strings.Contains(t.Class, "/roles/ephemeral_heat/"):
			ph = heatRole
		case strings.Contains(t.Class, "/roles/overcloud_stack/"), strings.Contains(t.Name, "Save the stack's outputs"):
			ph = phaseStack
			heatRole = phaseDump
		case strings.Contains(t.Class, "/roles/config_download/"), strings.Contains(t.Name, "Write the export files"):
			ph = phaseConfig
			heatRole = phaseDump
		}
		p[ph] += d
	}
	if wall > sum {
		p[phaseRest] += wall - sum
	}
	return p
}

// deployStock runs the composed stock deploy: launch, create, config
// download, dump and teardown, each timed.
func deployStock(ctx context.Context, dir string, rt *RealTHT, tc tripleocommon.Tree, srv *mariadbtest.Server, dumpBin, dbName string) (time.Duration, phaseTimes, error) {
	p := phaseTimes{}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return 0, nil, err
	}
	if err := srv.CreateDB(ctx, dbName); err != nil {
		return 0, nil, err
	}
	defer srv.DropDB(context.Background(), dbName)
	db, err := heatdb.Parse(srv.URL(dbName))
	if err != nil {
		return 0, nil, err
	}
	start := time.Now()
	h, err := startBare(ctx, filepath.Join(dir, "heat"), db, nil)
	p[phaseLaunch] = time.Since(start)
	if err != nil {
		return 0, nil, err
	}
	defer h.kill()
	d, err := Heatclient(ctx, h.endpoint, "create", rt, false, "CREATE_COMPLETE")
	p[phaseStack] = d
	if err != nil {
		return 0, nil, err
	}
	r, err := tripleocommon.RunReference(ctx, tc, h.endpoint, rt.W.StackName, filepath.Join(dir, "config-download", rt.W.StackName),
		configdownload.DefaultSSHNetwork, configdownload.DefaultSSHUser)
	if err != nil {
		return 0, nil, err
	}
	p[phaseConfig] = time.Duration((r.DownloadSeconds + r.InventorySeconds) * float64(time.Second))
	dumpStart := time.Now()
	if err := srv.DumpTo(ctx, dumpBin, filepath.Join(dir, "heat-db.sql"), dbName); err != nil {
		return 0, nil, err
	}
	// tripleoclient's native launcher ends heat-all with SIGKILL.
	h.kill()
	p[phaseDump] = time.Since(dumpStart)
	var total time.Duration
	for _, d := range p {
		total += d
	}
	return total, p, nil
}

// bareHeat is a heat-all started by startBare.
type bareHeat struct {
	cmd      *exec.Cmd
	endpoint string
	done     chan error
}

// startBare writes a heat.conf (tripleoclient's stock one plus extra) for
// db in dir, runs heat-manage db_sync and starts heat-all, and returns once
// GET /stacks answers.
func startBare(ctx context.Context, dir string, db heatdb.DB, extra map[string]map[string]string) (*bareHeat, error) {
	port, err := proc.FreePort()
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	hd, err := heatdir.At(dir)
	if err != nil {
		return nil, err
	}
	if err := hd.EnsureSub(heatdir.LogDir); err != nil {
		return nil, err
	}
	if db.Kind == heatdb.SQLite {
		db.Path = hd.File(heatdir.SQLiteFile)
	}
	cfg := heatdir.Config{Dir: dir, BindHost: "127.0.0.1", APIPort: port, Database: db,
		Now: time.Now(), Extra: extra, PythonPath: hd.File(heatdir.PythonDir)}
	if err := hd.WriteConfig(cfg); err != nil {
		return nil, err
	}
	env := heatdir.PythonEnv(os.Environ(), cfg.PythonPath)
	conf := hd.File(heatdir.HeatConf)
	sync := exec.CommandContext(ctx, "heat-manage", "--config-file", conf, "db_sync")
	sync.Env = env
	if out, err := sync.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("db_sync: %v: %s", err, out)
	}
	cmd := exec.Command("heat-all", "--config-file", conf)
	cmd.Env = env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	h := &bareHeat{cmd: cmd, endpoint: cfg.Endpoint(), done: make(chan error, 1)}
	go func() { h.done <- cmd.Wait() }()
	deadline := time.Now().Add(180 * time.Second)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		if backend.APIAnswers(ctx, h.endpoint) == nil {
			return h, nil
		}
		select {
		case err := <-h.done:
			h.done <- err
			return nil, fmt.Errorf("heat-all exited before its API answered: %v", err)
		case <-time.After(250 * time.Millisecond):
		}
	}
	h.kill()
	return nil, errors.New("heat-all did not answer within 180 s")
}

// kill ends heat-all's process group at once (idempotent).
func (h *bareHeat) kill() {
	syscall.Kill(-h.cmd.Process.Pid, syscall.SIGKILL)
	select {
	case err := <-h.done:
		h.done <- err
	case <-time.After(10 * time.Second):
	}
}

// String lists a run's phases in their order (for the log).
func (p phaseTimes) String() string {
	var parts []string
	for _, ph := range deployPhases {
		if d, ok := p[ph]; ok {
			parts = append(parts, fmt.Sprintf("%s=%.1fs", ph, d.Seconds()))
		}
	}
	return strings.Join(parts, " ")
}
