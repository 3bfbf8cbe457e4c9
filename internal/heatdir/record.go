package heatdir

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"strings"
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

// ProcessIdentity is the key of Record.Process in launch.json: the
// identity of a backend that runs Heat as a host process group.
const ProcessIdentity = "process"

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
	// Process is Heat's host process group (heat_type native): the one
	// identity that the watchdog and backend.Running check themselves, by
	// pid, start time and launch tag.
	Process *proc.Record `json:"process,omitempty"`
	// Object is what a backend started other than a host process (a
	// podman container or pod), as that backend records it: launch.json
	// holds it under the backend's own key (backend.Declaration.Identity).
	Object *Object `json:"-"`
	// Watchdog watches owner_pid while Heat runs.
	Watchdog  *Watchdog `json:"watchdog,omitempty"`
	StartedAt time.Time `json:"started_at"`
}

// Object is a backend's own record of what it started, kept in launch.json
// under Key. Its data is a JSON object with at least "name", which names
// it in messages (Describe) and results; the rest is the backend's.
type Object struct {
	Key  string
	Name string
	Data json.RawMessage
}

// NewObject records v, which marshals to a JSON object with a "name", under
// key (the backend's identity).
func NewObject(key string, v any) (*Object, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("recording what %s started: %w", key, err)
	}
	return objectOf(key, b)
}

func objectOf(key string, data []byte) (*Object, error) {
	var n struct {
		Name string `json:"name"`
	}
	if err := json.Unmarshal(data, &n); err != nil {
		return nil, fmt.Errorf("%q: %w", key, err)
	}
	if n.Name == "" {
		return nil, fmt.Errorf("%q has no name", key)
	}
	if recordKeys()[key] || legacyKeys[key] {
		return nil, fmt.Errorf("%q is a field of the launch record itself", key)
	}
	return &Object{Key: key, Name: n.Name, Data: data}, nil
}

// Decode reads the backend's record into v.
func (o *Object) Decode(v any) error {
	if err := json.Unmarshal(o.Data, v); err != nil {
		return fmt.Errorf("the launch record's %q: %w", o.Key, err)
	}
	return nil
}

// recordFields is Record without its JSON methods.
type recordFields Record

// recordKeys are the JSON keys of Record's own fields.
func recordKeys() map[string]bool {
	keys := map[string]bool{}
	t := reflect.TypeOf(recordFields{})
	for i := 0; i < t.NumField(); i++ {
		if name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ","); name != "" && name != "-" {
			keys[name] = true
		}
	}
	return keys
}

// legacyKeys are the fields of version-0 records (legacyRecord).
var legacyKeys = map[string]bool{"podman_name": true, "podman_socket": true}

// MarshalJSON writes the record's fields and its Object under the Object's key.
func (r Record) MarshalJSON() ([]byte, error) {
	b, err := json.Marshal(recordFields(r))
	if err != nil || r.Object == nil {
		return b, err
	}
	if _, err := objectOf(r.Object.Key, r.Object.Data); err != nil {
		return nil, fmt.Errorf("encoding the launch record: %w", err)
	}
	key, _ := json.Marshal(r.Object.Key)
	out := append([]byte(nil), b[:len(b)-1]...)
	out = append(append(append(append(out, ','), key...), ':'), r.Object.Data...)
	return append(out, '}'), nil
}

// UnmarshalJSON reads the record's fields; the one other key, if any, is
// its Object.
func (r *Record) UnmarshalJSON(b []byte) error {
	var f recordFields
	if err := json.Unmarshal(b, &f); err != nil {
		return err
	}
	var all map[string]json.RawMessage
	if err := json.Unmarshal(b, &all); err != nil {
		return err
	}
	own := recordKeys()
	f.Object = nil
	for key, v := range all {
		if own[key] || legacyKeys[key] || string(v) == "null" {
			continue
		}
		if f.Object != nil {
			return fmt.Errorf("it names two things started, %q and %q", f.Object.Key, key)
		}
		o, err := objectOf(key, v)
		if err != nil {
			return err
		}
		f.Object = o
	}
	*r = Record(f)
	return nil
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
	case r.Object != nil:
		return r.HeatType + " " + r.Object.Name
	}
	return r.HeatType + " launch " + r.LaunchID
}

// legacyObjectKey is where version 1 keeps what version 0 recorded as
// podman_name and podman_socket: the container and pod backends' identity
// (their package declares it; this is the migration of old records).
const legacyObjectKey = "podman"

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
			o, err := NewObject(legacyObjectKey, map[string]string{"name": old.PodmanName, "socket": old.PodmanSocket})
			if err != nil {
				return nil, err
			}
			r.Object = o
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
