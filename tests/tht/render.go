package tht

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/ephemeral-heat/ephemeral-heat/internal/fsutil"
)

// The role and network files process-templates renders with: tripleoclient's
// defaults (python-tripleoclient tripleoclient/constants.py
// OVERCLOUD_ROLES_FILE, OVERCLOUD_NETWORKS_FILE), both relative to the THT root.
const (
	RolesFile    = "roles_data.yaml"
	NetworksFile = "network_data.yaml"
)

// cacheFormat changes when what an entry holds changes.
const cacheFormat = "1"

// pythonDeps is what the renderers need from Debian (tools/process-templates.py
// imports jinja2, six and yaml; tripleo_inputs.py jinja2 and yaml).
const pythonDeps = "python3 python3-jinja2 python3-yaml python3-six"

func checkPython() error {
	out, err := exec.Command("python3", "-c", "import jinja2, six, yaml").CombinedOutput()
	if err != nil {
		return fmt.Errorf("rendering needs %s (make deps installs them): %v: %s", pythonDeps, err, strings.TrimSpace(string(out)))
	}
	return nil
}

// renderTHT renders the j2 templates of the THT source with THT's own
// tools/process-templates.py, as tripleoclient does (python-tripleoclient
// tripleoclient/utils.py jinja_render_files, called from
// v1/overcloud_deploy.py create_template_dirs), into a cache entry. It returns
// the rendered tree (a full copy of the source with the j2 files rendered).
//
// With specs (Options.Roles) the roles data is generated from the source's
// roles/ first (generateRoles) and kept in the entry as rolesDataFile; its
// path is returned as rolesData ("" without specs: the tree's
// roles_data.yaml).
func renderTHT(root string, src *source, specs []roleSpec) (tree, rolesData string, hit bool, err error) {
	parts := []string{cacheFormat, src.key, RolesFile, NetworksFile}
	for _, s := range specs {
		parts = append(parts, s.defined+":"+s.name)
	}
	name := "render-" + shortHash(parts...)
	entry, hit, err := cachedDir(root, name, func(tmp string) error {
		if err := checkPython(); err != nil {
			return err
		}
		in, err := src.tree(tmp, thtMarker)
		if err != nil {
			return err
		}
		roles := RolesFile
		if len(specs) > 0 {
			b, err := generateRoles(in, specs)
			if err != nil {
				return fmt.Errorf("generating the roles data from %s: %w", src.path, err)
			}
			roles = filepath.Join(tmp, rolesDataFile)
			if err := fsutil.WriteFileAtomic(roles, b, 0o644); err != nil {
				return err
			}
		}
		out := filepath.Join(tmp, "tree")
		cmd := exec.Command("python3", filepath.Join(in, thtMarker), "-p", in, "-r", roles, "-n", NetworksFile, "-o", out)
		cmd.Dir = tmp
		var buf bytes.Buffer
		cmd.Stdout, cmd.Stderr = &buf, &buf
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("rendering %s with %s: %v:\n%s", src.path, thtMarker, err, tail(buf.String(), 20))
		}
		if _, err := os.Stat(filepath.Join(out, "overcloud.yaml")); err != nil {
			return fmt.Errorf("rendering %s: no overcloud.yaml was produced:\n%s", src.path, tail(buf.String(), 20))
		}
		if src.tarbal {
			return os.RemoveAll(filepath.Join(tmp, "src"))
		}
		return nil
	})
	if err != nil {
		return "", "", false, err
	}
	if len(specs) > 0 {
		rolesData = filepath.Join(entry, rolesDataFile)
	}
	return filepath.Join(entry, "tree"), rolesData, hit, nil
}

// rolesDataFile is the generated roles data in a render's cache entry.
const rolesDataFile = "roles-data.yaml"

//go:embed tripleo_inputs.py
var inputsScript []byte

// commonInputs is what the deploy takes from tripleo-common (see
// tripleo_inputs.py for where each comes from).
type commonInputs struct {
	PasswordNames         []string          `json:"password_names"`
	ImageMapping          map[string]any    `json:"image_mapping"`
	ImageParams           map[string]string `json:"image_params"`
	ContainerImagePrepare []any             `json:"container_image_prepare"`
}

// readCommon reads the inputs of a tripleo-common source (extracted first
// when it is a tarball), cached as the inputs.json of a cache entry.
func readCommon(root string, src *source) (*commonInputs, error) {
	name := "common-" + shortHash(cacheFormat, src.key, string(inputsScript))
	entry, _, err := cachedDir(root, name, func(tmp string) error {
		if err := checkPython(); err != nil {
			return err
		}
		dir, err := src.tree(tmp, commonMarker)
		if err != nil {
			return err
		}
		script := filepath.Join(tmp, "tripleo_inputs.py")
		if err := os.WriteFile(script, inputsScript, 0o644); err != nil {
			return err
		}
		cmd := exec.Command("python3", script, dir)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			return fmt.Errorf("reading tripleo-common inputs from %s: %v: %s", src.path, err, tail(stderr.String(), 20))
		}
		if err := os.Remove(script); err != nil {
			return err
		}
		if src.tarbal {
			if err := os.RemoveAll(filepath.Join(tmp, "src")); err != nil {
				return err
			}
		}
		return fsutil.WriteFileAtomic(filepath.Join(tmp, "inputs.json"), out, 0o644)
	})
	if err != nil {
		return nil, err
	}
	b, err := os.ReadFile(filepath.Join(entry, "inputs.json"))
	if err != nil {
		return nil, err
	}
	var ci commonInputs
	if err := json.Unmarshal(b, &ci); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(entry, "inputs.json"), err)
	}
	if len(ci.PasswordNames) == 0 || len(ci.ImageParams) == 0 || len(ci.ContainerImagePrepare) == 0 {
		return nil, fmt.Errorf("tripleo-common %s gave no password names, image parameters or ContainerImagePrepare", src.path)
	}
	return &ci, nil
}

// copyTree copies the regular files, directories and symlinks of src into
// dst (which must not exist), keeping permission bits.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			l, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(l, target)
		case d.IsDir():
			return os.Mkdir(target, info.Mode().Perm()|0o700)
		case d.Type().IsRegular():
			in, err := os.Open(p)
			if err != nil {
				return err
			}
			defer in.Close()
			out, err := os.OpenFile(target, os.O_WRONLY|os.O_CREATE|os.O_EXCL, info.Mode().Perm()|0o600)
			if err != nil {
				return err
			}
			_, err = io.Copy(out, in)
			if cerr := out.Close(); err == nil {
				err = cerr
			}
			return err
		}
		return nil
	})
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
