package backup

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ephemeral-heat/ephemeral-heat/internal/workdir"
)

const testStack = "overcloud"

var t0 = time.Date(2026, 11, 27, 6, 0, 0, 0, time.UTC)

func put(t *testing.T, p, content string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
}

func sumOf(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }

// deployment makes a working dir as a deploy leaves it, under root.
func deployment(t *testing.T, root string) workdir.Layout {
	t.Helper()
	l, err := workdir.New(filepath.Join(root, "overcloud-deploy", testStack), testStack)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Ensure(); err != nil {
		t.Fatal(err)
	}
	put(t, l.Passwords(), "parameter_defaults:\n  AdminPassword: secret\n", 0o600)
	put(t, l.Status(), "deployment_status: DEPLOY_SUCCESS\n", 0o600)
	put(t, l.Nodes(), "groups: []\ncomplete: true\n", 0o600)
	put(t, l.ScaleDown(), "parameter_defaults: {}\n", 0o600)
	put(t, l.DeployInputs(), strings.Repeat("a", 64)+"\n", 0o600)
	cd := l.ConfigDownload()
	put(t, filepath.Join(cd, "ansible.cfg"), "[defaults]\nlog_path = "+l.Dir+"/config-download/overcloud/ansible.log\nother = "+l.Dir+"2/x\n", 0o644)
	put(t, filepath.Join(cd, ".git", "HEAD"), "ref: refs/heads/master\n", 0o644)
	put(t, filepath.Join(cd, ".git", "logs", "HEAD"), "commit in "+l.Dir+"\n", 0o644)
	put(t, filepath.Join(cd, "deploy_steps_playbook.yaml"), "- hosts: all\n", 0o600)
	if err := os.Symlink("deploy_steps_playbook.yaml", filepath.Join(cd, "playbook.yaml")); err != nil {
		t.Fatal(err)
	}
	hd := l.HeatDir()
	put(t, filepath.Join(hd, ".ephemeral-heat"), "ephemeral.heat heat_dir\n", 0o600)
	dump := "-- dump\nINSERT INTO stack VALUES (1);\n"
	name := "heat-db-20261127T000000.000000Z.sql"
	put(t, filepath.Join(hd, name), dump, 0o600)
	put(t, filepath.Join(hd, name+".sha256"), sumOf([]byte(dump))+"  "+name+"\n", 0o600)
	put(t, filepath.Join(hd, name+".manifest.json"), `{"source": "`+hd+`/heat.sqlite"}`+"\n", 0o600)
	put(t, filepath.Join(hd, "heat.conf"), "log_dir = "+hd+"/log\n", 0o600)
	put(t, filepath.Join(hd, "launch.json"), "{}\n", 0o600)
	put(t, filepath.Join(hd, "launch.lock"), "", 0o600)
	put(t, filepath.Join(hd, "heat.sqlite"), "db", 0o600)
	put(t, filepath.Join(hd, "python", "x.py"), "", 0o600)
	put(t, filepath.Join(hd, "log", "heat-all.log"), "started in "+hd+"\n", 0o600)
	put(t, l.LockPath(), "", 0o600)
	return l
}

func notRunning(context.Context, string) (string, error) { return "", nil }

