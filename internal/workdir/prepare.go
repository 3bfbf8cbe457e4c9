package workdir

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/ephemeral-heat/ephemeral-heat/internal/fsutil"
	"github.com/ephemeral-heat/ephemeral-heat/internal/passwords"
)

// Prepared is what a deploy takes from its working dir before it starts.
type Prepared struct {
	// Environments are every environment file the deploy sends, in order:
	// EnvironmentsBefore, the operator's with the lifecycle environment
	// placed among them (LifecycleEnvironment), EnvironmentsAfter.
	Environments []string
	// Lifecycle is the stage's lifecycle environment ("" for a deploy).
	Lifecycle string
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

// PrepareOptions say what a deploy needs of its working dir.
type PrepareOptions struct {
	// Passwords: generate the passwords file (of Names) once and reuse it.
	Passwords bool
	Names     []string
	// Stage is the deploy's lifecycle stage (lifecycle.Stages; "" is a
	// plain deploy); a prepare or converge puts its lifecycle environment,
	// found under TemplatesDir (the tripleo-heat-templates root), among
	// the operator's EnvironmentFiles where tripleoclient puts it
	// (PlaceLifecycle).
	Stage, TemplatesDir string
	// EnvironmentFiles are the operator's, in order.
	EnvironmentFiles []string
	// Check: write nothing in the working dir.
	Check bool
}

// Prepare readies the working dir for a deploy: with o.Passwords, the
// passwords file is generated once and reused (only missing names are
// generated); the lifecycle environment of o.Stage follows it; the
// scale-down environment, when there is one, is named. In check mode
// nothing in the working dir is written: passwords that would be generated
// are written to a new private temporary directory instead.
func (l Layout) Prepare(o PrepareOptions) (*Prepared, error) {
	genPasswords, names, check := o.Passwords, o.Names, o.Check
	p := &Prepared{EnvironmentsBefore: []string{}, EnvironmentsAfter: []string{}}
	lifeEnv, err := LifecycleEnvironment(o.Stage, o.TemplatesDir)
	if err != nil {
		return nil, err
	}
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
	p.Lifecycle = lifeEnv
	if st, err := os.Lstat(l.ScaleDown()); err == nil && st.Mode().IsRegular() {
		p.EnvironmentsAfter = append(p.EnvironmentsAfter, l.ScaleDown())
	}
	p.Environments = append(append(append([]string{}, p.EnvironmentsBefore...), PlaceLifecycle(o.EnvironmentFiles, lifeEnv)...), p.EnvironmentsAfter...)
	return p, nil
}

// PlaceLifecycle puts the lifecycle environment among the operator's
// environment files where python-tripleoclient puts it: first among its
// -e files (utils.prepend_environment), which come after the
// tripleo-heat-templates resource registry it adds itself
// (overcloud-resource-registry-puppet.yaml). An operator of this
// collection names that registry first: the lifecycle environment goes
// right after a leading overcloud-resource-registry*.yaml, else first, so
// that its resource_registry entries win over the registry's, as with
// tripleoclient.
func PlaceLifecycle(envs []string, lifeEnv string) []string {
	out := make([]string, 0, len(envs)+1)
	if lifeEnv == "" {
		return append(out, envs...)
	}
	at := 0
	if len(envs) > 0 && strings.HasPrefix(filepath.Base(envs[0]), "overcloud-resource-registry") {
		at = 1
	}
	out = append(out, envs[:at]...)
	out = append(out, lifeEnv)
	return append(out, envs[at:]...)
}
