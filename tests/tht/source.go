package tht

import (
	"archive/tar"
	"bufio"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// The reference trees and the environment variables that override them.
const (
	EnvTHT           = "EPHEMERAL_HEAT_THT"
	EnvTripleoCommon = "EPHEMERAL_HEAT_TRIPLEO_COMMON"
	// EnvCache overrides where rendered trees are cached (default: the
	// user's cache directory, ephemeral-heat/tht).
	EnvCache = "EPHEMERAL_HEAT_THT_CACHE"

	THTTarball           = "tripleo-heat-templates-stable-wallaby.tar.gz"
	TripleoCommonTarball = "tripleo-common-stable-wallaby.tar.gz"
)

// Files that identify a source tree (its root is the directory holding them).
const (
	thtMarker    = "tools/process-templates.py"
	commonMarker = "container-images/tripleo_containers.yaml.j2"
)

// RepoRoot is the root of this repository: the directory holding its go.mod,
// found from the working directory upwards, else from this source file.
func RepoRoot() (string, error) {
	var starts []string
	if wd, err := os.Getwd(); err == nil {
		starts = append(starts, wd)
	}
	if _, file, _, ok := runtime.Caller(0); ok {
		starts = append(starts, filepath.Dir(file))
	}
	for _, d := range starts {
		for {
			if b, err := os.ReadFile(filepath.Join(d, "go.mod")); err == nil &&
				strings.Contains(string(b), "module github.com/ephemeral-heat/ephemeral-heat\n") {
				return d, nil
			}
			p := filepath.Dir(d)
			if p == d {
				break
			}
			d = p
		}
	}
	return "", fmt.Errorf("the ephemeral-heat repository root (its go.mod) was not found above the working directory")
}

// ReferenceDir is ../shared/reference relative to the repository root.
func ReferenceDir() (string, error) {
	root, err := RepoRoot()
	if err != nil {
		return "", err
	}
	return filepath.Clean(filepath.Join(root, "..", "shared", "reference")), nil
}

// DefaultTHT is the THT source used when none is given: $EPHEMERAL_HEAT_THT,
// else the stable/wallaby tarball in ../shared/reference.
func DefaultTHT() (string, error) { return defaultSource(EnvTHT, THTTarball) }

// DefaultTripleoCommon is the tripleo-common source used when none is given:
// $EPHEMERAL_HEAT_TRIPLEO_COMMON, else the stable/wallaby tarball in
// ../shared/reference.
func DefaultTripleoCommon() (string, error) {
	return defaultSource(EnvTripleoCommon, TripleoCommonTarball)
}

func defaultSource(env, tarball string) (string, error) {
	if v := os.Getenv(env); v != "" {
		return v, nil
	}
	ref, err := ReferenceDir()
	if err != nil {
		return "", fmt.Errorf("no %s given and %w", env, err)
	}
	return filepath.Join(ref, tarball), nil
}

// source is a tree given as a directory or a .tar.gz.
type source struct {
	what   string // "tripleo-heat-templates" or "tripleo-common", for messages
	path   string // absolute
	tarbal bool
	key    string // sha256 of the tarball, or of the directory's paths and contents
}

// openSource checks a source path and computes its content key.
func openSource(what, path, env, marker string) (*source, error) {
	hint := fmt.Sprintf("set %s to a %s directory or .tar.gz (see ../shared/reference/README.md)", env, what)
	if path == "" {
		return nil, fmt.Errorf("no %s source given: %s", what, hint)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("%s source %s: %w", what, path, err)
	}
	st, err := os.Stat(abs)
	if err != nil {
		return nil, fmt.Errorf("%s source %s is missing (%v): %s", what, abs, err, hint)
	}
	s := &source{what: what, path: abs}
	if st.IsDir() {
		if _, err := findRoot(abs, marker); err != nil {
			return nil, fmt.Errorf("%s source %s: %w; %s", what, abs, err, hint)
		}
		s.key, err = hashDir(abs)
	} else {
		if !strings.HasSuffix(abs, ".tar.gz") && !strings.HasSuffix(abs, ".tgz") {
			return nil, fmt.Errorf("%s source %s is neither a directory nor a .tar.gz: %s", what, abs, hint)
		}
		s.tarbal = true
		s.key, err = hashFile(abs)
	}
	if err != nil {
		return nil, fmt.Errorf("%s source %s: %w", what, abs, err)
	}
	return s, nil
}

// findRoot returns dir if it holds marker, else its only subdirectory that
// does (a `git archive --prefix` tarball has one top directory).
func findRoot(dir, marker string) (string, error) {
	if _, err := os.Stat(filepath.Join(dir, marker)); err == nil {
		return dir, nil
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return "", err
	}
	var found []string
	for _, e := range ents {
		if e.IsDir() {
			if _, err := os.Stat(filepath.Join(dir, e.Name(), marker)); err == nil {
				found = append(found, filepath.Join(dir, e.Name()))
			}
		}
	}
	if len(found) != 1 {
		return "", fmt.Errorf("no %s in it nor in exactly one of its subdirectories", marker)
	}
	return found[0], nil
}

// tree returns the root of the source's files, extracting a tarball into
// tmp first (tmp is then owned by the caller).
func (s *source) tree(tmp, marker string) (string, error) {
	dir := s.path
	if s.tarbal {
		dir = filepath.Join(tmp, "src")
		if err := extractTarGz(s.path, dir); err != nil {
			return "", fmt.Errorf("extracting %s: %w", s.path, err)
		}
	}
	root, err := findRoot(dir, marker)
	if err != nil {
		return "", fmt.Errorf("%s source %s: %w", s.what, s.path, err)
	}
	return root, nil
}

func hashFile(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, bufio.NewReaderSize(f, 1<<20)); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// hashDir hashes every path under dir (lexical order), its kind, and the
// content of files (the target of symlinks).
func hashDir(dir string) (string, error) {
	h := sha256.New()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			t, err := os.Readlink(p)
			if err != nil {
				return err
			}
			fmt.Fprintf(h, "l %q %q\n", rel, t)
		case d.IsDir():
			fmt.Fprintf(h, "d %q\n", rel)
		case d.Type().IsRegular():
			f, err := os.Open(p)
			if err != nil {
				return err
			}
			fh := sha256.New()
			_, err = io.Copy(fh, f)
			f.Close()
			if err != nil {
				return err
			}
			fmt.Fprintf(h, "f %q %x\n", rel, fh.Sum(nil))
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// extractTarGz extracts regular files, directories and symlinks; entries
// that would land outside dest are refused.
func extractTarGz(archive, dest string) error {
	f, err := os.Open(archive)
	if err != nil {
		return err
	}
	defer f.Close()
	gz, err := gzip.NewReader(bufio.NewReaderSize(f, 1<<20))
	if err != nil {
		return err
	}
	defer gz.Close()
	tr := tar.NewReader(gz)
	if err := os.MkdirAll(dest, 0o755); err != nil {
		return err
	}
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		name := filepath.Clean(hdr.Name)
		if filepath.IsAbs(name) || name == ".." || strings.HasPrefix(name, "../") {
			return fmt.Errorf("entry %q leaves the extraction directory", hdr.Name)
		}
		target := filepath.Join(dest, name)
		switch hdr.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(target, 0o755); err != nil {
				return err
			}
		case tar.TypeReg:
			if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
				return err
			}
			mode := os.FileMode(0o644)
			if hdr.Mode&0o111 != 0 {
				mode = 0o755
			}
			out, err := os.OpenFile(target, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, mode)
			if err != nil {
				return err
			}
			_, err = io.Copy(out, tr)
			if cerr := out.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return err
			}
		case tar.TypeSymlink:
			t := filepath.Clean(filepath.Join(filepath.Dir(name), hdr.Linkname))
			if filepath.IsAbs(hdr.Linkname) || t == ".." || strings.HasPrefix(t, "../") {
				return fmt.Errorf("symlink %q -> %q leaves the extraction directory", hdr.Name, hdr.Linkname)
			}
			if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
				return err
			}
			if err := os.Symlink(hdr.Linkname, target); err != nil {
				return err
			}
		case tar.TypeXGlobalHeader, tar.TypeXHeader:
		default:
			return fmt.Errorf("entry %q: unsupported type %q", hdr.Name, hdr.Typeflag)
		}
	}
}
