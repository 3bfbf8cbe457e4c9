package tuning

import (
	"strings"
	"testing"
)

func TestSettingsAreDocumented(t *testing.T) {
	seen := map[string]bool{}
	for _, s := range Settings() {
		if s.Name == "" || seen[s.Name] || strings.ContainsAny(s.Name, " -") {
			t.Errorf("setting name %q: empty, repeated or not usable in a row name", s.Name)
		}
		seen[s.Name] = true
		if s.Effect != EffectCreate && s.Effect != EffectStop {
			t.Errorf("%s: effect %q", s.Name, s.Effect)
		}
		if len(s.What) < 80 || !strings.Contains(s.What, "Cost") {
			t.Errorf("%s: What must say what the setting does and what it costs", s.Name)
		}
		if len(s.Conf) == 0 {
			t.Errorf("%s: no heat.conf settings", s.Name)
		}
		for sec, kv := range s.Conf {
			for k, v := range kv {
				if !strings.Contains(s.Title, "["+sec+"] "+k+" = "+v) {
					t.Errorf("%s: title %q does not show [%s] %s = %s", s.Name, s.Title, sec, k, v)
				}
			}
		}
	}
}

func TestApplyAndMerge(t *testing.T) {
	tests := []struct {
		name  string
		extra map[string]map[string]string
		stock bool
		want  map[string]string // "section/key" -> value; "" must be absent
	}{
		{"ours", nil, false, map[string]string{"DEFAULT/convergence_engine": "false", "database/sqlite_synchronous": "false"}},
		{"stock", nil, true, map[string]string{"DEFAULT/convergence_engine": "", "database/sqlite_synchronous": ""}},
		{"extra wins", map[string]map[string]string{"DEFAULT": {"convergence_engine": "true"}, "new": {"k": "v"}}, false,
			map[string]string{"DEFAULT/convergence_engine": "true", "new/k": "v", "database/sqlite_synchronous": "false"}},
		{"stock plus extra", map[string]map[string]string{"DEFAULT": {"debug": "true"}}, true,
			map[string]string{"DEFAULT/debug": "true", "DEFAULT/convergence_engine": ""}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Apply(tc.extra, tc.stock)
			for sk, v := range tc.want {
				sec, key, _ := strings.Cut(sk, "/")
				if g, ok := got[sec][key]; (v == "" && ok) || g != v {
					t.Errorf("%s = %q (present %v), want %q", sk, g, ok, v)
				}
			}
		})
	}
	// Results are copies: changing one changes neither the table nor the caller's map.
	extra := map[string]map[string]string{"DEFAULT": {"a": "1"}}
	m := Apply(extra, false)
	m["DEFAULT"]["convergence_engine"] = "x"
	m["DEFAULT"]["a"] = "2"
	if Merged()["DEFAULT"]["convergence_engine"] != "false" || extra["DEFAULT"]["a"] != "1" {
		t.Errorf("Apply returned shared maps")
	}
	s := Settings()
	s[0].Conf["DEFAULT"]["convergence_engine"] = "x"
	if Settings()[0].Conf["DEFAULT"]["convergence_engine"] == "x" {
		t.Errorf("Settings returned shared maps")
	}
}

// [database] connection_parameters is a query string: settings each add
// their plugin, once; any other key is replaced.
func TestMergeComposesConnectionParameters(t *testing.T) {
	m := Merge(nil, map[string]map[string]string{"database": {"connection_parameters": "plugin=a", "connection": "x"}})
	m = Merge(m, map[string]map[string]string{"database": {"connection_parameters": "plugin=b&plugin=a", "connection": "y"}})
	if got := m["database"]["connection_parameters"]; got != "plugin=a&plugin=b" {
		t.Errorf("connection_parameters = %q, want plugin=a&plugin=b", got)
	}
	if got := m["database"]["connection"]; got != "y" {
		t.Errorf("connection = %q, want the later y", got)
	}
	// Our defaults name every plugin setting's plugin.
	all := Merged()["database"]["connection_parameters"]
	for _, s := range Settings() {
		if v, ok := s.Conf["database"]["connection_parameters"]; ok && !strings.Contains("&"+all+"&", "&"+v+"&") {
			t.Errorf("our connection_parameters %q lack %s's %q", all, s.Name, v)
		}
	}
}
