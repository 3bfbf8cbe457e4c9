package robustness

import (
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	_ "modernc.org/sqlite"

	"github.com/ephemeral-heat/ephemeral-heat/internal/pathguard"
	"github.com/ephemeral-heat/ephemeral-heat/internal/proc"
)

const tpl = "heat_template_version: 2021-04-16\nresources: {}\n"

// heatDir makes a heat_dir of ours (marker, lock file) whose heat.conf
// names a sqlite database holding one stack and fillerBytes of rows, as a
// launch leaves it; no Heat runs.
func heatDir(s *sandbox, name string, fillerBytes int) string {
	s.t.Helper()
	dir := s.dir(name, 0o700)
	db, err := sql.Open("sqlite", filepath.Join(dir, "heat.sqlite"))
	if err != nil {
		s.t.Fatal(err)
	}
	defer db.Close()
	for _, q := range []string{
		"CREATE TABLE stack (id VARCHAR(36) PRIMARY KEY, name VARCHAR(255), action VARCHAR(255), status VARCHAR(255), owner_id VARCHAR(36), deleted_at DATETIME)",
		"INSERT INTO stack VALUES ('id-1', 'overcloud', 'CREATE', 'COMPLETE', NULL, NULL)",
		"CREATE TABLE filler (id INTEGER PRIMARY KEY, data TEXT)",
	} {
		if _, err := db.Exec(q); err != nil {
			s.t.Fatal(err)
		}
	}
	row := strings.Repeat("x", 4000)
	for i := 0; i < fillerBytes/4000; i++ {
		db.Exec("INSERT INTO filler (data) VALUES (?)", row)
	}
	s.file(name+"/heat.conf", fmt.Sprintf("[database]\nconnection = sqlite:///%s\n", filepath.Join(dir, "heat.sqlite")), 0o600)
	s.file(name+"/launch.lock", "", 0o600)
	if err := pathguard.WriteMarker(dir, pathguard.KindHeatDir); err != nil {
		s.t.Fatal(err)
	}
	return dir
}

// deadHeatDir makes a heat_dir whose clouds.yaml names a Heat that does not
// run (a free port).
func deadHeatDir(s *sandbox) (dir, endpoint string) {
	s.t.Helper()
	port, err := proc.FreePort()
	if err != nil {
		s.t.Fatal(err)
	}
	endpoint = fmt.Sprintf("http://127.0.0.1:%d/v1/admin", port)
	dir = heatDir(s, "heat-launcher", 0)
	s.file("heat-launcher/clouds.yaml", "clouds:\n  heat:\n    auth_type: none\n    auth:\n      endpoint: "+endpoint+"\n", 0o600)
	return dir, endpoint
}

// a is shorthand for module arguments.
type a = map[string]any

// args returns a setup that makes nothing and gives these arguments.
func args(m a) func(*sandbox) (a, string) { return func(*sandbox) (a, string) { return m, "" } }

// stackWith returns a setup for heat_stack digest_only with a template
// (and environments) made by mk.
func stackWith(mk func(s *sandbox) (template string, envs []string)) func(*sandbox) (a, string) {
	return func(s *sandbox) (a, string) {
		t, envs := mk(s)
		m := a{"name": "overcloud", "template": t, "digest_only": true}
		if envs != nil {
			m["environment_files"] = envs
		}
		return m, ""
	}
}

// getFile is a template whose one resource get_files target.
func getFile(s *sandbox, target string) string {
	return s.file("tht/top.yaml", "heat_template_version: 2021-04-16\nresources:\n  c:\n    type: OS::Heat::SoftwareConfig\n"+
		"    properties:\n      config: {get_file: "+target+"}\n", 0o644)
}

