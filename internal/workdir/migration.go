package workdir

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/ephemeral-heat/ephemeral-heat/internal/fsutil"
	"github.com/ephemeral-heat/ephemeral-heat/internal/pathguard"
)

// Migration is the record a migrate from an installed Heat leaves in the
// working dir (Layout.Migration), written last: its presence says the
// working dir holds everything the migrate wrote.
type Migration struct {
	Format int `json:"format"`
	// Stack and StackID are the installed Heat's stack.
	Stack   string `json:"stack"`
	StackID string `json:"stack_id"`
	// Heat is where the installed Heat was (its orchestration endpoint);
	// Database its database, password left out.
	Heat     string `json:"heat"`
	Database string `json:"database"`
	// Dump is the first dump written (a file of the heat_dir).
	Dump string `json:"dump"`
	// Skipped are, per node group (its resource), the member indices the
	// installed stack's removal policies skipped.
	Skipped map[string][]string `json:"skipped"`
	Time    time.Time           `json:"time"`
}

// migrationFormat is the version of the record's format.
const migrationFormat = 1

// Migration is <stack>-migration.json: the record of a migrate from an
// installed Heat (ours).
func (l Layout) Migration() string { return l.path(l.Stack + "-migration.json") }

// ReadMigration reads the migrate record; nil when there is none.
func (l Layout) ReadMigration() (*Migration, error) {
	b, err := readFile(l.Migration(), "migrate record")
	if isNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var m Migration
	if err := json.Unmarshal(b, &m); err != nil || m.Format != migrationFormat || m.StackID == "" {
		return nil, fmt.Errorf("migrate record %s is not one a migrate wrote (format %d, with the stack's id): "+
			"the working dir was not left by a complete migrate; give a new work_dir", l.Migration(), migrationFormat)
	}
	return &m, nil
}

// WriteMigration writes the migrate record (mode 0600, atomically).
func (l Layout) WriteMigration(m Migration) error {
	m.Format = migrationFormat
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	if err := fsutil.WriteFileAtomic(l.Migration(), append(b, '\n'), fsutil.SecretFileMode); err != nil {
		return fmt.Errorf("writing the migrate record: %w", err)
	}
	return nil
}

// Fresh checks that the working dir can receive a migrate: it does not
// exist, or it holds nothing but what taking its lock leaves (the marker
// and workdir.lock). Anything else is refused, naming what is there.
func (l Layout) Fresh() error {
	if err := l.Guard(); err != nil {
		return err
	}
	f, err := os.Open(l.Dir)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("work_dir %s: %w", l.Dir, err)
	}
	defer f.Close()
	var found []string
	for {
		names, err := f.Readdirnames(64)
		for _, n := range names {
			if n == pathguard.Marker || n == LockFile || strings.HasPrefix(n, "."+pathguard.Marker+".tmp-") {
				continue
			}
			found = append(found, n)
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("work_dir %s: %w", l.Dir, err)
		}
	}
	if len(found) == 0 {
		return nil
	}
	sort.Strings(found)
	if len(found) > 5 {
		found = append(found[:5], fmt.Sprintf("and %d more", len(found)-5))
	}
	return fmt.Errorf("work_dir %s is not empty (it holds %s): a migrate writes a new working dir; give a work_dir that does not exist "+
		"or is empty (nothing was changed)", l.Dir, strings.Join(found, ", "))
}

// migrateHeader opens the scale-down environment a migrate writes.
const migrateHeader = `# The members of stack %s that the installed Heat's ResourceGroups skipped (their
# removal_policies), recorded by ephemeral.heat.migrate as a scale-down records removed nodes:
# for each node group, its count and the indices of its removed members, so that the first
# ephemeral deploy gives every node the index and name it had. Later scale-downs add to it.
`

// SkippedEnvironment is the scale-down environment (Layout.ScaleDown) that
// keeps the members nodes' groups skipped on an installed Heat skipped in
// every later deploy, as a scale-down writes it: per group with a removed
// member, its count (the members it has) and its removal policies
// [{resource_list: [removed indices]}], under the parameters the template
// passes to the group. Content is nil when no group skipped a member.
// Groups that skipped members but do not take count and removal_policies
// from parameters cannot be recorded: they are returned in unrecorded.
func SkippedEnvironment(stack string, nodes *Nodes) (content []byte, skipped map[string][]string, unrecorded []string) {
	skipped = map[string][]string{}
	defaults := map[string]any{}
	for _, g := range nodes.Groups {
		if len(g.Removed) == 0 {
			continue
		}
		if g.CountParameter == "" || g.RemovalPoliciesParameter == "" {
			unrecorded = append(unrecorded, g.Resource)
			continue
		}
		idx := append([]string{}, g.Removed...)
		defaults[g.RemovalPoliciesParameter] = removalPolicies(idx)
		skipped[g.Resource] = idx
		defaults[g.CountParameter] = len(g.Members)
	}
	if len(defaults) == 0 {
		return nil, skipped, unrecorded
	}
	doc := map[string]any{"parameter_defaults": defaults}
	return append([]byte(fmt.Sprintf(migrateHeader, stack)), yamlOf(doc)...), skipped, unrecorded
}

// WriteFiles writes files of the working dir (path to content, mode 0600,
// atomically) that differ from what is there, making the working dir and
// the directories the layout names (outputs/, environment/) first; it
// returns the paths written (in check mode, those it would write).
func (l Layout) WriteFiles(files map[string][]byte, check bool) ([]string, error) {
	for p := range files {
		if !strings.HasPrefix(p, l.Dir+string(os.PathSeparator)) {
			return nil, fmt.Errorf("%s is not a file of work_dir %s", p, l.Dir)
		}
	}
	return l.writeChanged(files, check, "writing", l.path(OutputsDir), l.path(EnvironmentDir))
}
