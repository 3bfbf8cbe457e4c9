package dbdump

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
)

// mysqlSplitter cuts MySQL SQL text (mysqldump output) into statements on
// ';'. It understands '...' and "..." strings with backslash escapes and
// doubled quotes, `identifiers`, and comments: "-- " and "#" line comments
// and /* */ block comments are dropped, while executable comments /*! */,
// /*M! */ and optimizer hints /*+ */ are kept (the server runs them) and a
// ';' inside them does not end the statement. DELIMITER is not supported;
// the restore detects it.
type mysqlSplitter struct {
	splitReader
}

func newMySQLSplitter(r io.Reader) *mysqlSplitter {
	return &mysqlSplitter{newSplitReader(r)}
}

// Next returns the next non-empty statement without its ';' and the line it
// starts on; the slice is valid until the next call. A final statement
// without ';' is returned too. At the end it returns io.EOF.
func (s *mysqlSplitter) Next() ([]byte, int, error) {
	s.buf = s.buf[:0]
	inExec := false  // inside /*! ... */
	content := false // buf holds more than whitespace
	startLine := s.line
	execLine := 0
	for {
		c, err := s.r.ReadByte()
		if err == io.EOF {
			if inExec {
				return nil, startLine, fmt.Errorf("line %d: unterminated /*! comment", execLine)
			}
			if len(bytes.TrimSpace(s.buf)) > 0 {
				return bytes.TrimSpace(s.buf), startLine, nil
			}
			return nil, startLine, io.EOF
		}
		if err != nil {
			return nil, startLine, fmt.Errorf("read SQL: %w", err)
		}
		switch c {
		case '\n':
			s.line++
			s.buf = append(s.buf, c)
			if !content {
				startLine = s.line // report the line where the statement text begins
			}
		case ' ', '\t', '\r', '\f':
			s.buf = append(s.buf, c)
		case '\'', '"':
			content = true
			s.buf = append(s.buf, c)
			if err := s.readString(c); err != nil {
				return nil, startLine, fmt.Errorf("line %d: unterminated %c-quoted string: %w", startLine, c, err)
			}
		case '`':
			content = true
			s.buf = append(s.buf, c)
			if err := s.readThrough('`'); err != nil {
				return nil, startLine, fmt.Errorf("line %d: unterminated `identifier: %w", startLine, err)
			}
		case '#':
			if err := s.skipLine(); err != nil {
				return nil, startLine, err
			}
			if !content {
				startLine = s.line
			}
		case '-':
			// "--" starts a comment only when followed by whitespace, a
			// control character or the end of input.
			p, _ := s.r.Peek(2)
			if len(p) >= 1 && p[0] == '-' && (len(p) == 1 || p[1] <= ' ') {
				if err := s.skipLine(); err != nil {
					return nil, startLine, err
				}
				if !content {
					startLine = s.line
				}
			} else {
				content = true
				s.buf = append(s.buf, c)
			}
		case '/':
			p, _ := s.r.Peek(3)
			switch {
			case len(p) >= 2 && p[0] == '*' && (p[1] == '!' || p[1] == '+'):
				if inExec {
					return nil, startLine, fmt.Errorf("line %d: nested executable comment", s.line)
				}
				content = true
				s.buf = append(s.buf, '/', '*', p[1])
				_, _ = s.r.Discard(2)
				inExec, execLine = true, s.line
			case len(p) >= 3 && p[0] == '*' && p[1] == 'M' && p[2] == '!':
				if inExec {
					return nil, startLine, fmt.Errorf("line %d: nested executable comment", s.line)
				}
				content = true
				s.buf = append(s.buf, "/*M!"...)
				_, _ = s.r.Discard(3)
				inExec, execLine = true, s.line
			case len(p) >= 1 && p[0] == '*':
				_, _ = s.r.Discard(1)
				if err := s.skipBlockComment(); err != nil {
					return nil, startLine, err
				}
				s.buf = append(s.buf, ' ')
				if !content {
					startLine = s.line
				}
			default:
				content = true
				s.buf = append(s.buf, c)
			}
		case '*':
			content = true
			s.buf = append(s.buf, c)
			if inExec {
				if p, _ := s.r.Peek(1); len(p) == 1 && p[0] == '/' {
					_, _ = s.r.Discard(1)
					s.buf = append(s.buf, '/')
					inExec = false
				}
			}
		case ';':
			if inExec {
				s.buf = append(s.buf, c)
				continue
			}
			stmt := bytes.TrimSpace(s.buf)
			if len(stmt) == 0 {
				s.buf = s.buf[:0]
				startLine = s.line
				content = false
				continue
			}
			return stmt, startLine, nil
		default:
			content = true
			s.buf = append(s.buf, c)
		}
	}
}

// readString appends a quoted string whose opening quote is already in buf.
// Backslash escapes the next byte; a doubled quote is read as the end of one
// string and the start of the next, which splits identically.
func (s *mysqlSplitter) readString(q byte) error {
	for {
		chunk, err := s.r.Peek(s.r.Buffered())
		if len(chunk) == 0 {
			if _, err = s.r.Peek(1); err != nil {
				return err
			}
			continue
		}
		i := indexQuoteOrBackslash(chunk, q)
		if i < 0 {
			s.buf = append(s.buf, chunk...)
			s.line += bytes.Count(chunk, []byte{'\n'})
			_, _ = s.r.Discard(len(chunk))
			continue
		}
		s.buf = append(s.buf, chunk[:i+1]...)
		s.line += bytes.Count(chunk[:i], []byte{'\n'})
		_, _ = s.r.Discard(i + 1)
		if chunk[i] == q {
			return nil
		}
		// Backslash: take the escaped byte verbatim.
		c, err := s.r.ReadByte()
		if err != nil {
			return err
		}
		if c == '\n' {
			s.line++
		}
		s.buf = append(s.buf, c)
	}
}

func indexQuoteOrBackslash(b []byte, q byte) int {
	i := bytes.IndexByte(b, q)
	j := bytes.IndexByte(b, '\\')
	if i < 0 || (j >= 0 && j < i) {
		return j
	}
	return i
}

// skipLine drops a line comment but keeps its newline as a separator.
func (s *mysqlSplitter) skipLine() error {
	for {
		_, err := s.r.ReadSlice('\n')
		switch err {
		case nil:
			s.line++
			s.buf = append(s.buf, '\n')
			return nil
		case bufio.ErrBufferFull:
			continue
		case io.EOF:
			return nil
		default:
			return fmt.Errorf("read SQL: %w", err)
		}
	}
}

// skipBlockComment drops a /* comment whose "/*" has been consumed.
func (s *mysqlSplitter) skipBlockComment() error {
	start := s.line
	prevStar := false
	for {
		c, err := s.r.ReadByte()
		if err != nil {
			return fmt.Errorf("line %d: unterminated /* comment", start)
		}
		switch c {
		case '\n':
			s.line++
		case '/':
			if prevStar {
				return nil
			}
		}
		prevStar = c == '*'
	}
}
