package workdir

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"
)

// validNodes is a nodes file as Save writes it (key order aside): a group
// with a removed member, and a Controller.
const validNodes = `stack: overcloud
groups:
  - resource: Compute
    role: Compute
    count_parameter: ComputeCount
    removal_policies_parameter: ComputeRemovalPolicies
    removed: ["1"]
    removed_members:
      - {index: "1", hostname: overcloud-novacompute-1}
    members:
      - {index: "0", hostname: overcloud-novacompute-0}
      - {index: "2", hostname: overcloud-novacompute-2}
  - resource: Controller
    role: Controller
    count_parameter: ControllerCount
    removal_policies_parameter: ControllerRemovalPolicies
    removed: []
    members:
      - {index: "0", hostname: overcloud-controller-0}
complete: true
`

// layoutWithNodes is a working dir whose nodes file holds content.
func layoutWithNodes(t *testing.T, content string) Layout {
	t.Helper()
	l, _ := New(filepath.Join(t.TempDir(), "w"), "overcloud")
	os.MkdirAll(filepath.Dir(l.Nodes()), 0o700)
	if err := os.WriteFile(l.Nodes(), []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return l
}

// ReadNodes checks the nodes file against its schema: each refusal names
// the file, the entry and what to do (redeploy); a valid file is read as
// written, and what Save writes reads back the same.
func TestReadNodesValidates(t *testing.T) {
	l := layoutWithNodes(t, validNodes)
	n, err := l.ReadNodes()
	if err != nil {
		t.Fatalf("the valid file: %v", err)
	}
	want := &Nodes{Stack: "overcloud", Groups: []Group{
		{Resource: "Compute", Role: "Compute", CountParameter: "ComputeCount", RemovalPoliciesParameter: "ComputeRemovalPolicies",
			Removed: []string{"1"}, RemovedMembers: []Member{{"1", "overcloud-novacompute-1"}},
			Members: []Member{{"0", "overcloud-novacompute-0"}, {"2", "overcloud-novacompute-2"}}},
		{Resource: "Controller", Role: "Controller", CountParameter: "ControllerCount", RemovalPoliciesParameter: "ControllerRemovalPolicies",
			Removed: []string{}, Members: []Member{{"0", "overcloud-controller-0"}}},
	}}
	if !reflect.DeepEqual(n, want) {
		t.Fatalf("read\n %+v\nwant %+v", n, want)
	}
	os.WriteFile(l.Nodes(), yamlOf(n), 0o600)
	if again, err := l.ReadNodes(); err != nil || !reflect.DeepEqual(again, want) {
		t.Fatalf("what Save writes does not read back: %+v %v\n%s", again, err, yamlOf(n))
	}

	for _, c := range []struct {
		name, old, new string
		want           []string // besides the file's path and "redeploy overcloud"
	}{
		{"a host listed twice in a group", "{index: \"2\", hostname: overcloud-novacompute-2}", "{index: \"2\", hostname: overcloud-novacompute-0}",
			[]string{"groups[0]", "members[1]", `"overcloud-novacompute-0" is also the host name of groups[0].members[0]`}},
		{"a host in two groups", "hostname: overcloud-controller-0", "hostname: overcloud-novacompute-2",
			[]string{"groups[1] (Controller", "members[0]", `"overcloud-novacompute-2" is also the host name of groups[0].members[1]`}},
		{"a host in two groups, in another case", "hostname: overcloud-controller-0", "hostname: Overcloud-NovaCompute-2",
			[]string{"groups[1]", `"Overcloud-NovaCompute-2" is also`}},
		{"an index that is a word", `{index: "2",`, `{index: "two",`, []string{"groups[0].members[1].index", `"two" is not a member index`}},
		{"a negative index", `{index: "2",`, `{index: "-2",`, []string{"members[1].index", `"-2" is not a member index`}},
		{"an index with a leading zero", `{index: "2",`, `{index: "02",`, []string{"members[1].index", `"02"`}},
		{"a decimal index", `{index: "2",`, `{index: 2.5,`, []string{"members[1].index", `"2.5"`}},
		{"an index that is a list", `{index: "2",`, `{index: [2],`, []string{"members[1].index", "is a list, not a single value"}},
		{"an index twice in a group", `{index: "2",`, `{index: "0",`, []string{"groups[0].members[1]", "index 0 is also members[0]'s"}},
		{"a removed entry that is no index", `removed: ["1"]`, `removed: ["x"]`, []string{"groups[0].removed[0]", `"x" is not a member index`}},
		{"a removed member that is a member", `- {index: "1", hostname: overcloud-novacompute-1}`, `- {index: "2", hostname: overcloud-novacompute-1}`,
			[]string{"removed_members[0]", "index 2 is also members[1]'s"}},
		{"no hostname", `{index: "0", hostname: overcloud-controller-0}`, `{index: "0"}`, []string{"groups[1].members[0]", "lacks hostname"}},
		{"an empty hostname", `hostname: overcloud-controller-0`, `hostname: ""`, []string{"groups[1].members[0].hostname", "the host name is empty"}},
		{"a null hostname", `hostname: overcloud-controller-0`, `hostname: null`, []string{"groups[1].members[0].hostname", "the host name is empty"}},
		{"a hostname with a colon", `hostname: overcloud-controller-0`, `hostname: "x:y"`, []string{"members[0].hostname", `"x:y" is not a host name`}},
		{"a hostname with a comma", `hostname: overcloud-controller-0`, `hostname: "a,b"`, []string{`"a,b" is not a host name`}},
		{"a hostname that is a wildcard", `hostname: overcloud-controller-0`, `hostname: "*"`, []string{`"*" is not a host name`}},
		{"a hostname with a space", `hostname: overcloud-controller-0`, `hostname: "a b"`, []string{`"a b" is not a host name`}},
		{"a hostname that excludes", `hostname: overcloud-controller-0`, `hostname: "!a"`, []string{`"!a" is not a host name`}},
		{"a hostname with a range", `hostname: overcloud-controller-0`, `hostname: "c[0:2]"`, []string{`"c[0:2]" is not a host name`}},
		{"a hostname that starts with a dash", `hostname: overcloud-controller-0`, `hostname: "-c"`, []string{`"-c" is not a host name`}},
		{"a hostname with an empty label", `hostname: overcloud-controller-0`, `hostname: "a..b"`, []string{`"a..b" is not a host name`}},
		{"a hostname that is a mapping", `hostname: overcloud-controller-0`, `hostname: {a: b}`, []string{"members[0].hostname", "is a mapping"}},
		{"no members", "    members:\n      - {index: \"0\", hostname: overcloud-controller-0}\n", "", []string{"groups[1]", "lacks members"}},
		{"no count parameter", "    count_parameter: ControllerCount\n", "", []string{"groups[1]", "lacks count_parameter"}},
		{"members that is a string", "    members:\n      - {index: \"0\", hostname: overcloud-controller-0}\n", "    members: some\n",
			[]string{"groups[1].members", "is a string, not a list"}},
		{"a resource twice", "resource: Controller", "resource: Compute", []string{"groups[1]", `resource "Compute" is also groups[0]'s`}},
		{"a count parameter of two groups", "count_parameter: ControllerCount", "count_parameter: ComputeCount",
			[]string{"groups[1]", `count_parameter "ComputeCount" is also the count_parameter of groups[0]`}},
		{"an empty role", "role: Controller", "role: ''", []string{"groups[1]", "resource and role must not be empty"}},
		{"a key twice", "    role: Controller\n", "    role: Controller\n    role: Other\n", []string{"groups[1]", `names "role" twice`}},
		{"another stack's file", "stack: overcloud", "stack: other", []string{`stack (line 1) is "other", not "overcloud"`}},
		{"groups that is a mapping", "groups:\n  - resource: Compute", "groups: {}\nx:\n  - resource: Compute", []string{"groups", "is a mapping, not a list"}},
		{"no end", "complete: true\n", "", []string{"does not end with complete: true", "cut off"}},
		{"an end that is not true", "complete: true\n", "complete: tru\n", []string{"does not end with complete: true"}},
		{"a list", validNodes, "- a\n- b\n", []string{"the file (line 1) is a list, not a mapping"}},
		{"an empty file", validNodes, "", []string{"it is empty"}},
		{"only a comment", validNodes, "# nothing\n", []string{"it is empty"}},
		{"not YAML", validNodes, "stack: [\n", []string{"it is not valid YAML"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if !strings.Contains(validNodes, c.old) {
				t.Fatalf("the case's old text %q is not in the file", c.old)
			}
			l := layoutWithNodes(t, strings.Replace(validNodes, c.old, c.new, 1))
			_, err := l.ReadNodes()
			if err == nil {
				t.Fatal("accepted")
			}
			t.Log(err)
			for _, w := range append([]string{l.Nodes(), "redeploy overcloud to rewrite it"}, c.want...) {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("the message lacks %q: %v", w, err)
				}
			}
		})
	}
}

