package dbdump

import (
	"errors"
	"fmt"
	"io"
	"strings"
)

// sqliteSplitter cuts SQLite SQL text into complete statements with the rules
// of sqlite3_complete(): a ';' ends a statement unless it is inside a string,
// quoted identifier or comment, or inside the body of CREATE TRIGGER (which
// ends at "END;").
type sqliteSplitter struct {
	splitReader
}

func newSQLiteSplitter(r io.Reader) *sqliteSplitter {
	return &sqliteSplitter{newSplitReader(r)}
}

// Tokens and states of sqlite3_complete's state machine.
const (
	tkSemi = iota
	tkWS
	tkOther
	tkExplain
	tkCreate
	tkTemp
	tkTrigger
	tkEnd
)

var sqliteCompleteTrans = [8][8]uint8{
	/* 0 INVALID */ {1, 0, 2, 3, 4, 2, 2, 2},
	/* 1 START   */ {1, 1, 2, 3, 4, 2, 2, 2},
	/* 2 NORMAL  */ {1, 2, 2, 2, 2, 2, 2, 2},
	/* 3 EXPLAIN */ {1, 3, 3, 2, 4, 2, 2, 2},
	/* 4 CREATE  */ {1, 4, 2, 2, 2, 4, 5, 2},
	/* 5 TRIGGER */ {6, 5, 5, 5, 5, 5, 5, 5},
	/* 6 SEMI    */ {6, 6, 5, 5, 5, 5, 5, 7},
	/* 7 END     */ {1, 7, 5, 5, 5, 5, 5, 5},
}

var errIncomplete = errors.New("incomplete SQL statement at end of input")

// Next returns the next statement including its terminating ';' and any
// comments before it, and the line it starts on. The slice is valid until
// the next call. Statements that hold nothing but comments and ';' are
// skipped. At the end of input it returns io.EOF, or an error wrapping
// errIncomplete when text other than whitespace and comments is left.
func (s *sqliteSplitter) Next() ([]byte, int, error) {
	s.buf = s.buf[:0]
	state := uint8(0)
	content := false
	startLine := s.line
	for {
		c, err := s.r.ReadByte()
		if err == io.EOF {
			if content {
				return nil, startLine, fmt.Errorf("line %d: %w", startLine, errIncomplete)
			}
			return nil, startLine, io.EOF
		}
		if err != nil {
			return nil, startLine, fmt.Errorf("read SQL: %w", err)
		}
		s.buf = append(s.buf, c)
		tok := tkOther
		switch {
		case c == ';':
			tok = tkSemi
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f':
			tok = tkWS
			if c == '\n' {
				s.line++
			}
		case c == '/':
			if next, _ := s.r.Peek(1); len(next) == 1 && next[0] == '*' {
				if err := s.skipBlockComment(); err != nil {
					return nil, startLine, fmt.Errorf("line %d: %w", startLine, err)
				}
				tok = tkWS
			}
		case c == '-':
			if next, _ := s.r.Peek(1); len(next) == 1 && next[0] == '-' {
				if err := s.readThrough('\n'); err != nil && err != io.EOF {
					return nil, startLine, err
				}
				tok = tkWS
			}
		case c == '[':
			if err := s.readThrough(']'); err != nil {
				return nil, startLine, fmt.Errorf("line %d: unterminated [identifier: %w", startLine, err)
			}
		case c == '\'' || c == '"' || c == '`':
			if err := s.readThrough(c); err != nil {
				return nil, startLine, fmt.Errorf("line %d: unterminated %c-quoted text: %w", startLine, c, err)
			}
		case sqliteIDChar(c):
			tok = s.readWord()
		}
		if tok != tkWS && tok != tkSemi {
			content = true
		} else if !content {
			startLine = s.line // report the line where the statement text begins
		}
		state = sqliteCompleteTrans[state][tok]
		if tok == tkSemi && state == 1 {
			if !content {
				// Only comments and ';': nothing to run.
				s.buf = s.buf[:0]
				state = 0
				startLine = s.line
				continue
			}
			return s.buf, startLine, nil
		}
	}
}

func sqliteIDChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '$' || c >= 0x80
}

// readWord reads the rest of an identifier or keyword whose first byte is
// the last byte of s.buf and classifies it.
func (s *sqliteSplitter) readWord() int {
	start := len(s.buf) - 1
	for {
		c, err := s.r.ReadByte()
		if err != nil {
			break
		}
		if !sqliteIDChar(c) {
			_ = s.r.UnreadByte() // cannot fail right after ReadByte
			break
		}
		s.buf = append(s.buf, c)
	}
	w := s.buf[start:]
	if len(w) > 9 {
		return tkOther
	}
	var up [9]byte
	for i, c := range w {
		if c >= 'a' && c <= 'z' {
			c -= 'a' - 'A'
		}
		up[i] = c
	}
	switch string(up[:len(w)]) {
	case "CREATE":
		return tkCreate
	case "TEMP", "TEMPORARY":
		return tkTemp
	case "TRIGGER":
		return tkTrigger
	case "END":
		return tkEnd
	case "EXPLAIN":
		return tkExplain
	}
	return tkOther
}

// readThrough appends bytes up to and including delim
// (splitReader.readThrough); read errors other than io.EOF are wrapped.
func (s *sqliteSplitter) readThrough(delim byte) error {
	err := s.splitReader.readThrough(delim)
	if err != nil && err != io.EOF {
		return fmt.Errorf("read SQL: %w", err)
	}
	return err
}

// skipBlockComment appends a /* ... */ comment whose '/' is already in buf.
func (s *sqliteSplitter) skipBlockComment() error {
	c, _ := s.r.ReadByte() // the '*' seen by Peek
	s.buf = append(s.buf, c)
	open := len(s.buf) // first byte after "/*"
	for {
		if err := s.readThrough('/'); err != nil {
			return fmt.Errorf("unterminated /* comment: %w", err)
		}
		if k := len(s.buf) - 1; k-1 >= open && s.buf[k-1] == '*' {
			return nil
		}
	}
}

// sqliteComplete reports whether sql ends with a complete statement, like
// sqlite3_complete().
func sqliteComplete(sql string) bool {
	sp := newSQLiteSplitter(strings.NewReader(sql))
	complete := false
	for {
		_, _, err := sp.Next()
		if err == io.EOF {
			return complete
		}
		if err != nil {
			return false
		}
		complete = true
	}
}
