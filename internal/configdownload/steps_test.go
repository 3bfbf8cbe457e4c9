package configdownload

import (
	"reflect"
	"testing"
)

// tripleo-common finds steps with re.findall(r'\(?step(?:\|int)?\)?==(\d+)')
// over the `when` strings with their white space removed and joined.
func TestTaskSteps(t *testing.T) {
	for _, tc := range []struct {
		when any
		want []string
	}{
		{"step|int == 1", []string{"1"}},
		{"(step | int) == 2", []string{"2"}},
		{"step == 3", []string{"3"}},
		{"step|int==4 and x", []string{"4"}},
		{[]any{"(step|int) == 5", "other|bool"}, []string{"5"}},
		{[]any{"step|int == 1", "step|int == 2"}, []string{"1", "2"}},
		// Matched inside longer names too (no boundary), as tripleo-common does.
		{"deploy_step|int == 2", []string{"2"}},
		// "in [..]" names no step for tripleo-common: the task runs at every step.
		{"step|int in [1, 2]", nil},
		{"step|int > 1", nil},
		{"step|int\t==\n3", []string{"3"}},
		{"step|int == 03", []string{"03"}},
		{"step|int == ٣", []string{"٣"}},
		{[]any{true, "step|int == 1"}, []string{"1"}},
		// The strings are joined before searching.
		{[]any{"ste", "p == 6"}, []string{"6"}},
		{nil, nil},
		{false, nil},
		{[]any{}, nil},
	} {
		task := Obj("name", "t", "when", tc.when)
		if got := TaskSteps(task); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("TaskSteps(when: %s) = %q, want %q", pyRepr(tc.when), got, tc.want)
		}
	}
	if got := TaskSteps(Obj("name", "no when")); got != nil {
		t.Errorf("no when: %q", got)
	}
}

func TestTasksForStep(t *testing.T) {
	a := Obj("name", "a", "when", "step|int == 1")
	b := Obj("name", "b", "when", []any{"step|int == 2", "x"})
	every := Obj("name", "every")
	in := Obj("name", "in", "when", "step|int in [1, 2]")
	odd := Obj("name", "odd", "when", "step|int == 01")
	tasks := []any{a, b, every, in, odd}
	for step, want := range map[int][]any{0: {every, in}, 1: {a, every, in}, 2: {b, every, in}, 5: {every, in}} {
		got, err := TasksForStep(tasks, step, false)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("step %d: %v %v, want %v", step, names(got), err, names(want))
		}
	}
	// Strict: only the tasks naming that step.
	if got, _ := TasksForStep(tasks, 1, true); !reflect.DeepEqual(got, []any{a}) {
		t.Errorf("strict step 1: %v", names(got))
	}
	if got, err := TasksForStep([]any{}, 0, false); err != nil || len(got) != 0 || got == nil {
		t.Errorf("no tasks: %#v %v", got, err)
	}
	for _, bad := range []any{nil, "tasks", Obj(), []any{"not a task"}} {
		if _, err := TasksForStep(bad, 1, false); err == nil {
			t.Errorf("TasksForStep(%s) did not fail", pyRepr(bad))
		}
	}
}

func names(tasks []any) []string {
	var n []string
	for _, t := range tasks {
		n = append(n, pyStr(asObject(t).Value("name")))
	}
	return n
}
