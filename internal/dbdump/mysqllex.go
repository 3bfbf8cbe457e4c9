package dbdump

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
)

// myTokKind is the kind of a token of a MySQL statement.
type myTokKind uint8

const (
	myEOF    myTokKind = iota
	myWord             // bare word (keyword, function or unquoted identifier), as written
	myIdent            // `quoted identifier`, unquoted
	myString           // '...' or "..." string (text holds the decoded bytes)
	myNumber           // unsigned numeric literal, as written
	myHex              // 0x... or X'...' (text holds the decoded bytes)
	myBits             // b'...' or 0b... (text holds the binary digits)
	myPunct            // one byte of punctuation: ( ) , ; = . + - * / etc.
	myCond             // executable comment /*!NNNNN body */, /*M!NNNNNN body */ or hint /*+ body */
)

// myTok is one token; for myCond, text is the body and ver the version number
// (0 when none is given), mariaOnly marks /*M! and hint marks /*+.
type myTok struct {
	kind      myTokKind
	text      []byte
	pos       int
	ver       int
	mariaOnly bool
	hint      bool
}

func (t myTok) is(word string) bool {
	return t.kind == myWord && strings.EqualFold(string(t.text), word)
}

func (t myTok) isPunct(c byte) bool {
	return t.kind == myPunct && len(t.text) == 1 && t.text[0] == c
}

func (t myTok) String() string {
	switch t.kind {
	case myEOF:
		return "end of statement"
	case myIdent:
		return "`" + string(t.text) + "`"
	case myString:
		return "'" + abbreviate(t.text) + "'"
	case myCond:
		return "/*!" + abbreviate(t.text) + "*/"
	}
	return string(t.text)
}

// myLexer reads the tokens of one statement as mysqlSplitter returns it:
// ordinary comments are gone, executable comments are kept (and returned
// as one myCond token each). Strings are decoded with MySQL's escapes
// (no NO_BACKSLASH_ESCAPES, no ANSI_QUOTES, as mysqldump writes them).
type myLexer struct {
	s   []byte
	i   int
	tok myTok // peeked token
	has bool
	err error
}

func newMyLexer(s []byte) *myLexer { return &myLexer{s: s} }

func (l *myLexer) peek() myTok {
	if !l.has {
		l.tok = l.scan()
		l.has = true
	}
	return l.tok
}

func (l *myLexer) next() myTok {
	t := l.peek()
	l.has = false
	return t
}

// nextSkipCond returns the next token that is not an executable comment.
func (l *myLexer) nextSkipCond() myTok {
	for {
		t := l.next()
		if t.kind != myCond {
			return t
		}
	}
}

func (l *myLexer) peekSkipCond() myTok {
	for {
		t := l.peek()
		if t.kind != myCond {
			return t
		}
		l.next()
	}
}

// rest returns the statement text from the peeked (or next) token on.
func (l *myLexer) rest() []byte {
	if l.has {
		return l.s[l.tok.pos:]
	}
	return l.s[l.i:]
}

func (l *myLexer) fail(pos int, format string, a ...any) myTok {
	if l.err == nil {
		l.err = fmt.Errorf(format, a...)
	}
	l.i = len(l.s)
	return myTok{kind: myEOF, pos: pos}
}

