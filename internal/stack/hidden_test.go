package stack

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/ephemeral-heat/ephemeral-heat/internal/heatapi"
	"github.com/ephemeral-heat/ephemeral-heat/internal/testutil/fakeheat"
)

// With existing=true and no template only Heat knows which parameters are
// hidden: Run learns them from the stack ("******"), so HiddenValues (what
// the module masks in its result, module_args included), the progress lines
// and the diff never show a hidden parameter's new value.
func TestExistingLearnsHiddenFromHeat(t *testing.T) {
	const secret = "n3w-S3cret-value"
	h := fakeheat.Start(t, fakeheat.Stack{Name: "overcloud", ID: "0000-1111",
		Parameters: map[string]string{"AdminPassword": "******", "Pin": "******", "Visible": "old"},
		Template: map[string]any{"heat_template_version": "2021-04-16", "parameters": map[string]any{
			"AdminPassword": map[string]any{"type": "string", "hidden": true},
			"Pin":           map[string]any{"type": "number", "hidden": true},
			"Visible":       map[string]any{"type": "string"}}, "resources": map[string]any{}}})
	c, err := heatapi.NewNoAuth(h.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	for _, check := range []bool{true, false} {
		var progress bytes.Buffer
		r, err := Prepare(Options{Name: "overcloud", Existing: true, Timeout: 10, CheckMode: check, Diff: true, Wait: false,
			Parameters: map[string]any{"AdminPassword": secret, "Pin": float64(4242), "Visible": "new"},
			Given:      func(n string) bool { return n == "parameters" }, Progress: &progress})
		if err != nil {
			t.Fatal(err)
		}
		if hv := r.HiddenValues(); len(hv) != 0 {
			t.Fatalf("hidden values before Heat was asked: %q", hv)
		}
		out, err := r.Run(context.Background(), c)
		if check && (err != nil || !out.Changed) {
			t.Fatalf("check mode: changed=%v %v", out.Changed, err)
		}
		hv := r.HiddenValues()
		if !slices.Contains(hv, secret) || !slices.Contains(hv, "4242") || slices.Contains(hv, "new") {
			t.Errorf("check=%v: hidden values %q, want the new AdminPassword and Pin, not Visible", check, hv)
		}
		shown, _ := json.Marshal(out)
		if strings.Contains(string(shown), secret) || strings.Contains(progress.String(), secret) {
			t.Errorf("check=%v: a hidden value shows: %s\nprogress: %s", check, shown, progress.String())
		}
		if pc := out.Preview.Parameters["AdminPassword"]; pc.After == nil || *pc.After != hiddenMark {
			t.Errorf("check=%v: AdminPassword change %+v, want it named, its value hidden", check, pc)
		}
		if pc := out.Preview.Parameters["Visible"]; pc.After == nil || *pc.After != "new" {
			t.Errorf("check=%v: Visible change %+v, want it shown", check, pc)
		}
	}
}
