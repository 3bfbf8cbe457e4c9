package robustness

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ephemeral-heat/ephemeral-heat/internal/testutil/ansibletest"
	"github.com/ephemeral-heat/ephemeral-heat/internal/testutil/fakeheat"
)

// playbookCase is a playbook run on a bad working dir: it must fail, saying
// want, within caseTimeout, changing nothing in the sandbox but what
// mayWrite names, nothing outside it, and leaving no process.
type playbookCase struct {
	name, book string
	setup      func(s *sandbox) []string // extra vars, as -e arguments
	want       []string
}

// TestPlaybookRefusals: the deploy and scale-down playbooks refuse a
// working dir that is not ours, or whose files are not what a deploy
// wrote, before anything runs (issue 33's playbook cases); the migrate
// playbook a working dir that is not new or empty, a source Heat without
// the stack, no database_url (issue 30's).
func TestPlaybookRefusals(t *testing.T) {
	root, err := repoRoot()
	if err != nil {
		t.Fatal(err)
	}
	env := ansibletest.Env(t, root)
	deploy := filepath.Join(root, "playbooks", "deploy-overcloud.yml")
	scale := filepath.Join(root, "playbooks", "scale-down.yml")
	migrate := filepath.Join(root, "playbooks", "migrate.yml")
	installed := fakeheat.Start(t, fakeheat.Stack{Name: "overcloud", ID: "5a1e-0002", Template: map[string]any{}})
	cases := []playbookCase{
		{name: "migrate into a non-empty working dir", book: migrate, setup: func(s *sandbox) []string {
			wd := workDir(s, wdNodes, nil)
			return []string{"-e", "work_dir=" + wd, "-e", "endpoint=" + installed.Endpoint, "-e", "database_url=" + heatDatabase(s, "heat.sqlite", "5a1e-0002")}
		}, want: []string{"work_dir", "is not empty", "nothing was changed"}},
		{name: "migrate from a Heat without the stack", book: migrate, setup: func(s *sandbox) []string {
			return []string{"-e", "work_dir=" + s.path("new", "overcloud"), "-e", "stack_name=other", "-e", "endpoint=" + installed.Endpoint,
				"-e", "database_url=" + heatDatabase(s, "heat.sqlite", "5a1e-0002")}
		}, want: []string{"stack: the Heat at", `has no stack \"other\"`, "nothing was written"}},
		{name: "migrate without database_url", book: migrate, setup: func(s *sandbox) []string {
			return []string{"-e", "work_dir=" + s.path("new", "overcloud"), "-e", "endpoint=" + installed.Endpoint}
		}, want: []string{"database_url: give the installed Heat database URL"}},
		{name: "deploy into a symlinked work_dir", book: deploy, setup: func(s *sandbox) []string {
			return []string{"-e", "work_dir=" + s.symlink("wd", s.dir("target", 0o700)), "-e", "template=" + s.path("none.yaml")}
		}, want: []string{"work_dir", "is a symlink"}},
		{name: "deploy into another user's work_dir", book: deploy, setup: func(s *sandbox) []string {
			wd := s.dir("wd", 0o700)
			os.Chown(wd, 65534, 65534)
			return []string{"-e", "work_dir=" + wd, "-e", "template=" + s.path("none.yaml")}
		}, want: []string{"work_dir", "owned by uid 65534"}},
		{name: "deploy into a directory of someone else's files", book: deploy, setup: func(s *sandbox) []string {
			s.file("docs/notes.txt", "mine\n", 0o600)
			return []string{"-e", "work_dir=" + s.path("docs"), "-e", "template=" + s.path("none.yaml")}
		}, want: []string{"work_dir", "is not empty and is not a work_dir"}},
		{name: "deploy into a group-writable work_dir", book: deploy, setup: func(s *sandbox) []string {
			return []string{"-e", "work_dir=" + s.dir("wd", 0o770), "-e", "template=" + s.path("none.yaml")}
		}, want: []string{"work_dir", "writable by other users"}},
		{name: "scale-down with a FIFO nodes file", book: scale, setup: func(s *sandbox) []string {
			wd := workDir(s, "", nil)
			s.fifo("wd/outputs/overcloud-nodes.yaml")
			return []string{"-e", "work_dir=" + wd, "-e", `{"scale_down_hosts": ["overcloud-novacompute-0"]}`}
		}, want: []string{"nodes file", "is a FIFO"}},
		{name: "scale-down naming the group all", book: scale, setup: func(s *sandbox) []string {
			wd := workDir(s, wdNodes, nil)
			return []string{"-e", "work_dir=" + wd, "-e", `{"scale_down_hosts": ["all"]}`}
		}, want: []string{"unknown node(s)", `\"all\"`}},
		{name: "scale-down of a symlinked work_dir", book: scale, setup: func(s *sandbox) []string {
			return []string{"-e", "work_dir=" + s.symlink("wd2", workDir(s, wdNodes, nil)), "-e", `{"scale_down_hosts": ["overcloud-novacompute-0"]}`}
		}, want: []string{"work_dir", "is a symlink"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := newSandbox(t)
			vars := c.setup(s)
			before, world := snapshot(s.root), outside(t, s)
			ctx, cancel := context.WithTimeout(context.Background(), 2*caseTimeout)
			defer cancel()
			cmd := exec.CommandContext(ctx, "ansible-playbook", append([]string{"-i", "localhost,", c.book}, vars...)...)
			cmd.Env = s.environ(env)
			start := time.Now()
			out, err := cmd.CombinedOutput()
			if ctx.Err() != nil {
				t.Fatalf("HANG: %s did not finish within %s", c.book, 2*caseTimeout)
			}
			if err == nil {
				t.Fatalf("WRONG SUCCESS:\n%s", out)
			}
			for _, w := range c.want {
				if !strings.Contains(string(out), w) {
					t.Errorf("the output does not say %q:\n%s", w, out)
				}
			}
			if after := outside(t, s); after != world {
				t.Errorf("something outside the sandbox changed:\n%s", diffLines(world, after))
			}
			// The working dir's lock holder ends with the ansible-playbook it
			// was taken for: it looks at it every 200 ms.
			deadline := time.Now().Add(3 * time.Second)
			for len(processesIn(s.root)) > 0 && time.Now().Before(deadline) {
				time.Sleep(50 * time.Millisecond)
			}
			if left := processesIn(s.root); len(left) > 0 {
				t.Errorf("processes left running in the sandbox: %v", left)
			}
			// Ansible's own temporary directory in HOME is not state.
			os.RemoveAll(filepath.Join(s.home, ".ansible"))
			if after := snapshot(s.root); after != before {
				t.Errorf("the sandbox changed on a refused input:\n%s", diffLines(before, after))
			}
			t.Logf("%s refused in %s", filepath.Base(c.book), time.Since(start).Round(time.Millisecond))
		})
	}
}
