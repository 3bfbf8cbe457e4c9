// Package tripleocommon is the differential test of config_download: it
// runs tripleo-common's own config download and inventory code (stable/
// wallaby from ../shared/reference, or stable/zed: ZedSource; through
// harness.py) against a Heat stack, beside ours on the same stack, and compares the two trees
// (compare.py: file set, YAML/JSON values), their inventories
// (ansible-inventory --list) and their playbooks (ansible-playbook
// --syntax-check and --list-tasks with tripleo-ansible on the role and
// plugin paths). Every difference must be explained by Allowed.
//
// multistack.go does the same for the inventory of several stacks
// (TripleoInventories, harness.py --merge-stacks) against overcloud_workdir's
// merge_inventory.
//
// parity_test.go runs it on the sample overcloud (wallaby, and zed when a
// stable/zed tree is found); tests/realtht on the
// real tripleo-heat-templates stack; internal/bench times both renders.
package tripleocommon

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"reflect"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"time"

	"github.com/ephemeral-heat/ephemeral-heat/internal/configdownload"
	"github.com/ephemeral-heat/ephemeral-heat/internal/heatapi"
	"gopkg.in/yaml.v3"
)

// The reference trees and the environment variables that override them
// (a directory or a .tar.gz each).
const (
	EnvTripleoCommon      = "EPHEMERAL_HEAT_TRIPLEO_COMMON"
	EnvTripleoAnsible     = "EPHEMERAL_HEAT_TRIPLEO_ANSIBLE"
	TripleoCommonTarball  = "tripleo-common-stable-wallaby.tar.gz"
	TripleoAnsibleTarball = "tripleo-ansible-stable-wallaby.tar.gz"
	// Python runs the harness: Debian's interpreter, which has the
	// python3-* packages tripleo-common imports.
	Python = "/usr/bin/python3"
)

// Files that identify the root of each tree.
const (
	commonMarker  = "tripleo_common/utils/config.py"
	ansibleMarker = "tripleo_ansible/ansible_plugins/strategy/tripleo_free.py"
)

// Dir is this package's directory (harness.py and compare.py).
func Dir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Dir(file)
}

// RepoRoot is the repository root (two levels above this package).
func RepoRoot() string { return filepath.Clean(filepath.Join(Dir(), "..", "..")) }

// Source returns the tree named by env, else ../shared/reference/tarball.
func Source(env, tarball string) string {
	if v := os.Getenv(env); v != "" {
		return v
	}
	return filepath.Join(RepoRoot(), "..", "shared", "reference", tarball)
}

// Tree is an extracted reference tree.
type Tree struct {
	Root string // holds the marker file
	// Release is a tripleo-common tree's release (empty: wallaby); RunParity
	// renders ours with it and harness.py takes its code path.
	Release configdownload.Release
}

// release is t's release, wallaby when unset.
func (t Tree) release() configdownload.Release {
	if t.Release == "" {
		return configdownload.Wallaby
	}
	return t.Release
}

// ExtractTripleoCommon makes tripleo-common's tree available under dir.
func ExtractTripleoCommon(dir string) (Tree, error) {
	return ExtractTripleoCommonFrom(Source(EnvTripleoCommon, TripleoCommonTarball), dir)
}

// ExtractTripleoCommonFrom makes the tripleo-common tree src (a directory
// or .tar.gz) available under dir.
func ExtractTripleoCommonFrom(src, dir string) (Tree, error) {
	return extract(src, dir, commonMarker, EnvTripleoCommon, "tripleo_common/")
}

// ExtractTripleoAnsible makes tripleo-ansible's tree available under dir.
func ExtractTripleoAnsible(dir string) (Tree, error) {
	return extract(Source(EnvTripleoAnsible, TripleoAnsibleTarball), dir, ansibleMarker, EnvTripleoAnsible, "tripleo_ansible/")
}

