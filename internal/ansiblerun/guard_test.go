package ansiblerun

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestRefusedInputs: an inventory, ansible_cfg, playbook or private key
// that is not a readable regular file with content is refused before
// anything runs or is written, naming the parameter.
func TestRefusedInputs(t *testing.T) {
	for _, c := range []struct {
		name string
		set  func(o *Options, root string)
		want []string
	}{
		{name: "inventory a FIFO", want: []string{"inventory", "a FIFO"}, set: func(o *Options, root string) {
			o.Inventory = fifo(t, root, "inv.yaml")
		}},
		{name: "inventory /dev/zero", want: []string{"inventory /dev/zero", "a character device"}, set: func(o *Options, root string) {
			o.Inventory = "/dev/zero"
		}},
		{name: "inventory empty", want: []string{"inventory", "is empty"}, set: func(o *Options, root string) {
			o.Inventory = file(t, root, "inv.yaml", "\n  \n")
		}},
		{name: "inventory a directory", want: []string{"inventory", "a directory"}, set: func(o *Options, root string) {
			o.Inventory = root
		}},
		{name: "inventory missing", want: []string{"inventory", "no such file"}, set: func(o *Options, root string) {
			o.Inventory = filepath.Join(root, "nope.yaml")
		}},
		{name: "inventory too large", want: []string{"inventory", "over the limit of 67108864 bytes"}, set: func(o *Options, root string) {
			o.Inventory = file(t, root, "big.yaml", "")
			os.Truncate(o.Inventory, 65<<20)
		}},
		{name: "ansible_cfg missing", want: []string{"ansible_cfg", "nope.cfg", "no such file"}, set: func(o *Options, root string) {
			o.AnsibleCfg = filepath.Join(root, "nope.cfg")
		}},
		{name: "ansible_cfg a FIFO", want: []string{"ansible_cfg", "a FIFO"}, set: func(o *Options, root string) {
			o.AnsibleCfg = fifo(t, root, "ansible.cfg")
		}},
		{name: "ansible_cfg empty", want: []string{"ansible_cfg", "is empty"}, set: func(o *Options, root string) {
			o.AnsibleCfg = file(t, root, "my.cfg", "")
		}},
		{name: "playbook a FIFO", want: []string{"playbook", "a FIFO", "rendered?"}, set: func(o *Options, root string) {
			o.Playbook = fifo(t, root, "book.yaml")
		}},
		{name: "playbook a directory", want: []string{"playbook", "a directory"}, set: func(o *Options, root string) {
			o.Playbook = root
		}},
		{name: "private_key /dev/zero", want: []string{"private_key /dev/zero", "a character device"}, set: func(o *Options, root string) {
			o.PrivateKey = "/dev/zero"
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir, _ := project(t, "node-0")
			root := t.TempDir()
			o := Options{Dir: dir, Playbook: "deploy_steps_playbook.yaml"}
			c.set(&o, root)
			before := treeState(t, dir)
			start := time.Now()
			res, err := Run(context.Background(), o)
			if err == nil {
				t.Fatalf("ran: %+v", res)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%q lacks %q", err, w)
				}
			}
			if after := treeState(t, dir); after != before {
				t.Errorf("dir changed:\n%s", after)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("took %s", d)
			}
		})
	}
}

