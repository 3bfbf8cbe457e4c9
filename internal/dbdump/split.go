package dbdump

import (
	"bufio"
	"bytes"
	"io"
)

// splitReader is the input side the SQL splitters (mysqlSplitter,
// sqliteSplitter) share: the buffered SQL text, the statement being built
// and the 1-based line of the next byte.
type splitReader struct {
	r    *bufio.Reader
	buf  []byte
	line int // 1-based line of the next byte
}

func newSplitReader(r io.Reader) splitReader {
	return splitReader{r: bufio.NewReaderSize(r, ioBufferSize), line: 1}
}

// readThrough appends bytes up to and including delim to buf, counting the
// lines it passes. At the end of input it returns io.EOF; other read errors
// are returned as they are.
func (s *splitReader) readThrough(delim byte) error {
	for {
		chunk, err := s.r.ReadSlice(delim)
		s.buf = append(s.buf, chunk...)
		s.line += bytes.Count(chunk, []byte{'\n'})
		switch err {
		case nil:
			return nil
		case bufio.ErrBufferFull:
			continue
		default:
			return err
		}
	}
}