// extract returns the root of src (a directory holding marker, or a
// .tar.gz extracted under dir: only the paths under the subtree keep).
func extract(src, dir, marker, env, keep string) (Tree, error) {
	hint := fmt.Sprintf("set %s to a directory or .tar.gz of the tree (default: its tarball in ../shared/reference, see its README.md)", env)
	st, err := os.Stat(src)
	if err != nil {
		return Tree{}, fmt.Errorf("%s is missing (%v): %s", src, err, hint)
	}
	if st.IsDir() {
		root, err := findRoot(src, marker)
		if err != nil {
			return Tree{}, fmt.Errorf("%s: %w; %s", src, err, hint)
		}
		return Tree{Root: root}, nil
	}
	f, err := os.Open(src)
	if err != nil {
		return Tree{}, err
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		return Tree{}, fmt.Errorf("%s is not a .tar.gz: %w; %s", src, err, hint)
	}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return Tree{}, fmt.Errorf("reading %s: %w", src, err)
		}
		name := path.Clean(h.Name)
		if strings.HasPrefix(name, "../") || path.IsAbs(name) || !strings.Contains(name+"/", "/"+keep) && !strings.HasPrefix(name+"/", keep) {
			continue
		}
		p := filepath.Join(dir, filepath.FromSlash(name))
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(p, 0o755); err != nil {
				return Tree{}, err
			}
		case tar.TypeReg:
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				return Tree{}, err
			}
			out, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, fs.FileMode(h.Mode)&0o755|0o600)
			if err != nil {
				return Tree{}, err
			}
			_, err = io.Copy(out, tr)
			out.Close()
			if err != nil {
				return Tree{}, err
			}
		}
	}
	root, err := findRoot(dir, marker)
	if err != nil {
		return Tree{}, fmt.Errorf("%s: %w; %s", src, err, hint)
	}
	return Tree{Root: root}, nil
}

func findRoot(dir, marker string) (string, error) {
	if _, err := os.Stat(filepath.Join(dir, marker)); err == nil {
		return dir, nil
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if e.IsDir() {
			if _, err := os.Stat(filepath.Join(dir, e.Name(), marker)); err == nil {
				return filepath.Join(dir, e.Name()), nil
			}
		}
	}
	return "", fmt.Errorf("no %s in it or one level below", marker)
}

// RequirePython fails unless Debian's python3 can import what the harness
// needs; the error says which packages to install.
func RequirePython() error {
	const mods = "import heatclient, git, yaml, jinja2, pbr, eventlet, openstack, keystoneauth1"
	out, err := exec.Command(Python, "-c", mods).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s cannot import tripleo-common's dependencies (%v: %s): apt-get install -y python3-heatclient "+
			"python3-git python3-yaml python3-jinja2 python3-pbr python3-eventlet python3-openstacksdk (or make deps)",
			Python, err, strings.TrimSpace(string(out)))
	}
	return nil
}

// Result is what tripleo-common's run reported.
type Result struct {
	DownloadSeconds  float64  `json:"download_seconds"`
	InventorySeconds float64  `json:"inventory_seconds"`
	Warnings         []string `json:"warnings"`
	// Wall is the whole python3 process (interpreter start and imports
	// included).
	Wall time.Duration `json:"-"`
}

// RunReference runs tripleo-common's config download and inventory for
// stack into dest (harness.py).
func RunReference(ctx context.Context, tc Tree, endpoint, stack, dest, sshNetwork, sshUser string) (Result, error) {
	return runHarness(ctx, "config download", "--tripleo-common", tc.Root, "--release", string(tc.release()),
		"--endpoint", endpoint, "--stack", stack, "--dest", dest, "--ssh-network", sshNetwork, "--ssh-user", sshUser)
}

