package module

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// A failing handler's error is masked as the rest of the result is: a
// registered secret never shows in msg, whole or cut short (yaml.v3 quotes
// the start of an offending scalar, messages shorten long values), and a
// number that is a secret never shows in module_args.
func TestSecretsMaskedInMessages(t *testing.T) {
	const secret = "s3cr3t-Pa55word-19"
	spec := &Spec{Name: "m", Params: []Param{{Name: "vars", Type: Dict}, {Name: "state", Type: Str}}}
	tests := []struct {
		name string
		err  error
		// gone: what must not appear anywhere; kept: what must.
		gone, kept []string
	}{
		{name: "whole", err: fmt.Errorf("parameter AdminPassword: %q is not valid", secret),
			gone: []string{secret}, kept: []string{"parameter AdminPassword: \"" + Masked + "\" is not valid"}},
		{name: "yaml.v3 unmarshal error", err: errors.New("yaml: unmarshal errors:\n  line 3: cannot unmarshal !!str `" + secret[:7] + "...` into int"),
			gone: []string{secret[:7]}, kept: []string{"cannot unmarshal !!str `" + Masked + "` into int"}},
		{name: "cut with an ellipsis", err: errors.New("value " + secret[:10] + "… is too long"),
			gone: []string{secret[:10]}, kept: []string{"value " + Masked + " is too long"}},
		{name: "wrapped", err: fmt.Errorf("environment env.yaml: %w", fmt.Errorf("bad value %s", secret)),
			gone: []string{secret}, kept: []string{"environment env.yaml: bad value " + Masked}},
		{name: "other ellipses are left alone", err: errors.New("waiting... s3cr done"),
			kept: []string{"waiting... s3cr done"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := execute(spec, func(c *Context) (Result, error) {
				c.AddSecret(secret)
				c.AddSecret("12345")
				return Result{"detail": c.Mask("log: " + secret)}, tc.err
			}, &Context{}, map[string]any{"vars": map[string]any{"pin": float64(12345), "other": float64(7)}, "state": "present"})
			b, err := json.Marshal(res)
			if err != nil {
				t.Fatal(err)
			}
			raw := string(b)
			if res["failed"] != true {
				t.Fatalf("not failed: %s", raw)
			}
			for _, g := range tc.gone {
				if strings.Contains(raw, g) {
					t.Errorf("%q shows in the result: %s", g, raw)
				}
			}
			for _, k := range tc.kept {
				if msg, _ := res["msg"].(string); !strings.Contains(msg, k) {
					t.Errorf("msg %q does not say %q", msg, k)
				}
			}
			if res["detail"] != "log: "+Masked {
				t.Errorf("Context.Mask: %v", res["detail"])
			}
			args := res["invocation"].(map[string]any)["module_args"].(map[string]any)
			vars := args["vars"].(map[string]any)
			if vars["pin"] != Masked || vars["other"] != float64(7) || args["state"] != "present" {
				t.Errorf("module_args: %v", args)
			}
		})
	}
}

// The masking of text on its own: cuts of any length, several in a row,
// dots that are not a cut, a secret in a key.
func TestMaskerText(t *testing.T) {
	key := strings.Repeat("k3y-", 750) // a hidden 3000-character value
	m := newMasker([]string{"s3cr3t-Pa55word-19", key, "ab"})
	for in, want := range map[string]string{
		"a: s3cr3t-...` b: s3cr3t-Pa55word-19 c: s3cr3t-Pa55...": "a: " + Masked + "` b: " + Masked + " c: " + Masked,
		"key " + key[:300] + "... and " + key[:2999] + "…":       "key " + Masked + " and " + Masked,
		"s3cr3t-P....":                       Masked + ".",
		"....":                               "....",
		"s3c...":                             "s3c...",
		"wait... s3cr":                       "wait... s3cr",
		"ab... abc":                          Masked + "... " + Masked + "c",
		strings.Repeat("s3cr3t-Pa55w...", 3): strings.Repeat(Masked, 3),
	} {
		if got := m.text(in); got != want {
			t.Errorf("text(%.60q) = %.200q, want %.200q", in, got, want)
		}
	}
	if got := m.value(map[string]any{"s3cr3t-Pa5...": 1}); got.(map[string]any)[Masked] != 1 {
		t.Errorf("a cut secret in a key: %v", got)
	}
}

// A dict parameter given as a string that is neither JSON nor key=value
// pairs is refused without quoting it: it may hold a secret.
func TestDictErrorQuotesNoValue(t *testing.T) {
	const secret = "hunter2-Secret"
	res := execute(&Spec{Name: "m", Params: []Param{{Name: "parameters", Type: Dict}}}, func(*Context) (Result, error) {
		return Result{}, nil
	}, &Context{}, map[string]any{"parameters": "AdminPassword=x " + secret})
	msg, _ := res["msg"].(string)
	if res["failed"] != true || strings.Contains(msg, secret) || !strings.Contains(msg, `parameter "parameters": a string that is neither JSON nor key=value pairs (word 2 has no "=")`) {
		t.Errorf("msg %q", msg)
	}
}
