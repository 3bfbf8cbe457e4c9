package workdir

import (
	"archive/tar"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/dsnet/compress/bzip2"

	"github.com/ephemeral-heat/ephemeral-heat/internal/dumps"
	"github.com/ephemeral-heat/ephemeral-heat/internal/fsutil"
	"github.com/ephemeral-heat/ephemeral-heat/internal/heatdir"
)

// ArchiveResult says what an archive holds.
type ArchiveResult struct {
	Path    string
	Entries int
	Bytes   int64
	// Left are the entries left out: dumps, earlier archives, the live
	// database and what is not a regular file or directory.
	Left []string
}

// excluded reports whether the archive leaves rel (slash-separated, relative
// to the working dir) out, and why.
func (l Layout) excluded(rel string, d fs.DirEntry) string {
	base := d.Name()
	switch {
	case strings.HasSuffix(base, ".bzip2"):
		// tripleoclient's tar_filter: earlier archives and its own dumps.
		return "archive or tripleoclient dump"
	case strings.HasPrefix(rel, HeatLauncherDir+"/") && (strings.HasPrefix(base, dumps.Prefix) || strings.HasPrefix(base, dumps.TripleOPrefix)):
		return "database dump"
	case rel == HeatLauncherDir+"/"+heatdir.SQLiteFile || strings.HasPrefix(rel, HeatLauncherDir+"/"+heatdir.SQLiteFile+"-"):
		return "live database"
	case rel == HeatLauncherDir+"/"+heatdir.MariaDBDir:
		return "live database"
	case rel == HeatLauncherDir+"/"+heatdir.LockFile || rel == LockFile:
		return "lock"
	case !d.IsDir() && !d.Type().IsRegular():
		return "not a regular file"
	}
	return ""
}

// Walk visits what the working dir holds (not the directory itself) by
// path relative to it, slash-separated: visit gets each entry that exclude
// keeps ("" from exclude), and an excluded directory is not entered. It
// returns what exclude left out, as "REL (WHY)".
func (l Layout) Walk(exclude func(rel string, d fs.DirEntry) string, visit func(rel, path string, d fs.DirEntry) error) ([]string, error) {
	left := []string{}
	err := filepath.WalkDir(l.Dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == l.Dir {
			return nil
		}
		rel, _ := filepath.Rel(l.Dir, p)
		rel = filepath.ToSlash(rel)
		if why := exclude(rel, d); why != "" {
			left = append(left, rel+" ("+why+")")
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		return visit(rel, p, d)
	})
	return left, err
}

// WriteArchive writes <stack>-install-<UTC time>.tar.bzip2 in the working
// dir, as tripleoclient's utils.archive_deploy_artifacts does at the end of
// every deploy: the working dir, its paths relative to it, without earlier
// archives (tripleoclient leaves out every *.bzip2, which holds its Heat
// dumps too) and without our database dumps and live database. The file is
// written unnamed, then linked in under the first name from now's second
// on that no archive has yet (an earlier archive is never replaced, however
// many are written in one second), mode 0600 (it holds the passwords).
func (l Layout) WriteArchive(now time.Time) (*ArchiveResult, error) {
	res := &ArchiveResult{Left: []string{}}
	type entry struct {
		rel  string
		path string
		info fs.FileInfo
	}
	var entries []entry
	left, err := l.Walk(l.excluded, func(rel, p string, d fs.DirEntry) error {
		info, err := d.Info()
		if err != nil {
			return err
		}
		entries = append(entries, entry{rel, p, info})
		return nil
	})
	res.Left = left
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", l.Dir, err)
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].rel < entries[j].rel })
	pend, err := fsutil.NewPending(l.Dir, filepath.Base(l.Archive(now)), fsutil.SecretFileMode)
	if err != nil {
		return nil, fmt.Errorf("writing the deploy archive: %w", err)
	}
	defer pend.Discard()
	err = func(w io.Writer) error {
		bz, err := bzip2.NewWriter(w, &bzip2.WriterConfig{Level: bzip2.DefaultCompression})
		if err != nil {
			return err
		}
		tw := tar.NewWriter(bz)
		for _, e := range entries {
			hdr, err := tar.FileInfoHeader(e.info, "")
			if err != nil {
				return err
			}
			hdr.Name = e.rel
			if e.info.IsDir() {
				hdr.Name += "/"
			}
			hdr.Uname, hdr.Gname = "", ""
			if err := tw.WriteHeader(hdr); err != nil {
				return err
			}
			if e.info.Mode().IsRegular() {
				f, _, err := fsutil.OpenOwn(e.path, "file to archive")
				if err != nil {
					return err
				}
				n, err := io.CopyN(tw, f, e.info.Size())
				f.Close()
				if err != nil {
					return fmt.Errorf("archiving %s: %w", e.rel, err)
				}
				res.Bytes += n
			}
			res.Entries++
		}
		if err := tw.Close(); err != nil {
			return err
		}
		return bz.Close()
	}(pend.File())
	if err != nil {
		return nil, fsutil.DiskFull(fmt.Errorf("writing the deploy archive: %w", err), l.Dir, 0)
	}
	res.Path, err = pend.PublishFirstFree(func(i int) string { return l.Archive(now.Add(time.Duration(i) * time.Second)) }, 3600)
	if err != nil {
		return nil, fmt.Errorf("writing the deploy archive: %w", err)
	}
	return res, nil
}