// runHarness runs harness.py with args and reads the one JSON line it
// prints; what names tripleo-common's step in the error.
func runHarness(ctx context.Context, what string, args ...string) (Result, error) {
	var r Result
	cmd := exec.CommandContext(ctx, Python, append([]string{filepath.Join(Dir(), "harness.py")}, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	r.Wall = time.Since(start)
	if err != nil {
		return r, fmt.Errorf("tripleo-common's %s failed: %v\n%s", what, err, tail(stderr.String(), 40))
	}
	if err := json.Unmarshal(stdout.Bytes(), &r); err != nil {
		return r, fmt.Errorf("harness.py printed %q: %w", stdout.String(), err)
	}
	return r, nil
}

// FileDiff is a file whose values differ.
type FileDiff struct {
	Path   string `json:"path"`
	Detail string `json:"detail"`
}

// Report is compare.py's answer.
type Report struct {
	OnlyOurs     []string   `json:"only_ours"`
	OnlyTheirs   []string   `json:"only_theirs"`
	ValueDiffers []FileDiff `json:"value_differs"`
	BytesDiffer  []string   `json:"bytes_differ"`
}

// Compare compares our tree with tripleo-common's (compare.py).
func Compare(ctx context.Context, ours, theirs string) (Report, error) {
	var r Report
	out, err := exec.CommandContext(ctx, Python, filepath.Join(Dir(), "compare.py"), ours, theirs).Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return r, fmt.Errorf("compare.py: %v\n%s", err, ee.Stderr)
		}
		return r, err
	}
	return r, json.Unmarshal(out, &r)
}

// Difference kinds.
const (
	OnlyOurs   = "only in ours"
	OnlyTheirs = "only in tripleo-common's"
	Value      = "value differs"
	Bytes      = "bytes differ"
	Inventory  = "inventory differs"
)

// Allowance explains one expected difference.
type Allowance struct {
	Kind string // one of the kinds above
	Path string // a path.Match pattern (a file, or a JSON path for Inventory); "**" matches all
	Why  string
}

// Allowed are the differences between our rendering and tripleo-common's
// that the differential test accepts, each with its reason. Everything
// else fails it. They hold for stable/wallaby and stable/zed alike: zed's
// run needs no entry of its own. (The .git directories are not compared at all: commit
// ids, authors, dates and messages differ by design.)
var Allowed = []Allowance{
	// deployments.yaml is TripleO's task file that applies one software
	// deployment through heat-agents' hook runner. Ours is our own
	// implementation of the same protocol (the same variables, files under
	// /var/lib/heat-config, runner and notify file), not a copy of
	// tripleo-common's tasks; its behaviour is tested by applying a
	// deployment on this host (tests/integration, make demo).
	{Value, "deployments.yaml", "our own implementation of the deployment protocol"},
	// The marker config_download writes in its dest (pathguard.Marker):
	// the next run replaces only a directory that carries it.
	{OnlyOurs, ".ephemeral-heat", "the marker that dest is a config-download of this collection"},
	// Bytes: YAML we dump with other quoting, indentation and line
	// folding than PyYAML; compare.py has read both to equal values.
	{Bytes, "**", "YAML written in another style, equal values"},
}

// Problems lists the differences of r that Allowed does not explain. The
// deployment files (<Role>/<server>/<deployment>) must be byte for byte
// identical: Ansible renders their text again on the node.
func (r Report) Problems(deploymentFiles map[string]bool) []string {
	var p []string
	check := func(kind, pth, detail string) {
		if kind == Bytes && deploymentFiles[pth] {
			p = append(p, fmt.Sprintf("%s: %s (a deployment file must be identical)", kind, pth))
			return
		}
		if !allowed(kind, pth) {
			p = append(p, strings.TrimSuffix(fmt.Sprintf("%s: %s: %s", kind, pth, detail), ": "))
		}
	}
	for _, x := range r.OnlyOurs {
		check(OnlyOurs, x, "")
	}
	for _, x := range r.OnlyTheirs {
		check(OnlyTheirs, x, "")
	}
	for _, x := range r.ValueDiffers {
		check(Value, x.Path, x.Detail)
	}
	for _, x := range r.BytesDiffer {
		check(Bytes, x, "")
	}
	return p
}

