package configdownload

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// StepsMax is the number of deploy steps (tripleo-common's DEFAULT_STEPS_MAX):
// per-step files are written for steps 0 to StepsMax-1.
const StepsMax = 6

// perStepTasks are the RoleData keys also written split by step, as
// <key>_step<N>.yaml, with how many steps (tripleo-common's PER_STEP_TASKS;
// none of them strict).
var perStepTasks = map[string]int{
	"deploy_steps_tasks": StepsMax,
	"upgrade_tasks":      StepsMax,
	"update_tasks":       StepsMax,
	"post_update_tasks":  4,
}

// externalTasks are collected globally (in RoleConfig), never per role
// (tripleo-common's EXTERNAL_TASKS).
var externalTasks = map[string]bool{"external_deploy_tasks": true, "external_deploy_steps_tasks": true}

// stepRe finds the steps a flattened `when` names: "step==N", with "|int"
// and parentheses optional; digits are any decimal digits, as Python's \d.
var stepRe = regexp.MustCompile(`\(?step(?:\|int)?\)?==(\p{Nd}+)`)

// TaskSteps returns the step numbers a task's `when` names, as
// tripleo-common finds them: the string conditions (one, or those of a
// list) with all white space removed, joined, and searched for
// "step==N" ("|int" and the parentheses around "step|int" optional). It
// returns nil when the task names no step (or has no `when`).
func TaskSteps(task *Object) []string {
	when, ok := task.Get("when")
	if !ok || when == nil {
		return nil
	}
	list, isList := when.([]any)
	if !isList {
		list = []any{when}
	}
	var flat strings.Builder
	for _, c := range list {
		if s, ok := c.(string); ok {
			flat.WriteString(strings.Map(func(r rune) rune {
				if pyIsSpace(r) {
					return -1
				}
				return r
			}, s))
		}
	}
	var steps []string
	for _, m := range stepRe.FindAllStringSubmatch(flat.String(), -1) {
		steps = append(steps, m[1])
	}
	return steps
}

// stepInTask is tripleo-common's step_in_task: a task whose `when` names
// steps runs at those steps only; one that names none runs at every step
// unless strict.
func stepInTask(task *Object, step int, strict bool) bool {
	steps := TaskSteps(task)
	if steps == nil {
		return !strict
	}
	want := strconv.Itoa(step)
	for _, s := range steps {
		if s == want {
			return true
		}
	}
	return false
}

// TasksForStep returns the tasks of a list that run at step. tasks must be
// a list of mappings (tripleo-common fails otherwise).
func TasksForStep(tasks any, step int, strict bool) ([]any, error) {
	list, ok := tasks.([]any)
	if !ok {
		return nil, fmt.Errorf("is a %s, not a list of tasks", typeName(tasks))
	}
	out := []any{}
	for i, t := range list {
		task, ok := t.(*Object)
		if !ok {
			return nil, fmt.Errorf("item %d is a %s, not a task", i, typeName(t))
		}
		if stepInTask(task, step, strict) {
			out = append(out, t)
		}
	}
	return out, nil
}
