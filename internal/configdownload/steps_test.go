package configdownload

import (
	"reflect"
	"testing"
)

func TestTaskSteps(t *testing.T) {
	tests := []struct {
		name string
		when any
		want []int
	}{
		{"no when", nil, nil},
		{"canonical", "step|int == 1", []int{1}},
		{"no spaces", "step|int==2", []int{2}},
		{"spaces around the filter", "step | int == 3", []int{3}},
		{"parentheses", "(step|int) == 4", []int{4}},
		{"parentheses and spaces", "( step | int ) == 5", []int{5}},
		{"without int", "step == 0", []int{0}},
		{"tabs and newlines", "step|int\t==\n 2", []int{2}},
		{"two digits", "step|int == 10", []int{10}},
		{"list", []any{"step|int == 2", "enabled|bool"}, []int{2}},
		{"list with the step second", []any{"enabled|bool", "(step | int) == 3"}, []int{3}},
		{"list with a boolean", []any{true, "step|int == 1"}, []int{1}},
		{"or of two steps", "step|int == 1 or step|int == 4", []int{1, 4}},
		{"in a list", "step|int in [1, 2]", []int{1, 2}},
		{"no step condition", "ansible_facts.os_family == 'RedHat'", nil},
		{"other comparison", "step|int >= 2", nil},
		{"another variable ending in step", "deploy_step|int == 3", nil},
		{"attribute named step", "item.step|int == 3", nil},
		{"boolean when", true, nil},
		{"list without step", []any{"a", "b"}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			task := map[string]any{"name": "t"}
			if tc.when != nil {
				task["when"] = tc.when
			}
			if got := TaskSteps(task); !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("TaskSteps(when=%#v) = %v, want %v", tc.when, got, tc.want)
			}
		})
	}
}

func TestTasksForStep(t *testing.T) {
	task := func(name string, when any) map[string]any {
		m := map[string]any{"name": name}
		if when != nil {
			m["when"] = when
		}
		return m
	}
	tasks := []any{
		task("always", nil),
		task("one", "step|int == 1"),
		task("two", []any{"(step | int) == 2", "x|bool"}),
		task("one-or-three", "step|int == 1 or step|int == 3"),
		task("not-a-step", "foo"),
		"not a task",
	}
	names := func(l []any) []string {
		var out []string
		for _, x := range l {
			if m, ok := x.(map[string]any); ok {
				out = append(out, m["name"].(string))
			} else {
				out = append(out, "?")
			}
		}
		return out
	}
	want := map[int][]string{
		0: {"always", "not-a-step", "?"},
		1: {"always", "one", "one-or-three", "not-a-step", "?"},
		2: {"always", "two", "not-a-step", "?"},
		3: {"always", "one-or-three", "not-a-step", "?"},
		4: {"always", "not-a-step", "?"},
		5: {"always", "not-a-step", "?"},
	}
	for step := 0; step < StepsMax; step++ {
		if got := names(TasksForStep(tasks, step)); !reflect.DeepEqual(got, want[step]) {
			t.Errorf("step %d: %v, want %v", step, got, want[step])
		}
	}
	if got := TasksForStep(nil, 1); got == nil || len(got) != 0 {
		t.Errorf("no tasks: got %#v, want an empty list", got)
	}
}
