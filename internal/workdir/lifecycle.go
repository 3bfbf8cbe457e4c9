package workdir

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/ephemeral-heat/ephemeral-heat/internal/fsutil"
	"github.com/ephemeral-heat/ephemeral-heat/internal/lifecycle"
)

// LifecycleEnvironment is the lifecycle environment of stage under
// templatesDir, the tripleo-heat-templates root ("" for a plain deploy),
// which must be a regular file there (tripleoclient's
// utils.prepend_environment refuses a missing one too).
func LifecycleEnvironment(stage, templatesDir string) (string, error) {
	if stage == "" || stage == lifecycle.Deploy {
		return "", nil
	}
	rel := lifecycle.Environment(stage)
	if rel == "" {
		return "", fmt.Errorf("stage %q is not one of %s", stage, strings.Join(lifecycle.Stages, ", "))
	}
	if templatesDir == "" {
		return "", fmt.Errorf("templates_dir is required for %s: the tripleo-heat-templates root that holds %s", lifecycle.Title(stage), rel)
	}
	p := filepath.Join(templatesDir, filepath.FromSlash(rel))
	f, _, err := fsutil.OpenInput(p, "lifecycle environment")
	if err != nil {
		return "", fmt.Errorf("templates_dir %s: %w (tripleoclient's %s expects it there: give templates_dir, the tripleo-heat-templates root)",
			templatesDir, err, rel)
	}
	f.Close()
	return p, nil
}

// RunPlan is what a lifecycle run command runs, checked.
type RunPlan struct {
	Run lifecycle.Run
	// Playbooks are the playbooks' paths, in order.
	Playbooks []string
	// Limit is the --limit value ("" for none): inventory names joined
	// with ':' (tripleoclient's playbook_limit_parse), with
	// ":!excluded_overcloud" when the run excludes blacklisted hosts.
	Limit string
	// Excluded are the hosts DeploymentServerBlacklist names (the saved
	// BlacklistedHostnames).
	Excluded []string
	// Status is the last deploy's.
	Status *Status
	// Digest is the fingerprint of the run's inputs (RunDigest); Done
	// whether that very run already succeeded since the last prepare (see
	// RecordRun): then nothing is to run, even after the converge that
	// ended its upgrade.
	Digest string
	Done   bool
}

// limitWord is a word of a limit: an inventory name, optionally negated.
var limitWord = regexp.MustCompile(`^!?[A-Za-z0-9][A-Za-z0-9_.-]*$`)

// PlanRun checks a lifecycle run command (lifecycle.Runs) on the working
// dir before anything runs and says what it runs: config-download of the
// stack must be there, the last deploy must be a successful prepare of the
// run's kind (the deployment status's stage) - or the converge of the
// upgrade a recorded run of the same inputs belongs to (Done: nothing to
// run) -, limit (required for update_run and upgrade_run) must name only
// hosts or groups of the config-download inventory (words split at ',',
// ':' and spaces, as tripleoclient's playbook_limit_parse does; '!'
// excludes), and the playbooks (default the command's) must be files of
// config-download. Each refusal names the variable or the missing stage.
// tags and skipTags count in the run's Digest.
func (l Layout) PlanRun(name string, limit, playbooks, tags, skipTags []string) (*RunPlan, error) {
	run, err := lifecycle.FindRun(name)
	if err != nil {
		return nil, err
	}
	p := &RunPlan{Run: run, Excluded: []string{}}
	cd := l.ConfigDownload()
	st, err := os.Lstat(cd)
	if err != nil || !st.IsDir() {
		return nil, fmt.Errorf("work_dir %s has no config-download for stack %s (%s): deploy it first (ephemeral.heat.deploy_overcloud), then %s",
			l.Dir, l.Stack, cd, lifecycle.Title(run.After))
	}
	if p.Status, err = l.ReadStatus(); err != nil {
		return nil, err
	}
	stageErr := checkStage(run, p.Status, l.Stack)
	if stageErr != nil && !afterItsConverge(run, p.Status) {
		return nil, stageErr
	}
	hosts, groups, err := l.inventoryNames()
	if err != nil {
		if isNotExist(err) {
			return nil, fmt.Errorf("work_dir %s has no config-download inventory %s: redeploy with %s", l.Dir, l.Inventory(), lifecycle.Title(run.After))
		}
		return nil, err
	}
	if p.Limit, err = l.runLimit(run, limit, hosts, groups, p); err != nil {
		return nil, err
	}
	if len(playbooks) == 0 {
		playbooks = run.Playbooks
	}
	for _, b := range playbooks {
		path := b
		if !filepath.IsAbs(path) {
			path = filepath.Join(cd, b)
		}
		f, _, err := fsutil.OpenInput(path, "playbook")
		if err != nil {
			return nil, fmt.Errorf("playbooks: %w (config-download writes it from the stack's RoleConfig: was %s made from templates that render it?)",
				err, lifecycle.Title(run.After))
		}
		f.Close()
		p.Playbooks = append(p.Playbooks, path)
	}
	if p.Digest, err = l.RunDigest(p, tags, skipTags); err != nil {
		return nil, err
	}
	if p.Done, err = l.RunDone(p.Digest); err != nil {
		return nil, err
	}
	if stageErr != nil && !p.Done {
		return nil, stageErr
	}
	return p, nil
}

