// Package dbdump dumps and restores Heat databases as SQL text.
//
// SQLite databases are dumped from one read snapshot in the format of the
// sqlite3 shell's .dump command, so `sqlite3 new.db < dump.sql` recreates
// them; RestoreSQLite loads such a file through the pure-Go driver.
//
// MySQL/MariaDB databases are dumped from one consistent InnoDB snapshot in a
// mysqldump-compatible format that the plain mysql client loads;
// RestoreMySQL loads such files and files written by
// `mysqldump --single-transaction`.
//
// MySQL dumps (mysqldump's, as python-tripleoclient writes them) also load
// into SQLite: ConvertMySQLDump turns one into SQLite SQL text with the
// schema Heat's models get on SQLite, RestoreMySQLDumpSQLite loads it, and
// MySQLDump.VerifySQLite / VerifyMySQL check every row of a load against
// the dump.
//
// Dumps stream to an io.Writer and restores stream from an io.Reader; callers
// add compression and atomic file handling.
package dbdump

import (
	"bufio"
	"io"
)

// Stats describes what a dump or restore processed.
type Stats struct {
	Tables     int              // tables dumped or created
	Rows       int64            // rows dumped or inserted, all tables
	TableRows  map[string]int64 // rows per table
	Bytes      int64            // bytes of SQL text written (dump) or read (restore)
	Statements int64            // statements executed (restore only)
}

func (s *Stats) addRows(table string, n int64) {
	if s.TableRows == nil {
		s.TableRows = make(map[string]int64)
	}
	s.TableRows[table] += n
	s.Rows += n
}

// Option adjusts a dump or restore.
type Option func(*options)

type options struct {
	overwrite         bool
	maxStatementBytes int
}

// DefaultMaxStatementBytes bounds the multi-row INSERT statements of MySQL
// dumps; it is well below the 16 MiB max_allowed_packet default of MariaDB
// and of the mysql client. A single row longer than this gets a statement of
// its own.
const DefaultMaxStatementBytes = 1 << 20

// WithOverwrite lets a restore replace an existing non-empty database.
func WithOverwrite() Option { return func(o *options) { o.overwrite = true } }

// WithMaxStatementBytes sets the size bound of multi-row INSERT statements in
// MySQL dumps (values below 1 KiB are raised to 1 KiB).
func WithMaxStatementBytes(n int) Option {
	return func(o *options) { o.maxStatementBytes = max(n, 1024) }
}

func buildOptions(opts []Option) options {
	o := options{maxStatementBytes: DefaultMaxStatementBytes}
	for _, f := range opts {
		f(&o)
	}
	return o
}

// countingWriter counts the bytes that reach the underlying writer.
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// countingReader counts the bytes read from the underlying reader.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

const ioBufferSize = 256 << 10

func newDumpWriter(w io.Writer) (*bufio.Writer, *countingWriter) {
	cw := &countingWriter{w: w}
	return bufio.NewWriterSize(cw, ioBufferSize), cw
}

const hexDigits = "0123456789abcdef"

func appendHex(buf, b []byte) []byte {
	for _, c := range b {
		buf = append(buf, hexDigits[c>>4], hexDigits[c&0x0f])
	}
	return buf
}
