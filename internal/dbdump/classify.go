package dbdump

import "strings"

type stmtKind int

const (
	stmtOther stmtKind = iota
	stmtBegin
	stmtCommit
	stmtCreateTable
	stmtInsert
	stmtAttach
	stmtDelimiter
)

// classifyStatement recognises the statements a restore counts or refuses
// and, for INSERT/REPLACE, returns the (unquoted) table name. Leading
// whitespace and comments are skipped; with mysql set '#' starts a comment
// and conditional /*! comments are skipped as well.
func classifyStatement(stmt []byte, mysql bool) (stmtKind, string) {
	l := lexer{s: stmt, mysql: mysql}
	w := l.word()
	switch w {
	case "BEGIN":
		return stmtBegin, ""
	case "START":
		if l.word() == "TRANSACTION" {
			return stmtBegin, ""
		}
	case "COMMIT", "END":
		return stmtCommit, ""
	case "ATTACH":
		return stmtAttach, ""
	case "DELIMITER":
		return stmtDelimiter, ""
	case "CREATE":
		for {
			switch l.word() {
			case "TEMP", "TEMPORARY", "OR", "REPLACE":
				continue
			case "TABLE":
				return stmtCreateTable, ""
			}
			return stmtOther, ""
		}
	case "INSERT", "REPLACE":
		for {
			switch l.word() {
			case "OR", "REPLACE", "ROLLBACK", "ABORT", "FAIL", "IGNORE", "LOW_PRIORITY", "DELAYED", "HIGH_PRIORITY":
				continue
			case "INTO":
				name, ok := l.ident()
				if !ok {
					return stmtInsert, ""
				}
				// schema.table: keep the table part.
				if l.i < len(l.s) && l.s[l.i] == '.' {
					l.i++
					if n2, ok := l.ident(); ok {
						name = n2
					}
				}
				return stmtInsert, name
			}
			return stmtOther, ""
		}
	}
	return stmtOther, ""
}

type lexer struct {
	s     []byte
	i     int
	mysql bool
}

func (l *lexer) skipSpace() {
	for l.i < len(l.s) {
		c := l.s[l.i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f':
			l.i++
		case c == '-' && l.i+1 < len(l.s) && l.s[l.i+1] == '-':
			l.skipLine()
		case c == '#' && l.mysql:
			l.skipLine()
		case c == '/' && l.i+1 < len(l.s) && l.s[l.i+1] == '*':
			end := strings.Index(string(l.s[l.i+2:]), "*/")
			if end < 0 {
				l.i = len(l.s)
				return
			}
			l.i += 2 + end + 2
		default:
			return
		}
	}
}

func (l *lexer) skipLine() {
	for l.i < len(l.s) && l.s[l.i] != '\n' {
		l.i++
	}
}

// word returns the next bare word in upper case, or "" if the next token is
// not a bare word.
func (l *lexer) word() string {
	l.skipSpace()
	start := l.i
	for l.i < len(l.s) && isWordChar(l.s[l.i]) {
		l.i++
	}
	return strings.ToUpper(string(l.s[start:l.i]))
}

// ident returns the next identifier, unquoting "x", `x`, [x] and 'x'.
func (l *lexer) ident() (string, bool) {
	l.skipSpace()
	if l.i >= len(l.s) {
		return "", false
	}
	open := l.s[l.i]
	var close byte
	switch open {
	case '"', '`', '\'':
		close = open
	case '[':
		close = ']'
	default:
		w := l.i
		for l.i < len(l.s) && isWordChar(l.s[l.i]) {
			l.i++
		}
		return string(l.s[w:l.i]), l.i > w
	}
	var b strings.Builder
	for l.i++; l.i < len(l.s); l.i++ {
		c := l.s[l.i]
		if c == close {
			if close != ']' && l.i+1 < len(l.s) && l.s[l.i+1] == close {
				b.WriteByte(c)
				l.i++
				continue
			}
			l.i++
			return b.String(), true
		}
		b.WriteByte(c)
	}
	return "", false
}

func isWordChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '$' || c >= 0x80
}