func TestRoundTrip(t *testing.T) {
	base := t.TempDir()
	l := deployment(t, filepath.Join(base, "home1"))
	bdir := filepath.Join(base, "home1", "overcloud-backup")
	res, err := Backup(context.Background(), Options{Layout: l, Dir: bdir, Now: t0, Running: notRunning})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Changed || res.File != filepath.Join(bdir, "overcloud-backup-20261127T060000Z.tar.gz") {
		t.Fatalf("backup = %+v", res)
	}
	if st, err := os.Stat(res.File); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("archive mode: %v %v", st, err)
	}
	if sum, err := CheckSum(res.File); err != nil || sum != res.SHA256 {
		t.Fatalf("CheckSum = %s, %v; want %s", sum, err, res.SHA256)
	}
	names := map[string]bool{}
	for _, x := range res.Manifest.Members {
		names[x.Name] = true
	}
	for _, in := range []string{"overcloud-passwords.yaml", "outputs/overcloud-nodes.yaml", "overcloud-scale-down.yaml",
		"config-download/overcloud/.git/HEAD", "config-download/overcloud/playbook.yaml", "heat-launcher/heat-db-20261127T000000.000000Z.sql",
		"heat-launcher/log/heat-all.log", ".ephemeral-heat"} {
		if !names[in] {
			t.Errorf("the backup lacks %s", in)
		}
	}
	for _, out := range []string{"workdir.lock", "heat-launcher/heat.conf", "heat-launcher/launch.json", "heat-launcher/launch.lock",
		"heat-launcher/heat.sqlite", "heat-launcher/python", "heat-launcher/python/x.py"} {
		if names[out] {
			t.Errorf("the backup holds %s", out)
		}
	}
	if m, err := readManifestOf(res.File); err != nil || m.Stack != testStack || m.WorkDir != l.Dir || m.Format != Format {
		t.Fatalf("manifest in the archive: %+v, %v", m, err)
	}

	// The same working dir again: nothing new is written.
	again, err := Backup(context.Background(), Options{Layout: l, Dir: bdir, Now: t0.Add(time.Hour), Running: notRunning})
	if err != nil || again.Changed || again.File != res.File {
		t.Fatalf("second backup = %+v, %v; want the first, unchanged", again, err)
	}

	// Restore elsewhere (another "HOME").
	target := filepath.Join(base, "home2", "deploy", testStack)
	rr, err := Restore(RestoreOptions{File: res.File, WorkDir: target, Stack: testStack, Now: t0})
	if err != nil {
		t.Fatal(err)
	}
	if !rr.Changed || rr.Stack != testStack || rr.From != l.Dir {
		t.Fatalf("restore = %+v", rr)
	}
	nl := workdir.Layout{Dir: target, Stack: testStack}
	b, err := os.ReadFile(filepath.Join(nl.ConfigDownload(), "ansible.cfg"))
	if err != nil {
		t.Fatal(err)
	}
	wantCfg := "[defaults]\nlog_path = " + target + "/config-download/overcloud/ansible.log\nother = " + l.Dir + "2/x\n"
	if string(b) != wantCfg {
		t.Errorf("ansible.cfg restored as\n%s\nwant\n%s", b, wantCfg)
	}
	if b, _ := os.ReadFile(filepath.Join(nl.ConfigDownload(), ".git", "logs", "HEAD")); !strings.Contains(string(b), l.Dir) {
		t.Errorf("git history was rewritten: %q", b)
	}
	if st, err := os.Stat(filepath.Join(nl.ConfigDownload(), "ansible.cfg")); err != nil || st.Mode().Perm() != 0o644 {
		t.Errorf("mode of ansible.cfg not kept: %v %v", st, err)
	}
	for _, d := range []string{target, nl.ConfigDownload(), nl.HeatDir()} {
		if st, err := os.Stat(d); err != nil || st.Mode().Perm() != 0o700 {
			t.Errorf("%s: %v %v, want a 0700 directory", d, st, err)
		}
	}
	if tgt, err := os.Readlink(filepath.Join(nl.ConfigDownload(), "playbook.yaml")); err != nil || tgt != "deploy_steps_playbook.yaml" {
		t.Errorf("symlink: %q %v", tgt, err)
	}
	if b, _ := os.ReadFile(nl.Passwords()); string(b) != "parameter_defaults:\n  AdminPassword: secret\n" {
		t.Errorf("passwords restored as %q", b)
	}
	if err := nl.Guard(); err != nil || !nl.Deployed() {
		t.Errorf("restored working dir is not ours or not a deployment: %v", err)
	}
	if _, err := os.Lstat(filepath.Join(nl.HeatDir(), "heat.conf")); err == nil {
		t.Error("heat.conf was restored")
	}
	// The same restore again does nothing.
	rr2, err := Restore(RestoreOptions{File: res.File, WorkDir: target, Now: t0})
	if err != nil || rr2.Changed {
		t.Fatalf("second restore = %+v, %v; want unchanged", rr2, err)
	}
	// A backup of the restored dir restores again (the record is no obstacle).
	if _, err := Backup(context.Background(), Options{Layout: nl, Dir: filepath.Join(base, "home2", "b"), Now: t0, Running: notRunning}); err != nil {
		t.Fatalf("backup of the restored working dir: %v", err)
	}
}

