package configdownload

import (
	"regexp"
	"strconv"
	"strings"
)

// StepsMax is the number of deploy steps (tripleo-common's DEFAULT_STEPS_MAX):
// per-step files are written for steps 0 to StepsMax-1.
const StepsMax = 6

// perStepTasks are the RoleData keys that are also written split by step,
// as <key>_step<N>.yaml, with how many steps (tripleo-common's PER_STEP_TASKS).
var perStepTasks = map[string]int{
	"deploy_steps_tasks": StepsMax,
	"upgrade_tasks":      StepsMax,
	"update_tasks":       StepsMax,
	"post_update_tasks":  4,
}

// externalTasks are collected globally (in RoleConfig), never per role.
var externalTasks = map[string]bool{"external_deploy_tasks": true, "external_deploy_steps_tasks": true}

var (
	// step == N, step|int == N, (step|int) == N, (step | int) == N, ... once
	// the white space is gone.
	stepEqRe = regexp.MustCompile(`(?:^|[^A-Za-z0-9_.])\(?step(?:\|int)?\)?==(\d+)`)
	// step|int in [1, 2] and (step|int) in (1,2).
	stepInRe = regexp.MustCompile(`(?:^|[^A-Za-z0-9_.])\(?step(?:\|int)?\)? ?in ?[\[(](\d+(?:,\d+)*),?[\])]`)
	// White space around operators goes, elsewhere it becomes one space.
	opSpaceRe = regexp.MustCompile(`\s*([|=()\[\],])\s*`)
	spaceRe   = regexp.MustCompile(`\s+`)
)

// TaskSteps returns the deploy steps a task is limited to by its `when`
// (a string or a list of conditions), or nil when it names no step (such a
// task runs at every step). Only the string conditions are read; white space
// does not matter, "|int" and the parentheses around "step|int" are
// optional.
func TaskSteps(task any) []int {
	t, ok := task.(map[string]any)
	if !ok {
		return nil
	}
	var conds []string
	switch w := t["when"].(type) {
	case string:
		conds = []string{w}
	case []any:
		for _, c := range w {
			if s, ok := c.(string); ok {
				conds = append(conds, s)
			}
		}
	case []string:
		conds = w
	}
	var steps []int
	seen := map[int]bool{}
	add := func(s string) {
		n, err := strconv.Atoi(s)
		if err == nil && !seen[n] {
			seen[n] = true
			steps = append(steps, n)
		}
	}
	for _, c := range conds {
		flat := opSpaceRe.ReplaceAllString(spaceRe.ReplaceAllString(c, " "), "$1")
		for _, m := range stepEqRe.FindAllStringSubmatch(flat, -1) {
			add(m[1])
		}
		for _, m := range stepInRe.FindAllStringSubmatch(flat, -1) {
			for _, n := range strings.Split(m[1], ",") {
				add(n)
			}
		}
	}
	return steps
}

// TasksForStep returns the tasks of the list that run at step: those whose
// `when` names that step and those that name no step at all.
func TasksForStep(tasks []any, step int) []any {
	out := make([]any, 0, len(tasks))
	for _, t := range tasks {
		steps := TaskSteps(t)
		if steps == nil {
			out = append(out, t)
			continue
		}
		for _, s := range steps {
			if s == step {
				out = append(out, t)
				break
			}
		}
	}
	return out
}