// handCases are the faults of issue 19's "Why" list, and the paths,
// special files, encodings and sizes no spec can generate.
func handCases() []badCase {
	return []badCase{
		// heat_db_dump dest: never moved, chmodded or written through.
		{name: "dump dest is someone else's file", module: "heat_db_dump", setup: func(s *sandbox) (a, string) {
			return a{"heat_dir": heatDir(s, "hd", 0), "dest": s.file("precious.sql", "precious\n", 0o644)}, ""
		}, want: []string{"dest", "precious.sql", "not a dump heat_db_dump wrote"}},
		{name: "dump dest is a directory with content", module: "heat_db_dump", setup: func(s *sandbox) (a, string) {
			s.file("stuff.sql/keep", "x", 0o644)
			return a{"heat_dir": heatDir(s, "hd", 0), "dest": s.path("stuff.sql")}, ""
		}, want: []string{"dest", "is a directory"}},
		{name: "dump dest is a symlink", module: "heat_db_dump", setup: func(s *sandbox) (a, string) {
			return a{"heat_dir": heatDir(s, "hd", 0), "dest": s.symlink("link.sql.gz", s.file("target", "x", 0o644))}, ""
		}, want: []string{"dest", "is a symlink"}},
		{name: "dump dest is /dev/null", module: "heat_db_dump", setup: func(s *sandbox) (a, string) {
			return a{"heat_dir": heatDir(s, "hd", 0), "dest": "/dev/null"}, ""
		}, want: []string{"dest /dev/null"}},
		{name: "dump dest is a device", module: "heat_db_dump", setup: func(s *sandbox) (a, string) {
			return a{"heat_dir": heatDir(s, "hd", 0), "dest": s.device("zero.sql")}, ""
		}, want: []string{"dest", "is a character device"}},
		{name: "dump dest is a FIFO", module: "heat_db_dump", setup: func(s *sandbox) (a, string) {
			return a{"heat_dir": heatDir(s, "hd", 0), "dest": s.fifo("fifo.sql")}, ""
		}, want: []string{"dest", "is a FIFO"}},
		{name: "dump dest has someone else's .sha256 beside it", module: "heat_db_dump", setup: func(s *sandbox) (a, string) {
			s.file("d.sql.gz.sha256", "not ours\n", 0o644)
			return a{"heat_dir": heatDir(s, "hd", 0), "dest": s.path("d.sql.gz")}, ""
		}, want: []string{"dest", "d.sql.gz.sha256", "not the checksum file of a dump"}},
		{name: "dump dest in a directory others may write to", module: "heat_db_dump", setup: func(s *sandbox) (a, string) {
			return a{"heat_dir": heatDir(s, "hd", 0), "dest": filepath.Join(s.dir("shared", 0o777), "d.sql.gz")}, ""
		}, want: []string{"dest", "without the sticky bit"}},
		{name: "dump dest with a name that is not a dump's", module: "heat_db_dump", setup: func(s *sandbox) (a, string) {
			return a{"heat_dir": heatDir(s, "hd", 0), "dest": s.path("passwd")}, ""
		}, want: []string{"dest", "ends in .sql or .sql.gz"}},
		{name: "dump onto a full disk", module: "heat_db_dump", setup: func(s *sandbox) (a, string) {
			small := tmpfs(s, "small", "256k")
			return a{"heat_dir": heatDir(s, "hd", 2<<20), "dest": filepath.Join(small, "d.sql"), "compress": "none"}, ""
		}, want: []string{"no space left", "the file system of", "small", "is full", "bytes are free"}},
		{name: "restore a dump without a .sha256", module: "heat_db_dump", setup: func(s *sandbox) (a, string) {
			hd := heatDir(s, "hd", 0)
			return a{"heat_dir": hd, "state": "restored", "dest": s.file("loose.sql", "CREATE TABLE x (a INT);\n", 0o600)}, ""
		}, want: []string{"loose.sql", "no loose.sql.sha256", "verify: false"}},
		{name: "restore a dump whose checksum does not match", module: "heat_db_dump", setup: func(s *sandbox) (a, string) {
			hd := heatDir(s, "hd", 0)
			p := s.file("bad.sql", "CREATE TABLE x (a INT);\n", 0o600)
			s.file("bad.sql.sha256", strings.Repeat("0", 64)+"  bad.sql\n", 0o600)
			return a{"heat_dir": hd, "state": "restored", "dest": p}, ""
		}, want: []string{"refusing", "bad.sql", "sha256"}},
		{name: "restore a FIFO", module: "heat_db_dump", setup: func(s *sandbox) (a, string) {
			return a{"heat_dir": heatDir(s, "hd", 0), "state": "restored", "dest": s.fifo("fifo.sql")}, ""
		}, want: []string{"fifo.sql", "is a FIFO"}},
		{name: "restore /dev/zero", module: "heat_db_dump", setup: func(s *sandbox) (a, string) {
			return a{"heat_dir": heatDir(s, "hd", 0), "state": "restored", "dest": "/dev/zero"}, ""
		}, want: []string{"/dev/zero", "is a character device"}},
		{name: "dump a heat_dir that is someone else's directory", module: "heat_db_dump", setup: func(s *sandbox) (a, string) {
			s.file("notours/heat.conf", "[database]\nconnection = sqlite:////etc/x\n", 0o600)
			s.file("notours/precious", "x", 0o600)
			return a{"heat_dir": s.path("notours")}, ""
		}, want: []string{"heat_dir", "is not empty and is not a heat_dir"}},
		{name: "dump a heat_dir that is a symlink", module: "heat_db_dump", setup: func(s *sandbox) (a, string) {
			return a{"heat_dir": s.symlink("hd-link", heatDir(s, "hd", 0))}, ""
		}, want: []string{"heat_dir", "is a symlink"}},
		{name: "dump a heat_dir that is a FIFO", module: "heat_db_dump", setup: func(s *sandbox) (a, string) {
			return a{"heat_dir": s.fifo("hd")}, ""
		}, want: []string{"heat_dir", "is a FIFO"}},

		// ephemeral_heat_launch: the heat_dir guards and the boundary.
		{name: "launch in someone else's directory", module: "ephemeral_heat_launch", setup: func(s *sandbox) (a, string) {
			s.file("etc/passwd", "root:x:0:0\n", 0o644)
			return a{"heat_dir": s.path("etc")}, ""
		}, want: []string{"heat_dir", "is not empty and is not a heat_dir"}},
		{name: "launch in a tripleoclient heat-launcher directory", module: "ephemeral_heat_launch", setup: func(s *sandbox) (a, string) {
			s.file("heat-launcher/heat.conf", "[DEFAULT]\n", 0o600)
			s.file("heat-launcher/api-paste.ini", "x", 0o600)
			return a{"heat_dir": s.path("heat-launcher")}, ""
		}, want: []string{"heat_dir", "is not empty"}},
		{name: "launch through a symlinked heat_dir", module: "ephemeral_heat_launch", setup: func(s *sandbox) (a, string) {
			return a{"heat_dir": s.symlink("hd", s.dir("target", 0o755))}, ""
		}, want: []string{"heat_dir", "is a symlink"}},
		{name: "launch in a directory others may write to", module: "ephemeral_heat_launch", setup: func(s *sandbox) (a, string) {
			return a{"heat_dir": filepath.Join(s.dir("shared", 0o777), "hd")}, ""
		}, want: []string{"heat_dir", "without the sticky bit"}},
		{name: "launch a stopped check of someone else's directory", module: "ephemeral_heat_launch", setup: func(s *sandbox) (a, string) {
			s.file("other/x", "x", 0o644)
			return a{"heat_dir": s.path("other"), "state": "stopped"}, ""
		}, want: []string{"heat_dir", "is not empty"}},
		{name: "bind_host that is not an address of this host", module: "ephemeral_heat_launch",
			setup: func(s *sandbox) (a, string) { return a{"heat_dir": s.path("hd"), "bind_host": "192.0.2.1"}, "" },
			want:  []string{"bind_host", "192.0.2.1", "not an address of this host"}},
		{name: "bind_host that does not resolve", module: "ephemeral_heat_launch",
			setup: func(s *sandbox) (a, string) {
				return a{"heat_dir": s.path("hd"), "bind_host": "no-such-host.invalid"}, ""
			},
			want: []string{"bind_host", "no-such-host.invalid"}},
		{name: "owner_pid that does not run", module: "ephemeral_heat_launch",
			setup: func(s *sandbox) (a, string) { return a{"heat_dir": s.path("hd"), "owner_pid": 4194303}, "" },
			want:  []string{"owner_pid 4194303 is not a running process"}},
		{name: "heat_all_command that does not exist", module: "ephemeral_heat_launch",
			setup: func(s *sandbox) (a, string) {
				return a{"heat_dir": s.path("hd"), "heat_all_command": "/nonexistent/heat-all"}, ""
			}, want: []string{"heat_all_command", "/nonexistent/heat-all", "not found"}},
		{name: "podman options with native", module: "ephemeral_heat_launch",
			setup: func(s *sandbox) (a, string) { return a{"heat_dir": s.path("hd"), "engine_workers": 2}, "" },
			want:  []string{"engine_workers is only used with heat_type: pod"}},
		{name: "absent cannot dump a database it cannot read", module: "ephemeral_heat_launch", setup: func(s *sandbox) (a, string) {
			port, _ := proc.FreePort()
			hd := heatDir(s, "hd", 0)
			s.file("hd/heat.conf", fmt.Sprintf("[database]\nconnection = mysql+pymysql://heat:pw@127.0.0.1:3306/heat\n"+
				"host_connection = mysql+pymysql://heat:pw@127.0.0.1:%d/heat\n", port), 0o600)
			s.dir("hd/mysql/mysql", 0o700)
			return a{"heat_dir": hd, "state": "absent"}, ""
		}, want: []string{"state=absent dumps the database", "nothing was removed", "dump: false"}},

		// heat_stack: inputs read through the bounded reader.
		{name: "template is a FIFO", module: "heat_stack",
			setup: stackWith(func(s *sandbox) (string, []string) { return s.fifo("top.yaml"), nil }),
			want:  []string{"top.yaml", "is a FIFO"}},
		{name: "environment is a FIFO", module: "heat_stack",
			setup: stackWith(func(s *sandbox) (string, []string) {
				return s.file("top.yaml", tpl, 0o644), []string{s.fifo("env.yaml")}
			}), want: []string{"environment file", "env.yaml", "is a FIFO"}},
		{name: "get_file of /dev/zero", module: "heat_stack",
			setup: stackWith(func(s *sandbox) (string, []string) { return getFile(s, "/dev/zero"), nil }),
			want:  []string{"/dev/zero", "is a character device"}},
		{name: "get_file of a FIFO", module: "heat_stack",
			setup: stackWith(func(s *sandbox) (string, []string) { s.fifo("tht/script.sh"); return getFile(s, "script.sh"), nil }),
			want:  []string{"script.sh", "is a FIFO"}},
		{name: "get_file of a 4 GiB file", module: "heat_stack",
			setup: stackWith(func(s *sandbox) (string, []string) {
				s.sparse("tht/huge.bin", 4<<30)
				return getFile(s, "huge.bin"), nil
			}),
			want: []string{"huge.bin", "is 4294967296 bytes, over max_json_body_size"}},
		{name: "get_file of a directory", module: "heat_stack",
			setup: stackWith(func(s *sandbox) (string, []string) { s.dir("tht/scripts", 0o755); return getFile(s, "scripts"), nil }),
			want:  []string{"scripts", "is a directory"}},
		{name: "template over max_template_size", module: "heat_stack",
			setup: stackWith(func(s *sandbox) (string, []string) {
				return s.file("top.yaml", tpl+"# "+strings.Repeat("x", 600<<10)+"\n", 0o644), nil
			}), want: []string{"top.yaml", "over max_template_size (524288 bytes)"}},
		{name: "environment of 2 GiB", module: "heat_stack",
			setup: stackWith(func(s *sandbox) (string, []string) {
				return s.file("top.yaml", tpl, 0o644), []string{s.sparse("env.yaml", 2<<30)}
			}), want: []string{"env.yaml", "over max_json_body_size"}},
		{name: "YAML alias bomb", module: "heat_stack",
			setup: stackWith(func(s *sandbox) (string, []string) { return s.file("bomb.yaml", yamlBomb(9), 0o644), nil }),
			want:  []string{"bomb.yaml", "expands to more than"}},
		{name: "YAML alias bomb in an environment", module: "heat_stack",
			setup: stackWith(func(s *sandbox) (string, []string) {
				return s.file("top.yaml", tpl, 0o644), []string{s.file("bomb.yaml", strings.Replace(yamlBomb(9), "heat_template_version: 2021-04-16\nparameters:", "parameter_defaults:", 1), 0o644)}
			}), want: []string{"bomb.yaml", "expands to more than"}},
		{name: "YAML nested 200000 deep", module: "heat_stack",
			setup: stackWith(func(s *sandbox) (string, []string) {
				return s.file("deep.yaml", "heat_template_version: 2021-04-16\nresources: "+strings.Repeat("[", 200000)+strings.Repeat("]", 200000)+"\n", 0o644), nil
			}), want: []string{"deep.yaml", "max depth"}},
		{name: "JSON nested 200000 deep", module: "heat_stack",
			setup: stackWith(func(s *sandbox) (string, []string) {
				return s.file("deep.json", `{"heat_template_version": "2021-04-16", "resources": `+strings.Repeat("[", 200000)+strings.Repeat("]", 200000)+"}\n", 0o644), nil
			}), want: []string{"deep.json", "max depth"}},
		{name: "template in Latin-1", module: "heat_stack",
			setup: stackWith(func(s *sandbox) (string, []string) {
				return s.file("latin1.yaml", "heat_template_version: 2021-04-16\ndescription: caf\xe9\nresources: {}\n", 0o644), nil
			}), want: []string{"latin1.yaml", "UTF-8"}},
		{name: "template with NUL bytes", module: "heat_stack",
			setup: stackWith(func(s *sandbox) (string, []string) { return s.file("nul.yaml", tpl+"\x00\x00", 0o644), nil }),
			want:  []string{"nul.yaml", "control characters"}},
		{name: "binary provider template", module: "heat_stack",
			setup: stackWith(func(s *sandbox) (string, []string) {
				s.file("tht/node.yaml", "\xff\xfe\x00binary", 0o644)
				return s.file("tht/top.yaml", "heat_template_version: 2021-04-16\nresources:\n  n:\n    type: node.yaml\n", 0o644), nil
			}), want: []string{"node.yaml", "binary, not a Heat template"}},
		{name: "template is a directory", module: "heat_stack",
			setup: stackWith(func(s *sandbox) (string, []string) { return s.dir("top.yaml", 0o755), nil }),
			want:  []string{"top.yaml", "is a directory"}},
		{name: "template is a symlink loop", module: "heat_stack",
			setup: stackWith(func(s *sandbox) (string, []string) {
				s.symlink("b.yaml", s.path("a.yaml"))
				return s.symlink("a.yaml", s.path("b.yaml")), nil
			}), want: []string{"a.yaml", "too many levels of symbolic links"}},
		{name: "template missing", module: "heat_stack",
			setup: stackWith(func(s *sandbox) (string, []string) { return s.path("none.yaml"), nil }),
			want:  []string{"none.yaml", "no such file"}},
		{name: "provider template cycle", module: "heat_stack",
			setup: stackWith(func(s *sandbox) (string, []string) {
				s.file("tht/a.yaml", "heat_template_version: 2021-04-16\nresources:\n  b:\n    type: b.yaml\n", 0o644)
				s.file("tht/b.yaml", "heat_template_version: 2021-04-16\nresources:\n  a:\n    type: a.yaml\n", 0o644)
				return s.path("tht/a.yaml"), nil
			}), want: []string{"cycle"}},
		{name: "environment that is a list", module: "heat_stack",
			setup: stackWith(func(s *sandbox) (string, []string) {
				return s.file("top.yaml", tpl, 0o644), []string{s.file("env.yaml", "- a\n- b\n", 0o644)}
			}), want: []string{"env.yaml", "must be a YAML mapping"}},
		{name: "stack name Heat refuses", module: "heat_stack", setup: func(s *sandbox) (a, string) {
			return a{"name": "1st/overcloud", "template": s.file("top.yaml", tpl, 0o644), "digest_only": true}, ""
		}, want: []string{`"name"`, "starts with a letter"}},
		{name: "progress_file is someone else's file", module: "heat_stack", setup: func(s *sandbox) (a, string) {
			return a{"name": "overcloud", "template": s.file("top.yaml", tpl, 0o644), "endpoint": "http://127.0.0.1:9/v1/admin",
				"progress_file": s.file("notes.txt", "precious\n", 0o644)}, ""
		}, want: []string{"progress_file", "notes.txt", "is not a progress log"}},
		{name: "progress_file is a FIFO", module: "heat_stack", setup: func(s *sandbox) (a, string) {
			return a{"name": "overcloud", "template": s.file("top.yaml", tpl, 0o644), "endpoint": "http://127.0.0.1:9/v1/admin",
				"progress_file": s.fifo("progress.log")}, ""
		}, want: []string{"progress_file", "is a FIFO"}},
		{name: "progress_file is a symlink", module: "heat_stack", setup: func(s *sandbox) (a, string) {
			return a{"name": "overcloud", "template": s.file("top.yaml", tpl, 0o644), "endpoint": "http://127.0.0.1:9/v1/admin",
				"progress_file": s.symlink("progress.log", s.file("victim", "x", 0o644))}, ""
		}, want: []string{"progress_file", "is a symlink"}},
		{name: "a dead Heat", module: "heat_stack", setup: func(s *sandbox) (a, string) {
			hd, _ := deadHeatDir(s)
			return a{"name": "overcloud", "template": s.file("top.yaml", tpl, 0o644), "heat_dir": hd}, ""
		}, want: []string{"connection refused", "is not running", "heat-launcher/log", "state: started"}},

		// config_download dest.
		{name: "config-download into someone else's directory", module: "config_download", setup: func(s *sandbox) (a, string) {
			s.file("etc/passwd", "root:x:0:0\n", 0o644)
			return a{"stack": "overcloud", "endpoint": "http://127.0.0.1:9/v1/admin", "dest": s.path("etc")}, ""
		}, want: []string{"dest", "is not empty and is not a config_download"}},
		{name: "config-download into a heat_dir", module: "config_download", setup: func(s *sandbox) (a, string) {
			return a{"stack": "overcloud", "endpoint": "http://127.0.0.1:9/v1/admin", "dest": heatDir(s, "hd", 0)}, ""
		}, want: []string{"dest", "is the heat_dir of another task"}},
		{name: "config-download through a symlink", module: "config_download", setup: func(s *sandbox) (a, string) {
			return a{"stack": "overcloud", "endpoint": "http://127.0.0.1:9/v1/admin", "dest": s.symlink("cd", s.dir("target", 0o700))}, ""
		}, want: []string{"dest", "is a symlink"}},
		{name: "config-download onto a file", module: "config_download", setup: func(s *sandbox) (a, string) {
			return a{"stack": "overcloud", "endpoint": "http://127.0.0.1:9/v1/admin", "dest": s.file("cd", "x", 0o644)}, ""
		}, want: []string{"dest", "not a directory"}},
		{name: "config-download onto a FIFO", module: "config_download", setup: func(s *sandbox) (a, string) {
			return a{"stack": "overcloud", "endpoint": "http://127.0.0.1:9/v1/admin", "dest": s.fifo("cd")}, ""
		}, want: []string{"dest", "is a FIFO"}},
		{name: "config-download from a dead Heat", module: "config_download", setup: func(s *sandbox) (a, string) {
			hd, _ := deadHeatDir(s)
			return a{"stack": "overcloud", "heat_dir": hd, "dest": s.path("cd")}, ""
		}, want: []string{"is not running", "heat-launcher/log"}},

		// overcloud_precheck evidence.
		{name: "deployed environment is a FIFO", module: "overcloud_precheck", setup: func(s *sandbox) (a, string) {
			return a{"requested": a{"networks": []any{}}, "deployed_environment": s.fifo("env.yaml")}, ""
		}, want: []string{"deployed_environment", "is a FIFO"}},
		{name: "net_ip_map is /dev/zero", module: "overcloud_precheck", setup: func(s *sandbox) (a, string) {
			return a{"requested": a{"networks": []any{}}, "net_ip_map": "/dev/zero"}, ""
		}, want: []string{"net_ip_map", "is a character device"}},
		{name: "deployed inventory of 1 GiB", module: "overcloud_precheck", setup: func(s *sandbox) (a, string) {
			return a{"requested": a{"networks": []any{}}, "deployed_inventory": s.sparse("inv.yaml", 1<<30)}, ""
		}, want: []string{"deployed_inventory", "inv.yaml", "over the limit"}},
		{name: "new environment is a FIFO", module: "overcloud_precheck", setup: func(s *sandbox) (a, string) {
			return a{"environment_files": []any{s.fifo("env.yaml")}}, ""
		}, want: []string{"env.yaml", "is a FIFO"}},
		{name: "ceph_conf is a directory", module: "overcloud_precheck", setup: func(s *sandbox) (a, string) {
			return a{"requested": a{"networks": []any{}}, "ceph_conf": s.dir("ceph", 0o755)}, ""
		}, want: []string{"ceph_conf", "is a directory"}},

		// The arguments file itself.
		{name: "arguments file is a FIFO", module: "heat_stack",
			setup: func(s *sandbox) (a, string) { return nil, s.fifo("args") }, want: []string{"arguments file", "is a FIFO"}},
		{name: "arguments file of 1 GiB", module: "heat_db_dump",
			setup: func(s *sandbox) (a, string) { return nil, s.sparse("args", 1<<30) }, want: []string{"arguments file", "over the limit"}},
		{name: "arguments file is not JSON", module: "config_download",
			setup: func(s *sandbox) (a, string) { return nil, s.file("args", "heat_dir=/x\n", 0o600) }, want: []string{"not a JSON object"}},
		{name: "arguments file is /dev/zero", module: "ephemeral_heat_launch",
			setup: func(s *sandbox) (a, string) { return nil, "/dev/zero" }, want: []string{"arguments file", "is a character device"}},
	}
}

