package workdir

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/ephemeral-heat/ephemeral-heat/internal/fsutil"
	"github.com/ephemeral-heat/ephemeral-heat/internal/passwords"
)

// Prepared is what a deploy takes from its working dir before it starts.
type Prepared struct {
	// EnvironmentsBefore go before the operator's environment files (the
	// passwords, as tripleoclient's parameters environment comes before
	// the user's -e files: an operator's own password wins);
	// EnvironmentsAfter go after them (the scale-down environment).
	EnvironmentsBefore, EnvironmentsAfter []string
	// Passwords is the passwords outcome (nil when generation is off).
	Passwords *passwords.Set
	// TempDir, in check mode, holds the passwords a first deploy would
	// generate (the working dir is not written); the caller removes it.
	TempDir string
	Changed bool
}

// Prepare readies the working dir for a deploy: with genPasswords, the
// passwords file is generated once and reused (only missing names are
// generated); the scale-down environment, when there is one, is named. In
// check mode nothing in the working dir is written: passwords that would
// be generated are written to a new private temporary directory instead.
func (l Layout) Prepare(genPasswords bool, names []string, check bool) (*Prepared, error) {
	p := &Prepared{EnvironmentsBefore: []string{}, EnvironmentsAfter: []string{}}
	if genPasswords {
		if check {
			s, err := passwords.Plan(l.Passwords(), names)
			if err != nil {
				return nil, err
			}
			p.Passwords, p.Changed = s, s.Changed
			if !s.Changed {
				p.EnvironmentsBefore = append(p.EnvironmentsBefore, l.Passwords())
			} else {
				dir, err := os.MkdirTemp("", "ephemeral-heat-check-")
				if err != nil {
					return nil, fmt.Errorf("check mode: a temporary directory for the passwords: %w", err)
				}
				tmp := filepath.Join(dir, filepath.Base(l.Passwords()))
				if err := fsutil.WriteFileAtomic(tmp, s.Content, fsutil.SecretFileMode); err != nil {
					os.RemoveAll(dir)
					return nil, err
				}
				p.TempDir = dir
				p.EnvironmentsBefore = append(p.EnvironmentsBefore, tmp)
			}
		} else {
			if _, err := l.Ensure(); err != nil {
				return nil, err
			}
			s, err := passwords.Ensure(l.Passwords(), names)
			if err != nil {
				return nil, err
			}
			p.Passwords, p.Changed = s, s.Changed
			p.EnvironmentsBefore = append(p.EnvironmentsBefore, l.Passwords())
		}
	}
	if st, err := os.Lstat(l.ScaleDown()); err == nil && st.Mode().IsRegular() {
		p.EnvironmentsAfter = append(p.EnvironmentsAfter, l.ScaleDown())
	}
	return p, nil
}
