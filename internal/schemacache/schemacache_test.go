package schemacache

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeHeat lays out a Python prefix with a heat package and a heat-manage
// whose #! names its interpreter; it returns heat-manage's path.
func fakeHeat(t *testing.T, shebang string) (manage, pkg string) {
	t.Helper()
	root := t.TempDir()
	pkg = filepath.Join(root, "lib", "python3", "dist-packages", "heat")
	for rel, data := range map[string]string{
		"db/sqlalchemy/migrate_repo/versions/001_a.py":                          "one",
		"db/sqlalchemy/migrate_repo/versions/__pycache__/001_a.cpython-311.pyc": "bytecode",
		"../openstack_heat-19.0.0.egg-info/PKG-INFO":                            "Name: openstack-heat\nVersion: 19.0.0\n",
	} {
		p := filepath.Join(pkg, rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(data), 0o644)
	}
	manage = filepath.Join(root, "bin", "heat-manage")
	os.MkdirAll(filepath.Dir(manage), 0o755)
	if shebang == "" {
		shebang = "#!" + filepath.Join(root, "bin", "python3")
	}
	os.WriteFile(manage, []byte(shebang+"\nimport heat\n"), 0o755)
	return manage, pkg
}

const conf = "[DEFAULT]\ndebug = false\n[database]\nconnection = sqlite:////a/heat.sqlite\nconnection_parameters = plugin=x\n[oslo]\nx = 1\n"

func TestKey(t *testing.T) {
	manage, pkg := fakeHeat(t, "")
	base, version, got, err := Key(Inputs{HeatManage: manage, HeatConf: []byte(conf)})
	if err != nil || version != "19.0.0" || got != pkg {
		t.Fatalf("Key: %q %q %q %v", base, version, got, err)
	}
	same := func(in Inputs) bool {
		k, _, _, err := Key(in)
		if err != nil {
			t.Fatal(err)
		}
		return k == base
	}
	// Another heat_dir's path, another [DEFAULT], a new .pyc: the same key.
	if !same(Inputs{HeatManage: manage, HeatConf: []byte(strings.ReplaceAll(strings.ReplaceAll(conf, "/a/", "/b/"), "debug = false", "debug = true"))}) {
		t.Error("the database's path or another section changed the key")
	}
	os.WriteFile(filepath.Join(pkg, "db/sqlalchemy/migrate_repo/versions/__pycache__/002.pyc"), []byte("x"), 0o644)
	if !same(Inputs{HeatManage: manage, HeatConf: []byte(conf)}) {
		t.Error("bytecode changed the key")
	}
	// What db_sync's result depends on changes it.
	for name, in := range map[string]Inputs{
		"a [database] option": {HeatManage: manage, HeatConf: []byte(strings.Replace(conf, "plugin=x", "plugin=y", 1))},
		"our python files":    {HeatManage: manage, HeatConf: []byte(conf), Python: map[string][]byte{"python/p.py": []byte("1")}},
	} {
		if same(in) {
			t.Errorf("%s did not change the key", name)
		}
	}
	os.WriteFile(filepath.Join(pkg, "db/sqlalchemy/migrate_repo/versions/002_b.py"), []byte("two"), 0o644)
	if same(Inputs{HeatManage: manage, HeatConf: []byte(conf)}) {
		t.Error("a new migration did not change the key")
	}
}

