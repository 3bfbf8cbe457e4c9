package workdir

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ephemeral-heat/ephemeral-heat/internal/fsutil"
	"github.com/ephemeral-heat/ephemeral-heat/internal/stackname"
)

// New takes heat_stack's stack names (package stackname) up to StackLimit,
// and refuses every other naming the parameter "stack".
func TestNewStackNames(t *testing.T) {
	longest := "a" + strings.Repeat("b", StackLimit.Max-1)
	tests := []struct {
		name  string
		stack string
		want  []string // none: accepted
	}{
		{name: "tripleoclient's default", stack: "overcloud"},
		{name: "letters, digits, _ - .", stack: "cell-1_a.b"},
		{name: "the longest whose files can be made", stack: longest},
		{name: "one character more", stack: longest + "c", want: []string{`parameter "stack" is 190 characters long`,
			"at most 189 characters here", "<stack>-install-", "a file name has at most 255 bytes"}},
		{name: "300 characters", stack: strings.Repeat("a", 300), want: []string{`"stack" is 300 characters long`, "at most 189"}},
		{name: "empty", stack: "", want: []string{`parameter "stack" is empty`}},
		{name: "newline", stack: "over\ncloud", want: []string{`"stack" is "over\ncloud"`, "starts with a letter"}},
		{name: "leading dash", stack: "-overcloud", want: []string{`"-overcloud"`}},
		{name: "semicolon", stack: "a;b", want: []string{`"a;b"`}},
		{name: "command substitution", stack: "a$(id)", want: []string{`"a$(id)"`}},
		{name: "non-ASCII", stack: "clöud", want: []string{`"clöud"`}},
		{name: "a number", stack: "123", want: []string{`"123"`, "starts with a letter"}},
		{name: "a path", stack: "a/b", want: []string{`"a/b"`}},
		{name: "dot dot", stack: "..", want: []string{`".."`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New("/w", tc.stack)
			if len(tc.want) == 0 {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil {
				t.Fatalf("%q accepted", tc.stack)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%v does not say %q", err, w)
				}
			}
		})
	}
}

// StackLimit is what the layout's names leave: with the longest stack
// every name, with an atomic write's longest temporary name added, fits in
// a file name, and one character more does not for the longest name.
func TestStackLimit(t *testing.T) {
	if StackLimit.Max < 100 || StackLimit.Max >= stackname.MaxLen {
		t.Fatalf("StackLimit %d", StackLimit.Max)
	}
	l := Layout{Dir: "/w", Stack: strings.Repeat("s", StackLimit.Max)}
	worst := 0
	for _, p := range append(sortedValues(l.Paths()), l.Archive(time.Now())) {
		if strings.Contains(p, "*") {
			continue
		}
		for _, elem := range strings.Split(p, "/") {
			if n := len(elem) + fsutil.TempNameExtra; strings.Contains(elem, l.Stack) && n > worst {
				worst = n
			}
		}
	}
	if worst > fsutil.MaxNameLen || worst < fsutil.MaxNameLen-1 {
		t.Errorf("the longest name with its temporary name is %d bytes, want %d (StackLimit %d)", worst, fsutil.MaxNameLen, StackLimit.Max)
	}
}

// A working directory of the longest stack name gets its files, the deploy
// archive the longest of them.
func TestLongestStackWrites(t *testing.T) {
	l, err := New(filepath.Join(t.TempDir(), "w"), "a"+strings.Repeat("b", StackLimit.Max-1))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.WriteStatus(Status{Status: StatusDeploying}, false); err != nil {
		t.Fatal(err)
	}
	a, err := l.WriteArchive(time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(a.Path); err != nil {
		t.Fatal(err)
	}
	// The name the temporary file would take where O_TMPFILE is missing
	// fits too; one more character in the stack would not.
	over := filepath.Join(filepath.Dir(a.Path), "."+filepath.Base(a.Path)+".tmp-4194304-"+strings.Repeat("9", 19))
	if err := os.WriteFile(over, nil, 0o600); err != nil {
		t.Errorf("the longest temporary name: %v", err)
	}
	if err := os.WriteFile(over+"x", nil, 0o600); !errors.Is(err, syscall.ENAMETOOLONG) {
		t.Errorf("a name one byte longer: %v, want ENAMETOOLONG", err)
	}
}