func allowed(kind, pth string) bool {
	for _, a := range Allowed {
		if a.Kind != kind {
			continue
		}
		if ok, _ := path.Match(a.Path, pth); ok || a.Path == "**" {
			return true
		}
	}
	return false
}

// AnsibleEnv is the environment for ansible-inventory and ansible-playbook
// on a config-download tree: an empty ansible.cfg (written in tmp), tripleo-
// ansible's roles and plugins on the paths when ta is given, no color, no
// retry files, and tmp as the local temporary directory.
func AnsibleEnv(ta *Tree, tmp string) ([]string, error) {
	cfg := filepath.Join(tmp, "ansible.cfg")
	if err := os.WriteFile(cfg, []byte("[defaults]\n"), 0o600); err != nil {
		return nil, err
	}
	env := append(os.Environ(), "ANSIBLE_NOCOLOR=1", "ANSIBLE_FORCE_COLOR=0", "ANSIBLE_RETRY_FILES_ENABLED=0",
		"ANSIBLE_LOCAL_TEMP="+tmp, "ANSIBLE_CONFIG="+cfg, "ANSIBLE_DEPRECATION_WARNINGS=0")
	if ta != nil {
		p := filepath.Join(ta.Root, "tripleo_ansible")
		pl := filepath.Join(p, "ansible_plugins")
		env = append(env,
			// stubroles: roles THT imports from projects Debian does
			// not package (stubroles/README.md), after tripleo-ansible's.
			"ANSIBLE_ROLES_PATH="+filepath.Join(p, "roles.galaxy")+":"+filepath.Join(p, "roles")+":"+filepath.Join(Dir(), "stubroles"),
			// stubmodules: modules tripleo-ansible needs from elsewhere
			// that Debian does not package (see each file).
			"ANSIBLE_LIBRARY="+filepath.Join(p, "roles.galaxy", "config_template", "library")+":"+filepath.Join(pl, "modules")+
				":"+filepath.Join(Dir(), "stubmodules"),
			"ANSIBLE_ACTION_PLUGINS="+filepath.Join(p, "roles.galaxy", "config_template", "action")+":"+filepath.Join(pl, "action"),
			"ANSIBLE_FILTER_PLUGINS="+filepath.Join(pl, "filter"),
			"ANSIBLE_STRATEGY_PLUGINS="+filepath.Join(pl, "strategy"),
			"ANSIBLE_CALLBACK_PLUGINS="+filepath.Join(pl, "callback"),
			"ANSIBLE_MODULE_UTILS="+filepath.Join(pl, "module_utils"))
	}
	return env, nil
}

// InventoryList is `ansible-inventory -i DIR/tripleo-ansible-inventory.yaml
// --list` (group_vars/ and host_vars/ beside it included).
func InventoryList(ctx context.Context, env []string, dir string) (any, error) {
	cmd := exec.CommandContext(ctx, "ansible-inventory", "-i", filepath.Join(dir, "tripleo-ansible-inventory.yaml"), "--list")
	cmd.Env, cmd.Dir = env, dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("ansible-inventory --list in %s: %v\n%s", dir, err, stderr.String())
	}
	var v any
	if err := json.Unmarshal(out, &v); err != nil {
		return nil, fmt.Errorf("ansible-inventory --list in %s: %w", dir, err)
	}
	return normalizeInventory(v), nil
}

// normalizeInventory sorts the lists of group children and hosts (their
// order follows the file's group order, which tripleo-common leaves to
// Python's set order).
func normalizeInventory(v any) any {
	top, ok := v.(map[string]any)
	if !ok {
		return v
	}
	for _, g := range top {
		if gm, ok := g.(map[string]any); ok {
			for _, k := range []string{"children", "hosts"} {
				if l, ok := gm[k].([]any); ok {
					sort.Slice(l, func(i, j int) bool { return fmt.Sprint(l[i]) < fmt.Sprint(l[j]) })
				}
			}
		}
	}
	return top
}