// A nodes file cut off anywhere is refused: between two groups, between
// two members and in the middle of a value alike.
func TestReadNodesRefusesEveryCut(t *testing.T) {
	full := strings.TrimSuffix(validNodes, "\n")
	for i := 0; i < len(full); i++ {
		if _, err := parseNodes([]byte(full[:i]), "overcloud", true); err == nil {
			t.Errorf("cut at byte %d accepted:\n%s", i, full[:i])
		}
	}
	if _, err := parseNodes([]byte(full), "overcloud", true); err != nil {
		t.Errorf("the whole file without its last newline: %v", err)
	}
	// The file Save replaces may be an earlier version's, without the end.
	if n, err := parseNodes([]byte(strings.Replace(validNodes, "complete: true\n", "", 1)), "overcloud", false); err != nil || len(n.Groups) != 2 {
		t.Errorf("an earlier version's file, for the carry-over: %+v %v", n, err)
	}
}

// A YAML error never quotes the file: a value may be a secret.
func TestYAMLErrorsQuoteNothing(t *testing.T) {
	for _, in := range []string{"a: 's3cr3t\n", "a: \"s3cr3t\n", "a: *s3cr3t\n", "a: [s3cr3t\n", "a: {s3cr3t\n", "\ts3cr3t: x\n", "a: `s3cr3t`\n"} {
		_, err := parseDoc([]byte(in))
		if err == nil {
			continue
		}
		if strings.Contains(err.Error(), "s3cr3t") {
			t.Errorf("%q: %v", in, err)
		}
	}
	// What the parser expected is said.
	if _, err := parseDoc([]byte("a: {s3cr3t: x\n")); err == nil || !strings.Contains(err.Error(), "did not find expected ',' or '}'") {
		t.Errorf("a flow mapping left open: %v", err)
	}
}

