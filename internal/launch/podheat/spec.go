package podheat

import (
	"crypto/sha256"
	"encoding/hex"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/ephemeral-heat/ephemeral-heat/internal/heatdir"
)

// Labels put on every pod and container of these backends.
const (
	// LabelManaged marks objects of ephemeral.heat.
	LabelManaged = "ephemeral-heat.managed"
	// LabelDir is the hash of the heat_dir (label values are limited to 63 characters).
	LabelDir = "ephemeral-heat.heat-dir-hash"
	// LabelLaunch is the launch id (heatdir.Record.LaunchID) of the launch
	// that created the object.
	LabelLaunch = "ephemeral-heat.launch-id"
	// LabelType is container or pod.
	LabelType = "ephemeral-heat.heat-type"
)

// DefaultImage is the image `make heat-image` builds (also tagged with the Heat version).
const DefaultImage = "localhost/ephemeral-heat:latest"

// DirHash is the short hash of a heat_dir that names its pod or container.
func DirHash(heatDir string) string {
	s := sha256.Sum256([]byte(filepath.Clean(heatDir)))
	return hex.EncodeToString(s[:])[:12]
}

// Name is the pod (heat_type pod) or container (heat_type container) name of a heat_dir.
func Name(heatDir string) string { return "ephemeral-heat-" + DirHash(heatDir) }

// Shq quotes s for sh.
func Shq(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// Script is a container's command: sh -c with stdout/stderr into heat_dir/log.
func (b *Base) Script(name string, body ...string) []string {
	lines := append([]string{
		"set -e",
		"umask 077",
		"exec >>" + Shq(b.LogPath(heatdir.StdoutLog(name))) + " 2>&1",
		`echo "$(date -u +%FT%TZ) ` + name + ` starting"`,
		// heat.conf may name SQLAlchemy plugins from heat_dir (heatdir.PythonFiles).
		b.pythonExports(),
	}, body...)
	return []string{"/bin/sh", "-c", strings.Join(lines, "\n") + "\n"}
}

// pythonExports is the shell line that exports heatdir.PythonEnvVars.
func (b *Base) pythonExports() string {
	line := "export"
	for _, v := range heatdir.PythonEnvVars(b.Path(heatdir.PythonDir)) {
		line += " " + v[0] + "=" + Shq(v[1])
	}
	return line
}

// HeatConf is heat.conf's path, quoted for sh.
func (b *Base) HeatConf() string { return Shq(b.Path(heatdir.HeatConf)) }

// DBSyncScript runs db_sync and marks it done (heatdir.DBSyncDone). With
// retry it retries until the database answers (up to timeout); without (a
// local sqlite database), a failure is final.
func (b *Base) DBSyncScript(retry bool) []string {
	marker := Shq(b.S.Dir.Run(heatdir.DBSyncDone))
	tries := "1"
	if retry {
		tries = strconv.Itoa(int(b.S.Timeout.Seconds()/2) + 1)
	}
	return []string{
		"rm -f " + marker,
		"i=0",
		"until heat-manage --config-file " + b.HeatConf() + " db_sync; do",
		"  i=$((i+1)); [ $i -lt " + tries + " ] || { echo 'db_sync: the database did not answer'; exit 1; }",
		"  sleep 2",
		"done",
		"touch " + marker,
	}
}

// ROFiles are the configuration files mounted read-only over heat_dir
// (which is mounted read-write at its own path): Heat's, and more.
func ROFiles(more ...string) []string {
	return append([]string{heatdir.HeatConf, heatdir.APIPaste, heatdir.TokenFile}, more...)
}
