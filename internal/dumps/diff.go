package dumps

import (
	"context"
	"os"
	"sort"
	"strings"

	"github.com/ephemeral-heat/ephemeral-heat/internal/heatdb"
)

// Database states in a Snapshot.
const (
	DataPresent = "present" // the database holds data
	DataAbsent  = "absent"  // it holds none: wiped, never created, or its account dropped
)

// NotWrittenYet stands for the sha256 of a dump check mode would write.
const NotWrittenYet = "(not written: check mode)"

// NoChecksum stands for the sha256 of a dump without a .sha256 file.
const NoChecksum = "(no checksum file)"

// Snapshot is what heat_db_dump's diff shows before and after a dump or a
// restore: the database heat.conf names (without credentials) and whether
// it holds data; for a dump, the dumps in the dump directory with the
// sha256 each one's .sha256 records; for a restore, what the database
// holds (the sha256 of its SQL content, as the manifests record it, when
// known; its top-level stacks) and, after, the dump it holds the content
// of and the dump that saved what it held before.
type Snapshot struct {
	Database string
	Data     string
	Dumps    map[string]string
	Content  string
	Stacks   []string
	// RestoredFrom and RestoredSHA256: the dump loaded, its file's sha256.
	RestoredFrom, RestoredSHA256 string
	// Backup is the dump of what the database held before a restore.
	Backup string
}

// Map is the snapshot as the diff's before or after, the empty fields
// left out.
func (s *Snapshot) Map() map[string]any {
	if s == nil {
		return nil
	}
	m := map[string]any{"database": s.Database, "database_state": s.Data}
	if s.Dumps != nil {
		dumps := map[string]any{}
		for p, sum := range s.Dumps {
			dumps[p] = sum
		}
		m["dumps"] = dumps
	}
	if s.Stacks != nil {
		m["stacks"] = append([]string{}, s.Stacks...)
	}
	for k, v := range map[string]string{"content_sha256": s.Content, "restored_from": s.RestoredFrom,
		"restored_sha256": s.RestoredSHA256, "backup": s.Backup} {
		if v != "" {
			m[k] = v
		}
	}
	return m
}

// stackNames are stacks as a diff shows them, "NAME (STATUS)", sorted;
// empty, not nil, so that a database without stacks shows so.
func stackNames(stacks []Stack) []string {
	out := make([]string, 0, len(stacks))
	for _, s := range stacks {
		out = append(out, s.Name+" ("+s.Status+")")
	}
	sort.Strings(out)
	return out
}

// recordedSum is the sha256 a dump's .sha256 records, without hashing the
// dump (NoChecksum when there is none).
func recordedSum(path string) string {
	b, err := readSidecar(path+SumSuffix, "dump checksum")
	if f := strings.Fields(string(b)); err == nil && len(f) > 0 {
		return f[0]
	}
	return NoChecksum
}

// dumpSums maps the dumps in dir (List), and each of extra that is a
// regular file, to their recorded sha256.
func dumpSums(dir string, extra ...string) map[string]string {
	out := map[string]string{}
	all, _ := List(dir)
	for _, p := range extra {
		if st, err := os.Lstat(p); p != "" && err == nil && st.Mode().IsRegular() {
			all = append(all, p)
		}
	}
	for _, p := range all {
		out[p] = recordedSum(p)
	}
	return out
}

// predictDump is the snapshot after the dump o would write to path (check
// mode): the new dump, an existing dest moved aside, the older dumps
// rotation would remove, the database wiped if asked.
func predictDump(o DumpOptions, before Snapshot, dir, path string) Snapshot {
	after := before
	after.Dumps = map[string]string{}
	for p, sum := range before.Dumps {
		after.Dumps[p] = sum
	}
	if o.Dest != "" {
		if aside, found := asideName(o.Dest); found {
			after.Dumps[aside] = after.Dumps[o.Dest]
		}
	} else if all, err := List(dir); err == nil {
		for _, p := range beyondKeep(append([]string{path}, all...), o.Keep) {
			delete(after.Dumps, p)
		}
	}
	after.Dumps[path] = NotWrittenYet
	if o.Wipe {
		after.Data = DataAbsent
	}
	return after
}

// unchangedSince returns the newest dump (or the dump at dest) and its
// manifest when it holds exactly what the database holds now, as a dump
// would find it (check mode: the content's hash, no file written); "" and
// nil otherwise.
func unchangedSince(ctx context.Context, t heatdb.DB, dest, dir string) (string, *Manifest) {
	prev := []string{dest}
	if dest == "" {
		prev, _ = List(dir)
	}
	if len(prev) == 0 {
		return "", nil
	}
	m, _ := ReadManifest(prev[0])
	if m == nil {
		return "", nil
	}
	if _, err := VerifyChecksum(prev[0]); err != nil {
		return "", nil
	}
	if cur, err := ContentHash(ctx, t); err != nil || cur != m.SQLSHA256 {
		return "", nil
	}
	return prev[0], m
}

// restoreBefore is the snapshot of the database a restore replaces
// (exists: it holds data; content: its content's sha256 when known).
func restoreBefore(ctx context.Context, t heatdb.DB, exists bool, content string) Snapshot {
	s := Snapshot{Database: t.String(), Data: DataAbsent}
	if !exists {
		return s
	}
	s.Data, s.Content = DataPresent, content
	if stacks, err := heatdb.ListStacks(ctx, t); err == nil {
		s.Stacks = stackNames(stacks)
	}
	return s
}

// restoreAfter is the snapshot of the database once it holds r's dump
// (content: the dump's content sha256 when its manifest records it).
func restoreAfter(t heatdb.DB, r Result, content string) Snapshot {
	return Snapshot{Database: t.String(), Data: DataPresent, Content: content, Stacks: stackNames(r.Stacks),
		RestoredFrom: r.Path, RestoredSHA256: r.SHA256, Backup: r.Backup}
}

// predictRestore is the snapshot before and after the restore of r's dump
// check mode reports: a database holding data would first be saved to a
// new dump.
func predictRestore(t heatdb.DB, r Result, before Snapshot, content string) (*Snapshot, *Snapshot) {
	after := restoreAfter(t, r, content)
	if before.Data == DataPresent {
		after.Backup = NotWrittenYet
	}
	return &before, &after
}