func TestCheckModeWritesNothing(t *testing.T) {
	base := t.TempDir()
	l := deployment(t, base)
	bdir := filepath.Join(base, "backups")
	res, err := Backup(context.Background(), Options{Layout: l, Dir: bdir, Now: t0, Check: true, Running: notRunning})
	if err != nil || !res.Changed || res.File == "" {
		t.Fatalf("check backup = %+v, %v", res, err)
	}
	if _, err := os.Lstat(bdir); !os.IsNotExist(err) {
		t.Fatalf("check mode made backup_dir: %v", err)
	}
	real, err := Backup(context.Background(), Options{Layout: l, Dir: bdir, Now: t0, Running: notRunning})
	if err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(base, "new")
	rr, err := Restore(RestoreOptions{File: real.File, WorkDir: target, Check: true})
	if err != nil || !rr.Changed || rr.Stack != testStack {
		t.Fatalf("check restore = %+v, %v", rr, err)
	}
	if _, err := os.Lstat(target); !os.IsNotExist(err) {
		t.Fatalf("check mode made work_dir: %v", err)
	}
}

func TestBackupRefusals(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T, l workdir.Layout) Options
		want  []string
	}{
		{"a working dir that is not ours", func(t *testing.T, l workdir.Layout) Options {
			os.Remove(filepath.Join(l.Dir, ".ephemeral-heat"))
			for _, p := range []string{l.Passwords(), l.Status(), l.HeatDir(), filepath.Join(l.Dir, "config-download"), filepath.Join(l.Dir, "outputs")} {
				os.RemoveAll(p)
			}
			return Options{Running: notRunning}
		}, []string{"work_dir", "not a work_dir this collection made"}},
		{"another user's permissions", func(t *testing.T, l workdir.Layout) Options {
			os.Chmod(l.Dir, 0o777)
			return Options{Running: notRunning}
		}, []string{"work_dir", "writable by other users"}},
		{"no deployment of the stack", func(t *testing.T, l workdir.Layout) Options {
			os.Remove(l.Passwords())
			os.Remove(l.Status())
			return Options{Running: notRunning}
		}, []string{"work_dir", "no deployment of stack overcloud", "stack_name"}},
		{"a Heat runs", func(t *testing.T, l workdir.Layout) Options {
			return Options{Running: func(context.Context, string) (string, error) { return "heat-all pid 42", nil }}
		}, []string{"work_dir", "its Heat runs (heat-all pid 42)", "kill_heat"}},
		{"a dump that does not match its checksum", func(t *testing.T, l workdir.Layout) Options {
			put(t, filepath.Join(l.HeatDir(), "heat-db-20261127T000000.000000Z.sql"), "-- changed\n", 0o600)
			return Options{Running: notRunning}
		}, []string{"work_dir", "heat-db-20261127T000000.000000Z.sql cannot be verified"}},
		{"a dump without checksum", func(t *testing.T, l workdir.Layout) Options {
			os.Remove(filepath.Join(l.HeatDir(), "heat-db-20261127T000000.000000Z.sql.sha256"))
			return Options{Running: notRunning}
		}, []string{"work_dir", "cannot be verified"}},
		{"a symlink out of the working dir", func(t *testing.T, l workdir.Layout) Options {
			os.Symlink("/etc/passwd", filepath.Join(l.Dir, "outputs", "x"))
			return Options{Running: notRunning}
		}, []string{"work_dir", "outputs/x is a symlink to \"/etc/passwd\""}},
		{"backup_dir inside the working dir", func(t *testing.T, l workdir.Layout) Options {
			return Options{Running: notRunning, Dir: filepath.Join(l.Dir, "b")}
		}, []string{"backup_dir", "inside work_dir"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			base := t.TempDir()
			l := deployment(t, base)
			o := tc.setup(t, l)
			o.Layout, o.Now = l, t0
			if o.Dir == "" {
				o.Dir = filepath.Join(base, "backups")
			}
			_, err := Backup(context.Background(), o)
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			if _, err := os.Lstat(o.Dir); !os.IsNotExist(err) {
				t.Errorf("backup_dir was made: %v", err)
			}
		})
	}
}