// yamlBomb is a template whose parameters expand to 10^levels values.
func yamlBomb(levels int) string {
	var b strings.Builder
	b.WriteString("heat_template_version: 2021-04-16\nparameters:\n  l0: &l0 [\"x\",\"x\",\"x\",\"x\",\"x\",\"x\",\"x\",\"x\",\"x\",\"x\"]\n")
	for i := 1; i < levels; i++ {
		ref := fmt.Sprintf("*l%d", i-1)
		fmt.Fprintf(&b, "  l%d: &l%d [%s]\n", i, i, strings.TrimSuffix(strings.Repeat(ref+",", 10), ","))
	}
	b.WriteString("resources: {}\n")
	return b.String()
}

// tmpfs mounts a small tmpfs at name in the sandbox (unmounted when the
// test ends).
func tmpfs(s *sandbox, name, size string) string {
	s.t.Helper()
	dir := s.dir(name, 0o700)
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size+",mode=0700", "tmpfs", dir).CombinedOutput(); err != nil {
		s.t.Fatalf("mount tmpfs (this suite runs as root, as make test does): %v %s", err, out)
	}
	s.t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			s.t.Errorf("umount %s: %v %s", dir, err, out)
		}
	})
	return dir
}

// statMode is a path's permission bits (for the controls).
func statMode(t *testing.T, p string) os.FileMode {
	t.Helper()
	st, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return st.Mode() & (os.ModePerm | os.ModeSticky)
}
