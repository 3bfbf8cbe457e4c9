package heatdir

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/ephemeral-heat/ephemeral-heat/internal/fsutil"
	"github.com/ephemeral-heat/ephemeral-heat/internal/proc"
)

// RecordVersion is the version of the launch record this code writes.
// Version 0 (no "version" field) is the record of earlier releases.
const RecordVersion = 1

// States of a launch record.
const (
	// Starting: written before anything is started. It names the launch
	// only (LaunchID): whatever that launch started carries it, so a
	// launcher killed mid-start leaves nothing that cannot be found.
	Starting = "starting"
	// Running: Heat started and is identified (Process or Podman).
	Running = "running"
)

// Record is launch.json: what a launch started and how to recognise it.
// Nothing is ever signalled or removed unless a record names it and its
// identity checks out (see proc.Record.Check, and the podman object's id).
type Record struct {
	Version int    `json:"version"`
	State   string `json:"state"`
	// LaunchID is random per launch; every process the launch starts has
	// it in its environment (proc.Tag), every podman object in a label.
	LaunchID    string `json:"launch_id"`
	HeatType    string `json:"heat_type"`
	Fingerprint string `json:"fingerprint"`
	Endpoint    string `json:"endpoint"`
	BindHost    string `json:"bind_host"`
	APIPort     int    `json:"api_port"`
	Database    string `json:"database,omitempty"`
	// DBLocation is the database, without credentials.
	DBLocation string `json:"database_location,omitempty"`
	// DBHostPort is the port on the host's 127.0.0.1 where a pod's own
	// MariaDB is published.
	DBHostPort int `json:"database_host_port,omitempty"`
	// Process is heat-all (heat_type native).
	Process *proc.Record `json:"process,omitempty"`
	// Podman is the container or pod (heat_type container, pod).
	Podman *Podman `json:"podman,omitempty"`
	// Watchdog watches owner_pid while Heat runs.
	Watchdog  *Watchdog `json:"watchdog,omitempty"`
	StartedAt time.Time `json:"started_at"`
}

// Podman identifies a container or pod: its name, its id (a new object of
// the same name has another), and the service that runs it.
type Podman struct {
	Name   string `json:"name"`
	ID     string `json:"id"`
	Socket string `json:"socket"`
}

// Watchdog is the watchdog process and the owner it watches.
type Watchdog struct {
	Process proc.Record `json:"process"`
	Owner   proc.Record `json:"owner"`
}

// NewLaunchID returns a new random launch id.
func NewLaunchID() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("generating a launch id: %w", err)
	}
	return hex.EncodeToString(b), nil
}

// Tag is the environment entry every process of this launch carries.
func (r *Record) Tag() string {
	if r == nil || r.LaunchID == "" {
		return ""
	}
	return proc.Tag(r.LaunchID)
}

// Describe names what the record started, for messages: "pid N" (heat_type
// native), "pod NAME" or "container NAME", or the launch when it recorded
// nothing yet.
func (r *Record) Describe() string {
	switch {
	case r.Process != nil:
		return fmt.Sprintf("pid %d", r.Process.PID)
	case r.Podman != nil:
		return r.HeatType + " " + r.Podman.Name
	}
	return r.HeatType + " launch " + r.LaunchID
}

// legacyRecord holds the fields of a version-0 record that moved.
type legacyRecord struct {
	PodmanName   string `json:"podman_name"`
	PodmanSocket string `json:"podman_socket"`
}

// ReadRecord reads launch.json (nil, nil when there is none).
func (d Dir) ReadRecord() (*Record, error) {
	p := d.File(RecordFile)
	b, err := os.ReadFile(p)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the launch record: %w", err)
	}
	return decodeRecord(p, b)
}

// decodeRecord is the one decoder of launch records, of every version.
func decodeRecord(p string, b []byte) (*Record, error) {
	var r Record
	var old legacyRecord
	err := json.Unmarshal(b, &r)
	if err == nil {
		err = json.Unmarshal(b, &old)
	}
	if err != nil {
		return nil, fmt.Errorf("the launch record %s is corrupt (%v): stop any Heat that uses this heat_dir by hand "+
			"(the pid or podman container it ran), then remove the file", p, err)
	}
	switch {
	case r.Version > RecordVersion:
		return nil, fmt.Errorf("the launch record %s has version %d; this ephemeral.heat reads up to %d: use the newer one that wrote it",
			p, r.Version, RecordVersion)
	case r.Version == 0:
		// Earlier releases: no launch id (their processes cannot be proven
		// ours, and are never signalled), the podman object by name.
		r.State = Running
		if old.PodmanName != "" {
			r.Podman = &Podman{Name: old.PodmanName, Socket: old.PodmanSocket}
		}
	}
	return &r, nil
}

// WriteRecord writes launch.json atomically (mode 0600), as the current version.
func (d Dir) WriteRecord(r *Record) error {
	r.Version = RecordVersion
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding the launch record: %w", err)
	}
	return fsutil.WriteFileAtomic(d.File(RecordFile), append(b, '\n'), FileMode)
}

// RemoveRecord removes launch.json (a missing one is fine).
func (d Dir) RemoveRecord() error {
	if err := os.Remove(d.File(RecordFile)); err != nil && !os.IsNotExist(err) {
		return fmt.Errorf("removing the launch record: %w", err)
	}
	return nil
}