// archive writes an archive of a manifest and members as given (hostile
// ones too) with a matching sidecar.
func archive(t *testing.T, dir string, m *Manifest, members []tarMember) string {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	mb, _ := json.Marshal(m)
	tw.WriteHeader(&tar.Header{Name: ManifestName, Mode: 0o600, Size: int64(len(mb)), Typeflag: tar.TypeReg})
	tw.Write(mb)
	for _, x := range members {
		tw.WriteHeader(&tar.Header{Name: x.name, Mode: 0o600, Size: int64(len(x.body)), Typeflag: x.typ, Linkname: x.link})
		tw.Write([]byte(x.body))
	}
	tw.Close()
	zw.Close()
	p := filepath.Join(dir, "overcloud-backup-20261127T060000Z.tar.gz")
	put(t, p, buf.String(), 0o600)
	put(t, p+SumSuffix, sumOf(buf.Bytes())+"  x\n", 0o600)
	return p
}

type tarMember struct {
	name, body, link string
	typ              byte
}

func TestRestoreRefusals(t *testing.T) {
	good := func(t *testing.T, base string) string {
		l := deployment(t, filepath.Join(base, "src"))
		res, err := Backup(context.Background(), Options{Layout: l, Dir: filepath.Join(base, "b"), Now: t0, Running: notRunning})
		if err != nil {
			t.Fatal(err)
		}
		return res.File
	}
	resum := func(t *testing.T, file string) {
		b, _ := os.ReadFile(file)
		put(t, file+SumSuffix, sumOf(b)+"  x\n", 0o600)
	}
	hostile := func(members ...tarMember) func(t *testing.T, base string) (string, RestoreOptions) {
		return func(t *testing.T, base string) (string, RestoreOptions) {
			m := &Manifest{Format: Format, Stack: testStack, WorkDir: "/old"}
			for _, x := range members {
				rel := strings.TrimPrefix(strings.TrimSuffix(x.name, "/"), MemberPrefix)
				typ := map[byte]string{tar.TypeReg: TypeFile, tar.TypeDir: TypeDir, tar.TypeSymlink: TypeSymlink}[x.typ]
				m.Members = append(m.Members, Member{Name: rel, Type: typ, Mode: 0o600, Size: int64(len(x.body)), SHA256: sumOf([]byte(x.body)), Target: x.link})
			}
			return archive(t, base, m, members), RestoreOptions{}
		}
	}
	tests := []struct {
		name  string
		setup func(t *testing.T, base string) (string, RestoreOptions)
		want  []string
	}{
		{"another stack", func(t *testing.T, base string) (string, RestoreOptions) {
			return good(t, base), RestoreOptions{Stack: "dcn0"}
		}, []string{"stack_name dcn0", "backup of stack overcloud"}},
		{"over an existing deployment", func(t *testing.T, base string) (string, RestoreOptions) {
			f := good(t, base)
			l := deployment(t, filepath.Join(base, "there"))
			return f, RestoreOptions{WorkDir: l.Dir}
		}, []string{"work_dir", "not empty", "never over an existing deployment"}},
		{"truncated", func(t *testing.T, base string) (string, RestoreOptions) {
			f := good(t, base)
			b, _ := os.ReadFile(f)
			put(t, f, string(b[:len(b)/2]), 0o600)
			return f, RestoreOptions{}
		}, []string{"backup_file", "truncated or was changed"}},
		{"truncated with its checksum made again", func(t *testing.T, base string) (string, RestoreOptions) {
			f := good(t, base)
			b, _ := os.ReadFile(f)
			put(t, f, string(b[:len(b)-40]), 0o600)
			resum(t, f)
			return f, RestoreOptions{}
		}, []string{"backup_file", "truncated"}},
		{"without its checksum", func(t *testing.T, base string) (string, RestoreOptions) {
			f := good(t, base)
			os.Remove(f + SumSuffix)
			return f, RestoreOptions{}
		}, []string{"backup_file", "no checksum"}},
		{"a member changed, checksum made again", hostile(
			tarMember{name: "work_dir/overcloud-passwords.yaml", body: "x", typ: tar.TypeReg}),
			nil},
		{"an absolute member", hostile(tarMember{name: "/etc/cron.d/x", body: "x", typ: tar.TypeReg}),
			[]string{"backup_file", "not a path inside the working dir"}},
		{"a .. member", hostile(tarMember{name: "work_dir/../x", body: "x", typ: tar.TypeReg}),
			[]string{"backup_file", "not a path inside the working dir"}},
		{"a symlink out", hostile(tarMember{name: "work_dir/l", link: "../../etc", typ: tar.TypeSymlink}),
			[]string{"backup_file", "outside the working dir"}},
		{"a file through a symlink", hostile(tarMember{name: "work_dir/l", link: "d", typ: tar.TypeSymlink},
			tarMember{name: "work_dir/l/x", body: "x", typ: tar.TypeReg}),
			[]string{"backup_file", "under the symlink l"}},
		{"a hard link", hostile(tarMember{name: "work_dir/h", link: "work_dir/x", typ: tar.TypeLink}),
			[]string{"backup_file", "not a file, directory or symlink"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			base := t.TempDir()
			file, o := tc.setup(t, base)
			if tc.want == nil { // a member's content changed after the manifest was written
				b, _ := os.ReadFile(file)
				tampered := tamper(t, b)
				put(t, file, string(tampered), 0o600)
				resum(t, file)
				tc.want = []string{"backup_file", "not what the manifest lists"}
			}
			o.File = file
			if o.WorkDir == "" {
				o.WorkDir = filepath.Join(base, "new", "wd")
			}
			before := listTree(t, filepath.Dir(o.WorkDir))
			_, err := Restore(o)
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			if after := listTree(t, filepath.Dir(o.WorkDir)); after != before {
				t.Errorf("the restore wrote:\nbefore %s\nafter  %s", before, after)
			}
		})
	}
}