func TestNoKey(t *testing.T) {
	manage, _ := fakeHeat(t, "")
	envManage, _ := fakeHeat(t, "#!/usr/bin/env python3")
	noPkg := filepath.Join(t.TempDir(), "heat-manage")
	os.WriteFile(noPkg, []byte("#!/nonexistent/bin/python3\n"), 0o755)
	binary := filepath.Join(t.TempDir(), "heat-manage")
	os.WriteFile(binary, []byte("\x7fELF..."), 0o755)
	for _, tc := range []struct {
		name string
		in   Inputs
		want string
	}{
		{"PYTHONPATH", Inputs{HeatManage: manage, PythonPath: "/x"}, "PYTHONPATH"},
		{"env", Inputs{HeatManage: envManage}, "through env"},
		{"no package", Inputs{HeatManage: noPkg}, "no heat package"},
		{"not a script", Inputs{HeatManage: binary}, "no #! line"},
		{"missing", Inputs{HeatManage: "/nonexistent/heat-manage"}, "reading /nonexistent/heat-manage"},
	} {
		if _, _, _, err := Key(tc.in); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}

func TestGetPut(t *testing.T) {
	c := Cache{Dir: filepath.Join(t.TempDir(), "cache", "heat-schema")}
	work := t.TempDir()
	src := filepath.Join(work, "heat.sqlite")
	os.WriteFile(src, []byte("db_sync's result"), 0o600)
	dst := filepath.Join(work, "copy.sqlite")
	if ok, err := c.Get("k", dst, 0o600); ok || err != nil {
		t.Fatalf("Get before any Put: %v %v", ok, err)
	}
	if err := c.Put("k", src, Record{HeatVersion: "19"}, false); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(c.Dir); st.Mode().Perm() != 0o700 {
		t.Errorf("cache dir mode %o", st.Mode().Perm())
	}
	if st, _ := os.Stat(c.db("k")); st.Mode().Perm() != 0o600 {
		t.Errorf("entry mode %o", st.Mode().Perm())
	}
	if ok, err := c.Get("k", dst, 0o600); !ok || err != nil {
		t.Fatalf("Get: %v %v", ok, err)
	}
	if b, _ := os.ReadFile(dst); string(b) != "db_sync's result" {
		t.Errorf("copy holds %q", b)
	}
	// An existing destination is never replaced.
	if ok, err := c.Get("k", dst, 0o600); ok || err == nil {
		t.Errorf("Get over an existing file: %v %v", ok, err)
	}
	// A tampered entry is refused and nothing is written.
	os.WriteFile(c.db("k"), []byte("db_sync's resulT"), 0o600)
	dst2 := filepath.Join(work, "copy2.sqlite")
	if ok, err := c.Get("k", dst2, 0o600); ok || err == nil || !strings.Contains(err.Error(), "does not match its record") {
		t.Errorf("tampered entry: %v %v", ok, err)
	}
	if _, err := os.Lstat(dst2); err == nil {
		t.Error("a tampered entry was copied")
	}
	// Put keeps an entry, unless it is to be replaced.
	os.WriteFile(src, []byte("db_sync's result, again"), 0o600)
	if err := c.Put("k", src, Record{}, false); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Get("k", dst2, 0o600); !errors.Is(err, ErrMismatch) {
		t.Errorf("Put without replace changed the entry: %v", err)
	}
	if err := c.Put("k", src, Record{}, true); err != nil {
		t.Fatal(err)
	}
	if ok, err := c.Get("k", dst2, 0o600); !ok || err != nil {
		t.Errorf("replaced entry: %v %v", ok, err)
	}
	// A journal beside the source: not stored.
	os.WriteFile(src+"-journal", nil, 0o600)
	if err := c.Put("k2", src, Record{}, false); err == nil {
		t.Error("Put stored a database with a journal")
	}
}

func TestCacheNotOurs(t *testing.T) {
	root := t.TempDir()
	open := filepath.Join(root, "open")
	os.Mkdir(open, 0o777)
	os.Chmod(open, 0o777)
	target := filepath.Join(root, "target")
	os.Mkdir(target, 0o700)
	link := filepath.Join(root, "link")
	os.Symlink(target, link)
	for _, dir := range []string{open, link} {
		c := Cache{Dir: dir}
		if _, err := c.Get("k", filepath.Join(root, "x"), 0o600); err == nil {
			t.Errorf("%s: Get used it", dir)
		}
		src := filepath.Join(root, "src")
		os.WriteFile(src, []byte("x"), 0o600)
		if err := c.Put("k", src, Record{}, false); err == nil {
			t.Errorf("%s: Put used it", dir)
		}
	}
	if st, _ := os.Stat(open); st.Mode().Perm() != 0o777 {
		t.Errorf("a cache dir not ours was changed to %o", st.Mode().Perm())
	}
}

func TestDefault(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", "/xdg")
	if c, _ := Default(); c.Dir != "/xdg/ephemeral-heat/heat-schema" {
		t.Errorf("XDG: %s", c.Dir)
	}
	t.Setenv("XDG_CACHE_HOME", "relative")
	t.Setenv("HOME", "/home/op")
	if c, _ := Default(); c.Dir != "/home/op/.cache/ephemeral-heat/heat-schema" {
		t.Errorf("HOME: %s", c.Dir)
	}
}
