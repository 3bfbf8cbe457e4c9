package workdir

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/ephemeral-heat/ephemeral-heat/internal/pathguard"
)

// Fresh takes a working dir that does not exist, an empty one, or one
// holding only what its lock leaves; anything else is refused, named.
func TestFresh(t *testing.T) {
	for _, tc := range []struct {
		name  string
		files []string // made in the working dir (the marker is pathguard's)
		want  string   // "" = accepted
	}{
		{name: "missing"},
		{name: "empty", files: []string{}},
		{name: "marker and lock", files: []string{pathguard.Marker, LockFile}},
		{name: "a passwords file", files: []string{pathguard.Marker, "overcloud-passwords.yaml"}, want: "holds overcloud-passwords.yaml"},
		{name: "many files", files: []string{pathguard.Marker, "a", "b", "c", "d", "e", "f", "g"}, want: "and 2 more"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "work")
			if tc.files != nil {
				if err := os.Mkdir(dir, 0o700); err != nil {
					t.Fatal(err)
				}
				for _, f := range tc.files {
					content := "x"
					if f == pathguard.Marker {
						content = string(pathguard.MarkerContent(pathguard.KindWorkDir))
					}
					os.WriteFile(filepath.Join(dir, f), []byte(content), 0o600)
				}
			}
			l, _ := New(dir, "overcloud")
			err := l.Fresh()
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "work_dir")):
				t.Errorf("got %v, want an error naming work_dir with %q", err, tc.want)
			}
		})
	}
}

// SkippedEnvironment records each group's skipped members as a scale-down
// records removed ones (its count, its removal policies, indices in
// order); a group that takes either from no parameter is named instead;
// no skipped member, no environment.
func TestSkippedEnvironment(t *testing.T) {
	compute := Group{Resource: "ComputeServers", Role: "Compute", CountParameter: "ComputeCount", RemovalPoliciesParameter: "ComputeRemovalPolicies",
		Removed: []string{"10", "1"}, Members: []Member{{"0", "c-0"}, {"2", "c-2"}, {"3", "c-3"}}}
	fixed := Group{Resource: "Fixed", Role: "Fixed", Removed: []string{"0"}, Members: []Member{{"1", "f-1"}}}
	clean := Group{Resource: "ControllerServers", Role: "Controller", CountParameter: "ControllerCount",
		RemovalPoliciesParameter: "ControllerRemovalPolicies", Removed: []string{}, Members: []Member{{"0", "ctl-0"}}}
	for _, tc := range []struct {
		name       string
		groups     []Group
		want       map[string]any
		skipped    map[string][]string
		unrecorded []string
	}{
		{name: "none skipped", groups: []Group{clean}, skipped: map[string][]string{}},
		{name: "one group", groups: []Group{clean, compute}, skipped: map[string][]string{"ComputeServers": {"1", "10"}},
			want: map[string]any{"ComputeCount": 3, "ComputeRemovalPolicies": []any{map[string]any{"resource_list": []any{1, 10}}}}},
		{name: "no parameters", groups: []Group{fixed}, skipped: map[string][]string{}, unrecorded: []string{"Fixed"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			content, skipped, unrecorded := SkippedEnvironment("overcloud", &Nodes{Stack: "overcloud", Groups: tc.groups})
			if !reflect.DeepEqual(skipped, tc.skipped) || !reflect.DeepEqual(unrecorded, tc.unrecorded) {
				t.Errorf("skipped %v unrecorded %v", skipped, unrecorded)
			}
			if tc.want == nil {
				if content != nil {
					t.Errorf("an environment with nothing to record: %s", content)
				}
				return
			}
			var env map[string]map[string]any
			if err := yaml.Unmarshal(content, &env); err != nil || !reflect.DeepEqual(env["parameter_defaults"], tc.want) {
				t.Errorf("environment %s (%v), want %v", content, err, tc.want)
			}
			// What a scale-down reads back of it.
			l, _ := New(t.TempDir(), "overcloud")
			os.WriteFile(l.ScaleDown(), content, 0o600)
			if _, err := l.readScaleDownEnv(&Nodes{Groups: tc.groups}); err != nil {
				t.Errorf("the scale-down reads it as: %v", err)
			}
		})
	}
}