// afterItsConverge tells a run of an upgrade whose converge succeeded: a
// run recorded before it is done, any other is refused.
func afterItsConverge(run lifecycle.Run, s *Status) bool {
	return s != nil && run.After == lifecycle.UpgradePrepare && s.Stage == lifecycle.UpgradeConverge && s.Status == StatusSuccess
}

// checkStage refuses a run whose stack's last deploy is not a successful
// prepare of its kind.
func checkStage(run lifecycle.Run, s *Status, stack string) error {
	need := lifecycle.Title(run.After)
	if s == nil {
		return fmt.Errorf("%s needs %s of stack %s first: the working dir has no deployment status (no deploy recorded)", run.Name, need, stack)
	}
	stage := s.Stage
	if stage == "" {
		stage = lifecycle.Deploy
	}
	switch {
	case stage != run.After:
		return fmt.Errorf("%s needs %s of stack %s first: the last deploy was %s; run the prepare, then %s",
			run.Name, need, stack, lifecycle.Title(stage), run.Name)
	case s.Status != StatusSuccess:
		return fmt.Errorf("%s needs %s of stack %s that succeeded: the last one is %s (phase %s); run it again", run.Name, need, stack, s.Status, s.Phase)
	}
	return nil
}

// runLimit checks limit against the inventory and makes the --limit value.
func (l Layout) runLimit(run lifecycle.Run, limit []string, hosts, groups map[string][]string, p *RunPlan) (string, error) {
	var words []string
	for _, e := range limit {
		for _, w := range strings.FieldsFunc(e, func(r rune) bool { return r == ',' || r == ':' || r == ' ' || r == '\t' || r == '\n' }) {
			words = append(words, w)
		}
	}
	if len(words) == 0 {
		if run.LimitRequired {
			return "", fmt.Errorf("limit is required for %s (tripleoclient's --limit): name the nodes or role groups to run on, e.g. limit: [%s]",
				run.Name, exampleHost(hosts))
		}
		return "", nil
	}
	var unknown []string
	var named []string
	for _, w := range words {
		name := strings.TrimPrefix(w, "!")
		if !limitWord.MatchString(w) || (!containsString(hosts[strings.ToLower(name)], name) && !containsString(groups[strings.ToLower(name)], name)) {
			unknown = append(unknown, fmt.Sprintf("%q", truncateName(w)))
			continue
		}
		if !strings.HasPrefix(w, "!") {
			named = append(named, name)
		}
	}
	if len(unknown) > 0 {
		return "", fmt.Errorf("limit: %s %s not a host or group of the config-download inventory %s (hosts: %s); nothing was run",
			strings.Join(unknown, ", "), plural(len(unknown), "is", "are"), l.Inventory(), listOrNone(sortedKeys(hosts)))
	}
	if run.ExcludeBlacklisted {
		excluded, err := l.blacklisted()
		if err != nil {
			return "", err
		}
		p.Excluded = excluded
		if len(excluded) > 0 {
			var both []string
			for _, n := range named {
				if containsString(excluded, n) {
					both = append(both, n)
				}
			}
			if len(both) > 0 {
				return "", fmt.Errorf("limit: %s %s excluded by DeploymentServerBlacklist (the saved BlacklistedHostnames): "+
					"take it out of limit, or out of the blacklist and redeploy", strings.Join(both, ", "), plural(len(both), "is", "are"))
			}
			words = append(words, "!"+lifecycle.ExcludedGroup)
		}
	}
	return strings.Join(words, ":"), nil
}

// blacklisted reads the saved BlacklistedHostnames output (tripleoclient's
// get_excluded_hostnames): the non-empty names.
func (l Layout) blacklisted() ([]string, error) {
	b, err := readFile(l.Output("BlacklistedHostnames"), "saved output")
	if isNotExist(err) {
		return []string{}, nil
	}
	if err != nil {
		return nil, err
	}
	var v any
	if err := yaml.Unmarshal(b, &v); err != nil {
		return nil, fmt.Errorf("saved output %s: %s", l.Output("BlacklistedHostnames"), yamlErrorText(err))
	}
	out := []string{}
	list, _ := v.([]any)
	for _, e := range list {
		if s, ok := e.(string); ok && strings.TrimSpace(s) != "" {
			out = append(out, strings.TrimSpace(s))
		}
	}
	return out, nil
}

func exampleHost(hosts map[string][]string) string {
	k := sortedKeys(hosts)
	if len(k) == 0 {
		return "overcloud-novacompute-0"
	}
	return hosts[k[0]][0]
}

func sortedKeys(m map[string][]string) []string {
	out := []string{}
	for _, v := range m {
		out = append(out, v...)
	}
	sort.Strings(out)
	return out
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