// DiffJSON lists where two JSON values differ (at most limit lines).
func DiffJSON(a, b any, limit int) []string {
	var out []string
	var walk func(a, b any, where string)
	walk = func(a, b any, where string) {
		if len(out) >= limit {
			return
		}
		am, aok := a.(map[string]any)
		bm, bok := b.(map[string]any)
		if aok && bok {
			keys := map[string]bool{}
			for k := range am {
				keys[k] = true
			}
			for k := range bm {
				keys[k] = true
			}
			var ks []string
			for k := range keys {
				ks = append(ks, k)
			}
			sort.Strings(ks)
			for _, k := range ks {
				p := k
				if where != "" {
					p = where + "." + k
				}
				av, ain := am[k]
				bv, bin := bm[k]
				switch {
				case !ain:
					out = append(out, fmt.Sprintf("%s: missing in ours (theirs %s)", p, short(bv)))
				case !bin:
					out = append(out, fmt.Sprintf("%s: not in theirs (ours %s)", p, short(av)))
				default:
					walk(av, bv, p)
				}
			}
			return
		}
		al, aok := a.([]any)
		bl, bok := b.([]any)
		if aok && bok && len(al) == len(bl) {
			for i := range al {
				walk(al[i], bl[i], fmt.Sprintf("%s[%d]", where, i))
			}
			return
		}
		if !reflect.DeepEqual(a, b) {
			out = append(out, fmt.Sprintf("%s: ours %s != theirs %s", where, short(a), short(b)))
		}
	}
	walk(a, b, "")
	return out
}

func short(v any) string {
	b, _ := json.Marshal(v)
	if len(b) > 200 {
		return string(b[:200]) + "..."
	}
	return string(b)
}

// Playbooks lists the top-level files of a config-download tree that are
// playbooks, sorted: a YAML list whose every item is a play (a mapping with
// hosts or import_playbook). A task list (external_post_deploy_tasks and
// the like) is not one, whatever its tasks' arguments contain.
func Playbooks(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var books []string
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".yaml") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		if isPlaybook(b) {
			books = append(books, e.Name())
		}
	}
	sort.Strings(books)
	return books, nil
}

// isPlaybook reports whether b is a YAML list of plays.
func isPlaybook(b []byte) bool {
	var items []map[string]any
	if yaml.Unmarshal(b, &items) != nil || len(items) == 0 {
		return false
	}
	for _, it := range items {
		_, hosts := it["hosts"]
		_, imp := it["import_playbook"]
		_, fq := it["ansible.builtin.import_playbook"]
		if !hosts && !imp && !fq {
			return false
		}
	}
	return true
}

// ListTasks runs ansible-playbook --list-tasks on playbooks of dir (one
// run) with its inventory, and returns the plays and tasks listed, dir
// replaced by <config-download> and the tags of each line sorted.
func ListTasks(ctx context.Context, env []string, dir string, books []string) (string, error) {
	return playbookCmd(ctx, env, dir, books, "--list-tasks")
}

// SyntaxCheck runs ansible-playbook --syntax-check on playbooks of dir (one
// run).
func SyntaxCheck(ctx context.Context, env []string, dir string, books []string) error {
	_, err := playbookCmd(ctx, env, dir, books, "--syntax-check")
	return err
}

// missingRole finds the role ansible-playbook could not resolve.
var missingRole = regexp.MustCompile(`the role '([^']+)' was not found`)