// tamper rewrites the archive with the first member's content changed and
// the manifest kept.
func tamper(t *testing.T, b []byte) []byte {
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	changed := false
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(tr)
		if hdr.Name != ManifestName && hdr.Typeflag == tar.TypeReg && !changed && len(body) > 0 {
			body[0] ^= 1
			changed = true
		}
		tw.WriteHeader(hdr)
		tw.Write(body)
	}
	tw.Close()
	zw.Close()
	return buf.Bytes()
}

// listTree names what is under dir (missing: "none").
func listTree(t *testing.T, dir string) string {
	var out []string
	err := filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		out = append(out, p)
		return nil
	})
	if os.IsNotExist(err) {
		return "none"
	}
	return strings.Join(out, " ")
}

func TestReplacePath(t *testing.T) {
	tests := []struct{ in, want string }{
		{"/a/wd", "/b/new"},
		{"x=/a/wd/f y=/a/wd", "x=/b/new/f y=/b/new"},
		{"/a/wd2/f /a/wd.old /a/wd-x", "/a/wd2/f /a/wd.old /a/wd-x"},
		{"'/a/wd' \"/a/wd\"\n", "'/b/new' \"/b/new\"\n"},
	}
	for _, tc := range tests {
		if got, _ := replacePath([]byte(tc.in), "/a/wd", "/b/new"); string(got) != tc.want {
			t.Errorf("replacePath(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestNoRewrite(t *testing.T) {
	tests := []struct {
		rel  string
		keep bool
	}{
		{"config-download/overcloud/ansible.cfg", false},
		{"config-download/overcloud/tripleo-ansible-inventory.yaml", false},
		{"overcloud-deployment_status.yaml", false},
		{"config-download/overcloud/.git/logs/HEAD", true},
		{"config-download/overcloud/ansible.log", true},
		{"heat-launcher/log/watchdog.txt", true},
		{"heat-launcher/heat-db-20261127T000000.000000Z.sql.gz.manifest.json", true},
		{"overcloud-install-20261127000000.tar.bzip2", true},
	}
	for _, tc := range tests {
		if got := noRewrite(tc.rel); got != tc.keep {
			t.Errorf("noRewrite(%q) = %v, want %v", tc.rel, got, tc.keep)
		}
	}
}

// An empty directory made for it is a valid target: the restore replaces it.
func TestRestoreIntoEmptyDir(t *testing.T) {
	base := t.TempDir()
	l := deployment(t, filepath.Join(base, "src"))
	res, err := Backup(context.Background(), Options{Layout: l, Dir: filepath.Join(base, "b"), Now: t0, Running: notRunning})
	if err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(base, "empty")
	if err := os.Mkdir(target, 0o700); err != nil {
		t.Fatal(err)
	}
	if _, err := Restore(RestoreOptions{File: res.File, WorkDir: target, Now: t0}); err != nil {
		t.Fatal(err)
	}
	if !(workdir.Layout{Dir: target, Stack: testStack}).Deployed() {
		t.Error("nothing restored into the empty directory")
	}
	// Nothing else is left beside it (the unpacking directory is gone).
	ents, _ := os.ReadDir(base)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if strings.Join(names, " ") != "b empty src" {
		t.Errorf("beside the target: %v", names)
	}
}
