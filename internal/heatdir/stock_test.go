package heatdir_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ephemeral-heat/ephemeral-heat/internal/heatdb"
	"github.com/ephemeral-heat/ephemeral-heat/internal/heatdir"
	"github.com/ephemeral-heat/ephemeral-heat/tests/tripleoclient"
	"github.com/ephemeral-heat/ephemeral-heat/tests/tripleocommon"
)

// stockHeatConf reads the heat.conf that python-tripleoclient's
// heat_launcher.py writes for its ephemeral heat-all (the string in
// _write_heat_config), from the reference tree.
func stockHeatConf(t *testing.T) heatdir.INI {
	t.Helper()
	src := tripleocommon.Source(tripleoclient.EnvTripleoclient, tripleoclient.TripleoclientTarball)
	var py []byte
	var err error
	if st, serr := os.Stat(src); serr != nil {
		t.Fatalf("python-tripleoclient stable/wallaby is needed to compare our heat.conf with its stock one: %v. "+
			"Set %s to a checkout or .tar.gz of it, or put the tarball in ../shared/reference (see its README.md)",
			serr, tripleoclient.EnvTripleoclient)
	} else if st.IsDir() {
		m, _ := filepath.Glob(filepath.Join(src, "tripleoclient", "heat_launcher.py"))
		if len(m) != 1 {
			t.Fatalf("%s has no tripleoclient/heat_launcher.py", src)
		}
		py, err = os.ReadFile(m[0])
	} else {
		py, err = exec.Command("tar", "-xzf", src, "-O", "--wildcards", "*tripleoclient/heat_launcher.py").Output()
	}
	if err != nil {
		t.Fatalf("reading heat_launcher.py from %s: %v", src, err)
	}
	_, rest, ok := strings.Cut(string(py), "heat_config = '''")
	body, _, ok2 := strings.Cut(rest, "'''")
	if !ok || !ok2 {
		t.Fatalf("heat_launcher.py from %s: no heat_config = '''...''' string", src)
	}
	body = strings.ReplaceAll(body, "\\\n", "") // a continued line
	path := filepath.Join(t.TempDir(), "stock.conf")
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	ini, err := heatdir.ReadINI(path)
	if err != nil {
		t.Fatal(err)
	}
	return ini
}

// TestStockHeatConfKeys: our heat.conf (without tuning) has every setting of
// tripleoclient's stock ephemeral heat.conf, with its value where the stock
// value is a constant, except the ones listed here with the reason.
func TestStockHeatConfKeys(t *testing.T) {
	stock := stockHeatConf(t)
	if len(stock["DEFAULT"]) < 5 {
		t.Fatalf("parsed too little of the stock heat.conf: %v", stock)
	}
	dir := t.TempDir()
	cfg := heatdir.Config{Dir: dir, BindHost: "127.0.0.1", APIPort: 8006, Now: time.Now(),
		Database: heatdb.DB{Kind: heatdb.SQLite, Path: filepath.Join(dir, heatdir.SQLiteFile)}}
	path := filepath.Join(dir, "heat.conf")
	if err := os.WriteFile(path, cfg.RenderHeatConf(), 0o600); err != nil {
		t.Fatal(err)
	}
	ours, err := heatdir.ReadINI(path)
	if err != nil {
		t.Fatal(err)
	}
	// Settings we write differently, and why.
	differs := map[string]string{
		"DEFAULT/log_file":              "log_dir: one log per process in the heat_dir's log directory",
		"oslo_policy/policy_file":       "no policy file: noauth with Heat's default policy",
		"yaql/limit_iterators":          "10000, the value of tripleo-common's container heat.conf",
		"database/connection":           "the heat_dir's database",
		"paste_deploy/api_paste_config": "the same file, by its absolute path in the heat_dir",
	}
	for sec, kv := range stock {
		for k, v := range kv {
			name := sec + "/" + k
			if _, ok := differs[name]; ok {
				continue
			}
			got, ok := ours[sec][k]
			switch {
			case !ok:
				t.Errorf("our heat.conf lacks [%s] %s (stock: %s)", sec, k, v)
			case !strings.Contains(v, "%(") && strings.Trim(v, "'\"") != got:
				t.Errorf("our heat.conf has [%s] %s = %s, stock %s", sec, k, got, v)
			}
		}
	}
}