func playbookCmd(ctx context.Context, env []string, dir string, books []string, flag string) (string, error) {
	cmd := exec.CommandContext(ctx, "ansible-playbook", append([]string{"-i", "tripleo-ansible-inventory.yaml", flag}, books...)...)
	cmd.Env, cmd.Dir = env, dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		hint := ""
		if m := missingRole.FindStringSubmatch(string(out)); m != nil {
			hint = fmt.Sprintf("\n(role %s is neither tripleo-ansible's nor a stand-in: if a project Debian does not package provides it, "+
				"add a stand-in to tests/tripleocommon/stubroles, see its README.md)", m[1])
		}
		return string(out), fmt.Errorf("ansible-playbook %s %s in %s: %v\n%s%s", flag, strings.Join(books, " "), dir, err, tail(string(out), 40), hint)
	}
	// The plays and tasks are indented; warnings (wrapped at 79 columns,
	// so their lines depend on dir's length) are not.
	var keep []string
	for _, l := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(l, " ") || strings.HasPrefix(l, "\t") || strings.HasPrefix(l, "playbook: ") {
			keep = append(keep, sortTags(strings.ReplaceAll(l, dir, "<config-download>")))
		}
	}
	return strings.Join(keep, "\n"), nil
}

// sortTags sorts the tags of a --list-tasks line (ansible-playbook prints
// a play's tags in set order).
func sortTags(l string) string {
	i := strings.Index(l, "TAGS: [")
	if i < 0 || !strings.HasSuffix(l, "]") {
		return l
	}
	tags := strings.Split(l[i+len("TAGS: ["):len(l)-1], ",")
	for j := range tags {
		tags[j] = strings.TrimSpace(tags[j])
	}
	sort.Strings(tags)
	return l[:i] + "TAGS: [" + strings.Join(tags, ", ") + "]"
}

// firstDifference shows where two texts first differ, with context.
func firstDifference(a, b string) string {
	la, lb := strings.Split(a, "\n"), strings.Split(b, "\n")
	i := 0
	for i < len(la) && i < len(lb) && la[i] == lb[i] {
		i++
	}
	from := i - 3
	if from < 0 {
		from = 0
	}
	part := func(l []string) string {
		to := i + 4
		if to > len(l) {
			to = len(l)
		}
		if from >= to {
			return "(end)"
		}
		return strings.Join(l[from:to], "\n")
	}
	return fmt.Sprintf("at line %d; ours:\n%s\ntripleo-common's:\n%s", i+1, part(la), part(lb))
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// Parity is one run of the differential test on a stack.
type Parity struct {
	// Ours and Theirs are the two config-download trees.
	Ours, Theirs string
	// OursTime is our whole run (Heat API calls and writing the tree);
	// TheirsTime tripleo-common's download plus inventory (imports
	// excluded), TheirsWall its whole python3 process.
	OursTime, TheirsTime, TheirsWall time.Duration
	// Problems are the differences Allowed does not explain.
	Problems []string
	// Playbooks are those syntax-checked and compared by --list-tasks.
	Playbooks []string
	// Lookup is how ours found the TripleODeployment resources
	// (configdownload.LookupStacks or LookupListing; "" without any).
	Lookup string
}

// DeploymentFiles lists the <Role>/<server>/<deployment> files of a tree.
func DeploymentFiles(dir string) (map[string]bool, error) {
	files := map[string]bool{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() && rel == ".git" {
			return filepath.SkipDir
		}
		parts := strings.Split(rel, "/")
		if !d.IsDir() && len(parts) == 3 && parts[0] != "group_vars" && parts[0] != "host_vars" && parts[0] != "templates" {
			files[rel] = true
		}
		return nil
	})
	return files, err
}