func (l *myLexer) scan() myTok {
	s := l.s
	for l.i < len(s) && (s[l.i] == ' ' || s[l.i] == '\t' || s[l.i] == '\n' || s[l.i] == '\r' || s[l.i] == '\f') {
		l.i++
	}
	start := l.i
	if l.i >= len(s) {
		return myTok{kind: myEOF, pos: start}
	}
	c := s[l.i]
	switch {
	case c == '`':
		var b []byte
		for j := l.i + 1; j < len(s); j++ {
			if s[j] == '`' {
				if j+1 < len(s) && s[j+1] == '`' {
					b = append(b, '`')
					j++
					continue
				}
				l.i = j + 1
				return myTok{kind: myIdent, text: b, pos: start}
			}
			b = append(b, s[j])
		}
		return l.fail(start, "unterminated `identifier")
	case c == '\'' || c == '"':
		b, end, err := decodeMySQLString(nil, s, l.i+1, c)
		if err != nil {
			return l.fail(start, "%v", err)
		}
		l.i = end
		return myTok{kind: myString, text: b, pos: start}
	case (c == 'x' || c == 'X') && l.i+1 < len(s) && s[l.i+1] == '\'':
		end := bytes.IndexByte(s[l.i+2:], '\'')
		if end < 0 {
			return l.fail(start, "unterminated X'' literal")
		}
		b, err := decodeHexDigits(s[l.i+2 : l.i+2+end])
		if err != nil {
			return l.fail(start, "X'' literal: %v", err)
		}
		l.i += 2 + end + 1
		return myTok{kind: myHex, text: b, pos: start}
	case (c == 'b' || c == 'B') && l.i+1 < len(s) && s[l.i+1] == '\'':
		end := bytes.IndexByte(s[l.i+2:], '\'')
		if end < 0 {
			return l.fail(start, "unterminated b'' literal")
		}
		d := s[l.i+2 : l.i+2+end]
		if !onlyBinaryDigits(d) {
			return l.fail(start, "b'' literal with a digit other than 0 and 1")
		}
		l.i += 2 + end + 1
		return myTok{kind: myBits, text: d, pos: start}
	case (c == 'n' || c == 'N') && l.i+1 < len(s) && s[l.i+1] == '\'':
		b, end, err := decodeMySQLString(nil, s, l.i+2, '\'')
		if err != nil {
			return l.fail(start, "%v", err)
		}
		l.i = end
		return myTok{kind: myString, text: b, pos: start}
	case c == '0' && l.i+2 < len(s) && (s[l.i+1] == 'x' || s[l.i+1] == 'b') && isHexDigit(s[l.i+2]):
		j := l.i + 2
		for j < len(s) && isWordChar(s[j]) {
			j++
		}
		d := s[l.i+2 : j]
		l.i = j
		if s[start+1] == 'x' {
			if len(d)%2 == 1 {
				d = append([]byte{'0'}, d...)
			}
			b, err := decodeHexDigits(d)
			if err != nil {
				return l.fail(start, "0x literal: %v", err)
			}
			return myTok{kind: myHex, text: b, pos: start}
		}
		if !onlyBinaryDigits(d) {
			return l.fail(start, "0b literal with a digit other than 0 and 1")
		}
		return myTok{kind: myBits, text: d, pos: start}
	case c >= '0' && c <= '9' || c == '.' && l.i+1 < len(s) && s[l.i+1] >= '0' && s[l.i+1] <= '9':
		j := l.i
		for j < len(s) && s[j] >= '0' && s[j] <= '9' {
			j++
		}
		if j < len(s) && s[j] == '.' {
			j++
			for j < len(s) && s[j] >= '0' && s[j] <= '9' {
				j++
			}
		}
		if j < len(s) && (s[j] == 'e' || s[j] == 'E') {
			k := j + 1
			if k < len(s) && (s[k] == '+' || s[k] == '-') {
				k++
			}
			if k < len(s) && s[k] >= '0' && s[k] <= '9' {
				for k < len(s) && s[k] >= '0' && s[k] <= '9' {
					k++
				}
				j = k
			}
		}
		if j < len(s) && isWordChar(s[j]) {
			// An identifier that starts with digits (1abc).
			for j < len(s) && isWordChar(s[j]) {
				j++
			}
			l.i = j
			return myTok{kind: myWord, text: s[start:j], pos: start}
		}
		l.i = j
		return myTok{kind: myNumber, text: s[start:j], pos: start}
	case isWordChar(c):
		j := l.i
		for j < len(s) && isWordChar(s[j]) {
			j++
		}
		l.i = j
		return myTok{kind: myWord, text: s[start:j], pos: start}
	case c == '/' && l.i+2 < len(s) && s[l.i+1] == '*' && (s[l.i+2] == '!' || s[l.i+2] == '+' || s[l.i+2] == 'M' && l.i+3 < len(s) && s[l.i+3] == '!'):
		t := myTok{kind: myCond, pos: start}
		j := l.i + 3
		switch s[l.i+2] {
		case '+':
			t.hint = true
		case 'M':
			t.mariaOnly = true
			j++
		}
		if !t.hint {
			k := j
			for k < len(s) && s[k] >= '0' && s[k] <= '9' && k-j < 6 {
				t.ver = t.ver*10 + int(s[k]-'0')
				k++
			}
			j = k
		}
		end := bytes.Index(s[j:], []byte("*/"))
		if end < 0 {
			return l.fail(start, "unterminated executable comment")
		}
		t.text = s[j : j+end]
		l.i = j + end + 2
		return t
	}
	l.i++
	return myTok{kind: myPunct, text: s[start:l.i], pos: start}
}

func isHexDigit(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func onlyBinaryDigits(d []byte) bool {
	for _, c := range d {
		if c != '0' && c != '1' {
			return false
		}
	}
	return true
}

func decodeHexDigits(d []byte) ([]byte, error) {
	if len(d)%2 == 1 {
		return nil, errors.New("odd number of hex digits")
	}
	out := make([]byte, len(d)/2)
	for i := 0; i < len(d); i += 2 {
		hi, lo := unhex(d[i]), unhex(d[i+1])
		if hi < 0 || lo < 0 {
			return nil, fmt.Errorf("%q is not a hex digit pair", d[i:i+2])
		}
		out[i/2] = byte(hi<<4 | lo)
	}
	return out, nil
}

func unhex(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

// decodeMySQLString appends to dst the string literal whose opening quote q
// is just before s[i], decoding MySQL's escapes: \0 \b \n \r \t \Z and \\,
// \' \"; \% and \_ keep their backslash (as MySQL does outside LIKE); a
// backslash before any other byte is dropped; a doubled quote is one quote.
// It returns the index after the closing quote.
func decodeMySQLString(dst, s []byte, i int, q byte) ([]byte, int, error) {
	for i < len(s) {
		j := i
		for j < len(s) && s[j] != q && s[j] != '\\' {
			j++
		}
		dst = append(dst, s[i:j]...)
		if j >= len(s) {
			break
		}
		if s[j] == q {
			if j+1 < len(s) && s[j+1] == q {
				dst = append(dst, q)
				i = j + 2
				continue
			}
			return dst, j + 1, nil
		}
		if j+1 >= len(s) {
			break
		}
		switch e := s[j+1]; e {
		case '0':
			dst = append(dst, 0)
		case 'b':
			dst = append(dst, '\b')
		case 'n':
			dst = append(dst, '\n')
		case 'r':
			dst = append(dst, '\r')
		case 't':
			dst = append(dst, '\t')
		case 'Z':
			dst = append(dst, 0x1a)
		case '%', '_':
			dst = append(dst, '\\', e)
		default:
			dst = append(dst, e)
		}
		i = j + 2
	}
	return dst, len(s), fmt.Errorf("unterminated %c-quoted string", q)
}
