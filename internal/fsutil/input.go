package fsutil

// The one bounded reader of the files a user gives as input (templates,
// environments, get_file targets, dumps and their sidecars, saved
// artifacts, module arguments): a regular file only, told by its type
// before it is opened, so a FIFO never blocks and a device never streams
// forever; and at most a given size, so an unbounded file cannot exhaust
// memory.

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// Limit bounds a file read with ReadInput: Bytes at most; Option names the
// parameter that raises it, for the message ("" when none does).
type Limit struct {
	Bytes  int64
	Option string
}

// TooLargeError is a file over its Limit.
type TooLargeError struct {
	What, Path string
	Size       int64 // 0 when unknown (the file said less than it held)
	Limit      Limit
}

func (e *TooLargeError) Error() string {
	raise := "it must be smaller"
	if e.Limit.Option != "" {
		raise = "shrink it, or raise " + e.Limit.Option
	}
	lim := fmt.Sprintf("the limit of %d bytes", e.Limit.Bytes)
	if e.Limit.Option != "" {
		lim = fmt.Sprintf("%s (%d bytes)", e.Limit.Option, e.Limit.Bytes)
	}
	return fmt.Sprintf("%s %s is %s, over %s: %s", e.What, e.Path, sizeText(e.Size, e.Limit.Bytes), lim, raise)
}

func sizeText(size, limit int64) string {
	if size > limit {
		return fmt.Sprintf("%d bytes", size)
	}
	return fmt.Sprintf("more than %d bytes", limit)
}

// NotRegularError is an input that is not a regular file.
type NotRegularError struct {
	What, Path string
	Mode       fs.FileMode
}

func (e *NotRegularError) Error() string {
	return fmt.Sprintf("%s %s is %s, not a regular file: give the path of a file", e.What, e.Path, ModeName(e.Mode))
}

// ModeName names the type of a file ("a FIFO (named pipe)", "a directory" ...).
func ModeName(m fs.FileMode) string {
	switch {
	case m.IsRegular():
		return "a regular file"
	case m.IsDir():
		return "a directory"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO (named pipe)"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	}
	return "an irregular file"
}

// OpenInput opens a file given as input for reading: it must be a regular
// file (symlinks to one are followed). Its type is checked before it is
// opened and again on the open file (opened non-blocking, so a FIFO
// swapped in meanwhile cannot block), so only a regular file is ever read.
// what names its role in errors ("template", "dump" ...).
func OpenInput(path, what string) (*os.File, fs.FileInfo, error) {
	return openInput(path, what, false)
}

// OpenOwn is OpenInput for a file inside a directory of ours (a working
// dir's, a heat_dir's): a symlink there is refused, never followed.
func OpenOwn(path, what string) (*os.File, fs.FileInfo, error) {
	return openInput(path, what, true)
}

func openInput(path, what string, noFollow bool) (*os.File, fs.FileInfo, error) {
	stat, flags := os.Stat, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY
	if noFollow {
		stat, flags = os.Lstat, flags|syscall.O_NOFOLLOW
	}
	st, err := stat(path)
	if err != nil {
		return nil, nil, fmt.Errorf("%s %s: %w", what, path, unwrapPath(err))
	}
	if !st.Mode().IsRegular() {
		return nil, nil, &NotRegularError{What: what, Path: path, Mode: st.Mode()}
	}
	f, err := os.OpenFile(path, flags, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("%s %s: %w", what, path, unwrapPath(err))
	}
	st, err = f.Stat()
	if err == nil && !st.Mode().IsRegular() {
		err = &NotRegularError{What: what, Path: path, Mode: st.Mode()}
	}
	if err == nil {
		// Reads of a regular file never block; clear the flag anyway.
		err = setBlocking(f)
	}
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, st, nil
}

// ReadInput reads a whole input file through OpenInput, refusing one larger
// than lim.Bytes (by its size, and by what a read returns: a file in /proc
// says 0 bytes).
func ReadInput(path string, lim Limit, what string) ([]byte, error) {
	f, st, err := OpenInput(path, what)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readBounded(f, st, path, lim, what)
}

// ReadOwn is ReadInput through OpenOwn: a file of a directory of ours,
// never read through a symlink. A missing file's error wraps
// fs.ErrNotExist.
func ReadOwn(path string, lim Limit, what string) ([]byte, error) {
	f, st, err := OpenOwn(path, what)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readBounded(f, st, path, lim, what)
}

func readBounded(f *os.File, st fs.FileInfo, path string, lim Limit, what string) ([]byte, error) {
	if lim.Bytes > 0 && st.Size() > lim.Bytes {
		return nil, &TooLargeError{What: what, Path: path, Size: st.Size(), Limit: lim}
	}
	max := lim.Bytes
	if max <= 0 {
		max = 1<<63 - 2
	}
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s %s: %w", what, path, unwrapPath(err))
	}
	if int64(len(data)) > max {
		// The file said it was smaller (a file of /proc): its size is unknown.
		return nil, &TooLargeError{What: what, Path: path, Limit: lim}
	}
	return data, nil
}

// unwrapPath drops an *os.PathError's repetition of the path.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

func setBlocking(f *os.File) error {
	raw, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	if err := raw.Control(func(fd uintptr) { serr = syscall.SetNonblock(int(fd), false) }); err != nil {
		return err
	}
	return serr
}

// HashInput returns the sha256 (hex) and the size of an input file, opened
// as OpenInput opens it (a regular file only, told before it is opened).
func HashInput(path, what string) (string, int64, error) { return hashFile(path, what, false) }

// HashOwn is HashInput for a file of ours, never through a symlink
// (OpenOwn).
func HashOwn(path, what string) (string, int64, error) { return hashFile(path, what, true) }

func hashFile(path, what string, noFollow bool) (string, int64, error) {
	f, _, err := openInput(path, what, noFollow)
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return "", 0, fmt.Errorf("reading %s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), n, nil
}