// CompareTrees compares two rendered trees (files, values, inventories,
// playbooks) and returns the unexplained differences and the playbooks
// checked. ta puts tripleo-ansible on the paths of ansible-playbook.
func CompareTrees(ctx context.Context, ours, theirs string, ta *Tree, tmp string) ([]string, []string, error) {
	rep, err := Compare(ctx, ours, theirs)
	if err != nil {
		return nil, nil, err
	}
	deps, err := DeploymentFiles(ours)
	if err != nil {
		return nil, nil, err
	}
	problems := rep.Problems(deps)

	env, err := AnsibleEnv(ta, tmp)
	if err != nil {
		return nil, nil, err
	}
	invOurs, err := InventoryList(ctx, env, ours)
	if err != nil {
		return nil, nil, err
	}
	invTheirs, err := InventoryList(ctx, env, theirs)
	if err != nil {
		return nil, nil, err
	}
	for _, d := range DiffJSON(invOurs, invTheirs, 20) {
		if !allowed(Inventory, strings.SplitN(d, ":", 2)[0]) {
			problems = append(problems, Inventory+": "+d)
		}
	}

	books, err := Playbooks(ours)
	if err != nil {
		return nil, nil, err
	}
	theirBooks, err := Playbooks(theirs)
	if err != nil {
		return nil, nil, err
	}
	if !reflect.DeepEqual(books, theirBooks) {
		problems = append(problems, fmt.Sprintf("playbooks: ours %v, tripleo-common's %v", books, theirBooks))
	}
	if len(books) > 0 {
		if err := SyntaxCheck(ctx, env, ours, books); err != nil {
			problems = append(problems, err.Error())
		} else if lo, err := ListTasks(ctx, env, ours, books); err != nil {
			problems = append(problems, err.Error())
		} else if lt, err := ListTasks(ctx, env, theirs, books); err != nil {
			problems = append(problems, "tripleo-common's render: "+err.Error())
		} else if lo != lt {
			problems = append(problems, "--list-tasks differs "+firstDifference(lo, lt))
		}
	}
	return problems, books, nil
}

// RunParity renders stack with our config_download (in process, the
// module's code, tripleo_release tc's release) and with tripleo-common into workDir/ours/STACK and
// workDir/tripleo-common/STACK, and compares them. Warnings of both runs
// are returned for the log.
func RunParity(ctx context.Context, c *heatapi.Client, stack, workDir string, tc Tree, ta *Tree) (*Parity, []string, error) {
	p := &Parity{Ours: filepath.Join(workDir, "ours", stack), Theirs: filepath.Join(workDir, "tripleo-common", stack)}
	start := time.Now()
	out, err := configdownload.Run(ctx, c, configdownload.RunOptions{Stack: stack, Dest: p.Ours, Commit: true,
		Release: tc.release()})
	p.OursTime = time.Since(start)
	p.Lookup = out.DeploymentLookup
	if err != nil {
		return p, out.Warnings, fmt.Errorf("our config download: %w", err)
	}
	warnings := append([]string(nil), out.Warnings...)
	res, err := RunReference(ctx, tc, c.Endpoint(), stack, p.Theirs, configdownload.DefaultSSHNetwork, configdownload.DefaultSSHUser)
	p.TheirsTime = time.Duration((res.DownloadSeconds + res.InventorySeconds) * float64(time.Second))
	p.TheirsWall = res.Wall
	for _, w := range res.Warnings {
		warnings = append(warnings, "tripleo-common: "+w)
	}
	if err != nil {
		return p, warnings, err
	}
	tmp := filepath.Join(workDir, "ansible-tmp")
	if err := os.MkdirAll(tmp, 0o700); err != nil {
		return p, warnings, err
	}
	p.Problems, p.Playbooks, err = CompareTrees(ctx, p.Ours, p.Theirs, ta, tmp)
	if os.Getenv("EPHEMERAL_HEAT_KEEP_PARITY") != "" {
		keep := filepath.Join(os.Getenv("EPHEMERAL_HEAT_KEEP_PARITY"), stack)
		os.RemoveAll(keep)
		if err := os.MkdirAll(keep, 0o700); err == nil {
			exec.Command("cp", "-a", p.Ours, filepath.Join(keep, "ours")).Run()
			exec.Command("cp", "-a", p.Theirs, filepath.Join(keep, "theirs")).Run()
		}
	}
	return p, warnings, err
}