func fifo(t *testing.T, dir, name string) string {
	p := filepath.Join(dir, name)
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func file(t *testing.T, dir, name, content string) string {
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestSelectedNothing runs ansible-playbook on inventories, limits and
// tags that select nothing: each run fails saying what selected nothing,
// unless AllowNoHosts; a play that matches no host beside one that does
// is no failure.
func TestSelectedNothing(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name      string
		set       func(o *Options)
		inventory string
		want      string // in SelectedNothing; "" for a run that did something
		wantWarn  string
	}{
		{name: "empty inventory", inventory: "# nothing here\n", want: "holds no host"},
		{name: "malformed inventory", inventory: "this is [ not: yaml\n", want: "holds no host", wantWarn: "not a valid group definition"},
		{name: "limit matching nothing", set: func(o *Options) { o.Limit = "nothing-*" }, want: `limit "nothing-*" matched no host`},
		{name: "limit matching a host no play targets", set: func(o *Options) { o.Limit = "node-0"; o.Playbook = "controllers.yaml" },
			want: `limit "node-0" matched no host`},
		{name: "tags matching nothing (no fact gathering)", set: func(o *Options) { o.Tags = []string{"nothing"} },
			want: "tags nothing selected no task of deploy_steps_playbook.yaml"},
		{name: "tags matching nothing (fact gathering runs)", set: func(o *Options) { o.Tags = []string{"nothing"}; o.Playbook = "gather.yaml" },
			want: "tags nothing selected no task of gather.yaml"},
		{name: "skip_tags skipping everything", set: func(o *Options) { o.SkipTags = []string{"step", "other"} },
			want: "skip_tags step,other selected no task"},
		{name: "a play of no host beside one of some", set: func(o *Options) { o.Playbook = "two_plays.yaml" }},
		{name: "tags that select a task", set: func(o *Options) { o.Tags = []string{"other"} }},
	} {
		for _, allow := range []bool{false, true} {
			c, allow := c, allow
			t.Run(fmt.Sprintf("%s allow %v", c.name, allow), func(t *testing.T) {
				t.Parallel()
				dir, _ := project(t, "node-0")
				file(t, dir, "controllers.yaml", "- hosts: Controller\n  gather_facts: false\n  tasks:\n    - ansible.builtin.ping:\n")
				file(t, dir, "gather.yaml", "- hosts: all\n  gather_facts: true\n  tasks:\n    - ansible.builtin.ping:\n      tags: [x]\n")
				file(t, dir, "two_plays.yaml", "- hosts: Controller\n  tasks:\n    - ansible.builtin.ping:\n"+
					"- hosts: all\n  gather_facts: false\n  tasks:\n    - ansible.builtin.ping:\n")
				if c.inventory != "" {
					file(t, dir, "tripleo-ansible-inventory.yaml", c.inventory)
				}
				o := Options{Dir: dir, Playbook: "deploy_steps_playbook.yaml", AllowNoHosts: allow}
				if c.set != nil {
					c.set(&o)
				}
				res, err := Run(context.Background(), o)
				if err != nil {
					t.Fatal(err)
				}
				if c.want == "" {
					if res.Failed || res.SelectedNothing != "" || len(res.Recap) == 0 {
						t.Fatalf("a run that did something: %+v", res)
					}
					return
				}
				if !strings.Contains(res.SelectedNothing, c.want) || !strings.Contains(res.SelectedNothing, c.wantWarn) {
					t.Errorf("selected nothing: %q, want %q and %q", res.SelectedNothing, c.want, c.wantWarn)
				}
				if res.Failed == allow {
					t.Errorf("failed %v with AllowNoHosts %v", res.Failed, allow)
				}
				if !allow {
					joined := strings.Join(res.Summary, "\n")
					for _, w := range []string{"ran nothing: ", c.want, "allow_no_hosts: true accepts that", "log: " + res.Log} {
						if !strings.Contains(joined, w) {
							t.Errorf("summary lacks %q:\n%s", w, joined)
						}
					}
				}
			})
		}
	}
}

// TestMalformedAnsibleCfg: ansible-playbook's own error about the
// configuration, naming ansible_cfg, instead of "no failed task".
func TestMalformedAnsibleCfg(t *testing.T) {
	dir, _ := project(t, "node-0")
	cfg := file(t, t.TempDir(), "my.cfg", "[defaults\nforks = 3\n")
	res, err := Run(context.Background(), Options{Dir: dir, Playbook: "deploy_steps_playbook.yaml", AnsibleCfg: cfg})
	if err != nil {
		t.Fatal(err)
	}
	joined := strings.Join(res.Summary, "\n")
	for _, w := range []string{"exit code 5", "ansible_cfg " + cfg + ": ansible-playbook cannot read it", "File contains no section headers"} {
		if !strings.Contains(joined, w) {
			t.Errorf("summary lacks %q:\n%s", w, joined)
		}
	}
	if !res.Failed || strings.Contains(joined, "no failed task") {
		t.Errorf("summary:\n%s", joined)
	}
}

// TestInterrupted: a run stopped by a signal stops every process it
// started, in its process group or not (setsid), even those ignoring
// SIGTERM, and says so; the log says it too.
func TestInterrupted(t *testing.T) {
	dir, _ := project(t, "node-0")
	mark := fmt.Sprintf("ANSIRUN_TEST_MARK=%d-%d", os.Getpid(), time.Now().UnixNano())
	file(t, dir, "sleep.yaml", `- hosts: all
  gather_facts: false
  tasks:
    - name: Sleep, ignoring SIGTERM, with a process of another session
      ansible.builtin.shell: |
        setsid sh -c 'trap "" TERM; sleep 301; :' </dev/null >/dev/null 2>&1 &
        trap '' TERM
        sleep 300
`)
	ctx, cancel := context.WithCancelCause(context.Background())
	go func() {
		for end := time.Now().Add(40 * time.Second); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
			if n := marked2(mark); len(n) >= 2 && strings.Contains(strings.Join(n, " "), "sleep 301") && strings.Contains(strings.Join(n, " "), "sleep 300") {
				break
			}
		}
		cancel(&Interrupted{Signal: syscall.SIGTERM})
	}()
	start := time.Now()
	res, err := Run(ctx, Options{Dir: dir, Playbook: "sleep.yaml", Env: []string{mark}, KillGrace: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if left := marked2(mark); len(left) > 0 {
		for _, p := range left {
			t.Errorf("left running: %s", p)
		}
	}
	if d := time.Since(start); d > 60*time.Second {
		t.Errorf("took %s", d)
	}
	joined := strings.Join(res.Summary, "\n")
	if !res.Failed || res.Interrupted != "SIGTERM" || !strings.Contains(joined, "interrupted by SIGTERM") || !strings.Contains(joined, "log: "+res.Log) {
		t.Fatalf("%+v\n%s", res, joined)
	}
	if log, _ := os.ReadFile(res.Log); !strings.Contains(string(log), "n=ephemeral.heat | interrupted by SIGTERM: ansible-playbook and every process") {
		t.Errorf("the log does not say it:\n%s", log)
	}
}

// TestTimeout: the timeout stops the run as a signal does.
func TestTimeout(t *testing.T) {
	dir, _ := project(t, "node-0")
	mark := fmt.Sprintf("ANSIRUN_TEST_MARK=%d-%d", os.Getpid(), time.Now().UnixNano())
	file(t, dir, "sleep.yaml", "- hosts: all\n  gather_facts: false\n  tasks:\n    - ansible.builtin.command: sleep 300\n")
	res, err := Run(context.Background(), Options{Dir: dir, Playbook: "sleep.yaml", Env: []string{mark}, Timeout: 4 * time.Second, KillGrace: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if left := marked2(mark); len(left) > 0 {
		t.Errorf("left running: %v", left)
	}
	if !res.Failed || res.Interrupted != "" || !strings.Contains(strings.Join(res.Summary, "\n"), "stopped after 4s (timeout)") {
		t.Fatalf("%+v", res)
	}
}

// TestCanceledBeforeStart: a signal before ansible-playbook starts runs
// nothing and says so.
func TestCanceledBeforeStart(t *testing.T) {
	dir, _ := project(t, "node-0")
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(&Interrupted{Signal: syscall.SIGINT})
	before := treeState(t, dir)
	_, err := Run(ctx, Options{Dir: dir, Playbook: "deploy_steps_playbook.yaml"})
	if err == nil || !strings.Contains(err.Error(), "interrupted by SIGINT before ansible-playbook started: nothing ran") {
		t.Fatalf("%v", err)
	}
	if after := treeState(t, dir); after != before {
		t.Errorf("dir changed:\n%s", after)
	}
}

// marked2 lists the live processes whose environment holds kv.
func marked2(kv string) []string {
	var out []string
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		env, err := os.ReadFile("/proc/" + e.Name() + "/environ")
		if err != nil || !hasVar(env, []byte(kv+"\x00")) {
			continue
		}
		stat, _ := os.ReadFile("/proc/" + e.Name() + "/stat")
		if i := strings.LastIndexByte(string(stat), ')'); i > 0 && strings.HasPrefix(string(stat[i+1:]), " Z") {
			continue
		}
		cmd, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		out = append(out, e.Name()+" "+strings.ReplaceAll(string(cmd), "\x00", " "))
	}
	return out
}