// The nodes file, the scale-down environment and the inventory are read
// only if they are regular files: a FIFO never blocks, a device (or a
// symlink to one) is never read, a huge file is refused by its size.
func TestInputsAreBounded(t *testing.T) {
	l := nodesFixture(t)
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	within := func(name string, f func() error, want ...string) {
		t.Helper()
		done := make(chan error, 1)
		go func() { done <- f() }()
		select {
		case err := <-done:
			if err == nil {
				t.Errorf("%s: accepted", name)
				return
			}
			t.Logf("%s: %v", name, err)
			for _, w := range want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%s: the message lacks %q: %v", name, w, err)
				}
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: still reading after 10s", name)
		}
	}
	plan := func() error {
		_, err := l.PlanScaleDown([]string{"overcloud-novacompute-1"}, ScaleDownOptions{})
		return err
	}

	valid, err := os.ReadFile(l.Nodes())
	must(err)
	for _, c := range []struct {
		name string
		make func(p string) error
		want string
	}{
		{"a FIFO", func(p string) error { return syscall.Mkfifo(p, 0o600) }, "is a FIFO"},
		{"a symlink to /dev/zero", func(p string) error { return os.Symlink("/dev/zero", p) }, "is a symbolic link"},
		{"a directory", func(p string) error { return os.Mkdir(p, 0o700) }, "is a directory"},
		{"a 1 GiB file", func(p string) error {
			if err := os.WriteFile(p, nil, 0o600); err != nil {
				return err
			}
			return os.Truncate(p, 1<<30)
		}, "over the limit"},
	} {
		for _, f := range []struct {
			what, path string
		}{{"nodes file", l.Nodes()}, {"scale-down environment", l.ScaleDown()}, {"config-download inventory", l.Inventory()}} {
			orig, _ := os.ReadFile(f.path)
			must(os.RemoveAll(f.path))
			must(c.make(f.path))
			within(f.what+" that is "+c.name, plan, f.what, f.path, c.want)
			must(os.RemoveAll(f.path))
			if orig != nil {
				must(os.WriteFile(f.path, orig, 0o600))
			}
		}
	}
	if string(valid) == "" || plan() != nil {
		t.Fatalf("the fixture is not restored: %v", plan())
	}
}

func TestCheckHostname(t *testing.T) {
	for _, ok := range []string{"a", "overcloud-controller-0", "Overcloud-Controller-0", "node1.example.com", "0", "a-b-c",
		strings.Repeat("a", 63), strings.Repeat("a.", 126) + "a"} {
		if err := CheckHostname(ok); err != nil {
			t.Errorf("%q refused: %v", ok, err)
		}
	}
	for _, bad := range []string{"", " ", "a b", "x:y", "a,b", "*", "a*", "?", "!a", "&a", "a[0]", "~a", "@file", "-a", "a-", "a..b", ".a", "a.",
		"a_b", "a/b", "a\nb", "é", strings.Repeat("a", 64), strings.Repeat("a.", 127) + "a"} {
		if err := CheckHostname(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
