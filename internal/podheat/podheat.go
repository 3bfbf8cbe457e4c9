// Package podheat runs the ephemeral Heat of one heat_dir in podman, through
// the podman REST API (github.com/containers/podman/v4/pkg/bindings):
//
//   - heat_type container: one heat-all container (sqlite in heat_dir, or an
//     existing MySQL), its API published on bind_host:api_port only;
//   - heat_type pod: heat_dir/heat-pod.yaml, a Kubernetes Pod started with
//     play kube: heat-api, heat-engine with engine_workers and, unless
//     external URLs are given, its own MariaDB (datadir in heat_dir) and
//     RabbitMQ, all on the pod's loopback; per-launch random credentials
//     live only in heat_dir (0600).
//
// Pods and containers are named after a hash of heat_dir and labelled with
// it and with the fingerprint of the requested configuration, so a leftover
// from a crashed run is found, and reused when healthy and matching.
package podheat

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	nettypes "github.com/containers/common/libnetwork/types"
	"github.com/containers/podman/v4/pkg/bindings/containers"
	"github.com/containers/podman/v4/pkg/bindings/play"
	"github.com/containers/podman/v4/pkg/bindings/pods"
	"github.com/containers/podman/v4/pkg/specgen"
	spec "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/ephemeral-heat/ephemeral-heat/internal/dumps"
	"github.com/ephemeral-heat/ephemeral-heat/internal/fsutil"
	"github.com/ephemeral-heat/ephemeral-heat/internal/heatconf"
	"github.com/ephemeral-heat/ephemeral-heat/internal/proc"
	"github.com/ephemeral-heat/ephemeral-heat/internal/tuning"
)

// Heat types and states (the same strings as package launch).
const (
	Container = "container"
	Pod       = "pod"
	Started   = "started"
	Stopped   = "stopped"
	Absent    = "absent"
)

// StateFile is the launch record inside heat_dir (shared with package launch).
const StateFile = "launch.json"

// SQLiteFile is the sqlite database of heat_type container.
const SQLiteFile = "heat.sqlite"

// Options are the launch module's parameters for container and pod.
type Options struct {
	State    string
	HeatType string
	HeatDir  string
	APIPort  int
	BindHost string
	// Database is sqlite or mysql (launch's parameter); a pod without
	// DatabaseURL runs its own MariaDB whatever it says.
	Database string
	// DatabaseURL is the admin URL of an existing MySQL ("" for none).
	DatabaseURL string
	// PrepareDB creates Heat's database and user on DatabaseURL's server and
	// returns Heat's SQLAlchemy URL and a credential-free location.
	PrepareDB func(ctx context.Context) (heatURL, location string, err error)
	// RemoveDB drops the database named by heat.conf (sqlite or external).
	RemoveDB func(ctx context.Context) ([]string, error)
	// RestoreDB loads the newest dump in HeatDir before Heat starts: into
	// the sqlite file or the external database before the container or pod
	// is created, into the pod's own MariaDB once it runs and before
	// db_sync (heat-engine waits for it). A healthy running Heat is kept
	// as it is (no restore).
	RestoreDB bool
	// RestoreFrom is the dump to load ("" = the newest in HeatDir; see
	// dumps.RestoreOptions.Dump).
	RestoreFrom string
	// TransportURL is an existing RabbitMQ (pod only); "" runs its own.
	TransportURL  string
	Image         string
	APIImage      string
	EngineImage   string
	EngineWorkers int
	Socket        string
	Timeout       time.Duration
	CheckMode     bool
	ExtraConf     map[string]map[string]string
	// StockConf leaves out our tuning (package tuning), for benchmarks.
	StockConf bool
	// StopGrace is how long containers get to exit before SIGKILL.
	StopGrace time.Duration

	Warn   func(format string, args ...any)
	Secret func(string)
}

// Outcome is what a run reports.
type Outcome struct {
	Changed          bool
	Msg              string
	Endpoint         string
	Name             string // the pod or container
	Database         string
	DatabaseLocation string
	Removed          []string
	// Restored is what restore_db loaded (nil when nothing was restored);
	// the caller checks its stacks against the API.
	Restored *dumps.Result
}

// Record is heat_dir/launch.json for container and pod (the fields it shares
// with package launch's record have the same names).
type Record struct {
	HeatType    string `json:"heat_type"`
	Fingerprint string `json:"fingerprint"`
	Endpoint    string `json:"endpoint"`
	BindHost    string `json:"bind_host"`
	APIPort     int    `json:"api_port"`
	Database    string `json:"database"`
	DBLocation  string `json:"database_location"`
	// DBHostPort is the port on the host's 127.0.0.1 where the pod's own
	// MariaDB is published (heat.conf [database] host_connection).
	DBHostPort int       `json:"database_host_port,omitempty"`
	Podman     string    `json:"podman_name"`
	Socket     string    `json:"podman_socket"`
	StartedAt  time.Time `json:"started_at"`
}

func (o *Options) defaults() {
	if o.Image == "" {
		o.Image = DefaultImage
	}
	if o.EngineWorkers < 1 {
		o.EngineWorkers = DefaultEngineWorkers()
	}
	if o.HeatType == Container {
		o.EngineWorkers = 1
	}
	if o.Socket == "" {
		o.Socket = DefaultSocket()
	}
	if o.Timeout <= 0 {
		o.Timeout = 180 * time.Second
	}
	if o.StopGrace <= 0 {
		o.StopGrace = 10 * time.Second
	}
	if o.BindHost == "" {
		o.BindHost = "127.0.0.1"
	}
	if o.Warn == nil {
		o.Warn = func(string, ...any) {}
	}
	if o.Secret == nil {
		o.Secret = func(string) {}
	}
	if o.HeatType == Pod && o.DatabaseURL == "" {
		o.Database = "mysql"
	}
}

// DefaultEngineWorkers is half the CPUs, at least 1.
func DefaultEngineWorkers() int {
	n := numCPU() / 2
	if n < 1 {
		n = 1
	}
	return n
}

// Validate checks the options that only container and pod have.
func Validate(o Options) error {
	if o.HeatType != Container && o.HeatType != Pod {
		return fmt.Errorf("podheat handles heat_type container and pod, not %q", o.HeatType)
	}
	if o.TransportURL != "" {
		if o.HeatType != Pod {
			return errors.New("transport_url is only used with heat_type: pod (heat-all runs its RPC in-process)")
		}
		u, err := url.Parse(o.TransportURL)
		if err != nil || !strings.HasPrefix(u.Scheme, "rabbit") || u.Host == "" {
			return errors.New("transport_url must be the URL of an existing RabbitMQ, rabbit://USER:PASSWORD@HOST:PORT/")
		}
	}
	if o.EngineWorkers < 0 {
		return fmt.Errorf("engine_workers must be at least 1, got %d", o.EngineWorkers)
	}
	if ip := net.ParseIP(strings.Trim(o.BindHost, "[]")); o.BindHost != "" && ip == nil {
		return fmt.Errorf("bind_host must be an IP address with heat_type %s (podman publishes the port on it), got %q", o.HeatType, o.BindHost)
	}
	return nil
}

func (o *Options) externalDB() bool { return o.DatabaseURL != "" }

// hostNetwork: an external service on this host's loopback is unreachable
// from a bridge-networked pod, so such a pod shares the host's network.
func (o *Options) hostNetwork() bool {
	for _, raw := range []string{o.DatabaseURL, o.TransportURL} {
		if raw == "" {
			continue
		}
		u, err := url.Parse(raw)
		if err != nil {
			continue
		}
		h := u.Hostname()
		if h == "localhost" {
			return true
		}
		if ip := net.ParseIP(h); ip != nil && ip.IsLoopback() {
			return true
		}
	}
	return false
}

// Run brings the heat_dir's container or pod to the requested state.
func Run(ctx context.Context, o Options) (Outcome, error) {
	o.defaults()
	if err := Validate(o); err != nil {
		return Outcome{}, err
	}
	switch o.State {
	case Started:
		return start(ctx, &o)
	case Stopped, Absent:
		return stop(ctx, &o)
	}
	return Outcome{}, fmt.Errorf("state %q is unknown; use started, stopped or absent", o.State)
}

func readRecord(dir string) (*Record, error) {
	b, err := os.ReadFile(filepath.Join(dir, StateFile))
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the launch record: %w", err)
	}
	var r Record
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("the launch record %s is corrupt (%v): remove it; the pod or container %s is found by its label",
			filepath.Join(dir, StateFile), err, Name(dir))
	}
	return &r, nil
}

func writeRecord(dir string, r *Record) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding the launch record: %w", err)
	}
	return fsutil.WriteFileAtomic(filepath.Join(dir, StateFile), append(b, '\n'), fsutil.SecretFileMode)
}

func (o *Options) endpoint() string {
	return heatconf.Config{BindHost: o.BindHost, APIPort: o.APIPort}.Endpoint()
}

// objects is what exists in podman for this heat_dir.
type objects struct {
	pods, ctrs []string
}

func (x objects) empty() bool { return len(x.pods) == 0 && len(x.ctrs) == 0 }

func (x objects) String() string {
	var parts []string
	for _, p := range x.pods {
		parts = append(parts, "pod "+p)
	}
	for _, c := range x.ctrs {
		parts = append(parts, "container "+c)
	}
	return strings.Join(parts, ", ")
}

func find(ctx context.Context, heatDir string) (objects, error) {
	ps, cs, err := ours(ctx, heatDir)
	if err != nil {
		return objects{}, err
	}
	return objects{pods: ps, ctrs: cs}, nil
}

// healthy reports whether the existing pod or container is the requested
// configuration and serves: running, fingerprint label matches, API and
// engines answer.
func (o *Options) healthy(ctx context.Context, x objects) (bool, string) {
	name := Name(o.HeatDir)
	fp := o.fingerprint()
	var labels map[string]string
	switch o.HeatType {
	case Pod:
		if len(x.pods) != 1 || x.pods[0] != name || len(x.ctrs) > 0 {
			return false, "it is not the expected pod " + name
		}
		rep, err := pods.Inspect(ctx, name, nil)
		if err != nil {
			return false, err.Error()
		}
		labels = rep.Labels
		for _, c := range rep.Containers {
			if c.ID == rep.InfraContainerID {
				continue
			}
			if c.State != "running" {
				return false, fmt.Sprintf("its container %s is %s", c.Name, c.State)
			}
		}
	case Container:
		if len(x.ctrs) != 1 || x.ctrs[0] != name || len(x.pods) > 0 {
			return false, "it is not the expected container " + name
		}
		c, err := containers.Inspect(ctx, name, nil)
		if err != nil {
			return false, err.Error()
		}
		labels = c.Config.Labels
		if c.State == nil || !c.State.Running {
			return false, "it is not running"
		}
	}
	if labels[LabelFingerprint] != fp {
		return false, "it was started with other settings"
	}
	if err := ready(ctx, o.endpoint(), o.EngineWorkers); err != nil {
		return false, err.Error()
	}
	return true, ""
}

func (o *Options) outcome(rec *Record) Outcome {
	return Outcome{Endpoint: rec.Endpoint, Name: rec.Podman, Database: rec.Database, DatabaseLocation: rec.DBLocation}
}

func start(ctx context.Context, o *Options) (Outcome, error) {
	name := Name(o.HeatDir)
	pctx, err := Connect(ctx, o.Socket)
	if err != nil {
		return Outcome{}, err
	}
	rec, err := readRecord(o.HeatDir)
	if err != nil {
		return Outcome{}, err
	}
	if rec != nil && rec.HeatType != o.HeatType {
		return Outcome{}, fmt.Errorf("heat_dir %s holds a %s Heat (see %s): stop it with state: stopped and heat_type: %s first",
			o.HeatDir, rec.HeatType, filepath.Join(o.HeatDir, StateFile), rec.HeatType)
	}
	x, err := find(pctx, o.HeatDir)
	if err != nil {
		return Outcome{}, err
	}
	if !x.empty() {
		ok, why := o.healthy(pctx, x)
		if ok {
			if rec == nil {
				o.Warn("found %s for %s without a launch record (a crashed run?); it is healthy and matches the requested settings: reusing it", x, o.HeatDir)
				rec = o.newRecord(name, o.endpoint(), "", "")
				rec.Database, rec.DBLocation = o.describeExistingDB()
				if !o.CheckMode {
					if err := writeRecord(o.HeatDir, rec); err != nil {
						return Outcome{}, err
					}
				}
			}
			out := o.outcome(rec)
			out.Msg = fmt.Sprintf("Heat is already running in %s %s at %s", o.HeatType, name, rec.Endpoint)
			return out, nil
		}
		if rec == nil {
			o.Warn("found %s for %s without a launch record (a crashed run?), not reusable (%s): replacing it", x, o.HeatDir, why)
		} else {
			o.Warn("the running %s is not reusable (%s): replacing it", x, why)
		}
	} else if rec != nil {
		o.Warn("stale launch record in %s: no pod or container of it exists; starting Heat afresh", o.HeatDir)
	}
	if o.CheckMode {
		return Outcome{Changed: true, Name: name, Msg: "Heat would be started in " + o.HeatDir}, nil
	}
	if err := checkImages(pctx, o.Image, o.apiImage(), o.engineImage()); err != nil {
		return Outcome{}, err
	}
	if err := removeAll(pctx, x, o); err != nil {
		return Outcome{}, err
	}
	if err := os.Remove(filepath.Join(o.HeatDir, StateFile)); err != nil && !os.IsNotExist(err) {
		return Outcome{}, fmt.Errorf("removing the stale launch record: %w", err)
	}
	for _, d := range []string{o.HeatDir, o.path(heatconf.LogDir), o.path(RunDir)} {
		if _, err := fsutil.EnsurePrivateDir(d); err != nil {
			return Outcome{}, err
		}
	}
	if !proc.WaitPortFree(o.BindHost, o.APIPort, 5*time.Second) {
		return Outcome{}, proc.PortInUse(o.BindHost, o.APIPort)
	}
	if ip := net.ParseIP(strings.Trim(o.BindHost, "[]")); ip == nil || !ip.IsLoopback() {
		o.Warn("the Heat API has no authentication and is published on %s: anyone who can reach that address controls it", o.BindHost)
	}

	cfg, dbKind, dbLoc, pts, sec, err := o.config(ctx)
	if err != nil {
		return Outcome{}, err
	}
	if err := heatconf.WritePythonFiles(o.HeatDir); err != nil {
		return Outcome{}, err
	}
	for n, data := range cfg.Files() {
		if err := fsutil.WriteFileAtomic(o.path(n), data, fsutil.SecretFileMode); err != nil {
			return Outcome{}, err
		}
	}
	rec = o.newRecord(name, cfg.Endpoint(), dbKind, dbLoc)
	if o.ownDBInPod() {
		rec.DBHostPort = pts.HostMySQL
	}
	var restored *dumps.Result
	if o.RestoreDB && !o.ownDBInPod() {
		// sqlite in heat_dir or an external database: before Heat starts.
		if restored, err = o.restore(ctx); err != nil {
			return Outcome{}, err
		}
	}
	switch o.HeatType {
	case Container:
		err = o.createContainer(pctx, name)
	case Pod:
		err = o.createPod(pctx, pts, sec)
	}
	if err == nil && o.RestoreDB && o.ownDBInPod() {
		// MariaDB runs, heat-engine waits for restore.pending to go.
		restored, err = o.restoreIntoPod(ctx, pctx)
	}
	if err != nil {
		_ = removeAll(pctx, objects{pods: podIf(o, name), ctrs: ctrIf(o, name)}, o)
		os.Remove(filepath.Join(o.HeatDir, RunDir, restorePending))
		return Outcome{}, err
	}
	if err := writeRecord(o.HeatDir, rec); err != nil {
		_ = removeAll(pctx, objects{pods: podIf(o, name), ctrs: ctrIf(o, name)}, o)
		return Outcome{}, err
	}
	if err := o.waitReady(pctx, name, rec.Endpoint); err != nil {
		_ = removeAll(pctx, objects{pods: podIf(o, name), ctrs: ctrIf(o, name)}, o)
		os.Remove(filepath.Join(o.HeatDir, StateFile))
		return Outcome{}, err
	}
	out := o.outcome(rec)
	out.Changed = true
	out.Msg = fmt.Sprintf("Heat started in %s %s at %s", o.HeatType, name, rec.Endpoint)
	out.Restored = restored
	return out, nil
}

func podIf(o *Options, name string) []string {
	if o.HeatType == Pod {
		return []string{name}
	}
	return nil
}

func ctrIf(o *Options, name string) []string {
	if o.HeatType == Container {
		return []string{name}
	}
	return nil
}

func (o *Options) newRecord(name, endpoint, db, loc string) *Record {
	return &Record{HeatType: o.HeatType, Fingerprint: o.fingerprint(), Endpoint: endpoint, BindHost: o.BindHost,
		APIPort: o.APIPort, Database: db, DBLocation: loc, Podman: name, Socket: o.Socket, StartedAt: time.Now().UTC()}
}

// describeExistingDB describes the database of a running Heat from heat.conf
// (as the host reaches it).
func (o *Options) describeExistingDB() (string, string) {
	ini, err := heatconf.ReadINI(o.path(heatconf.HeatConf))
	if err != nil {
		return "", ""
	}
	conn := ini.Get("database", "connection")
	if hc := ini.Get("database", dumps.HostConnectionKey); hc != "" {
		conn = hc
	}
	if strings.HasPrefix(conn, "sqlite:///") {
		return "sqlite", strings.TrimPrefix(conn, "sqlite:///")
	}
	if u, err := url.Parse(conn); err == nil && u.Host != "" {
		return "mysql", fmt.Sprintf("mysql://%s@%s%s", u.User.Username(), u.Host, u.Path)
	}
	return "", ""
}

func randomSecret() (string, error) {
	b := make([]byte, 18)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("generating a password: %w", err)
	}
	return hex.EncodeToString(b), nil
}

// config prepares the database and message bus and returns heat.conf's settings.
func (o *Options) config(ctx context.Context) (heatconf.Config, string, string, ports, secrets, error) {
	cfg := heatconf.Config{Dir: o.HeatDir, BindHost: o.BindHost, APIPort: o.APIPort, Now: time.Now(),
		EngineWorkers: o.EngineWorkers, Extra: o.mergedExtra(), PythonPath: o.path(heatconf.PythonDir)}
	pts := standardPorts()
	var sec secrets
	var dbKind, dbLoc string
	var err error
	if o.hostNetwork() && o.HeatType == Pod {
		// Own services share the host's loopback: take free ports.
		for _, p := range []*int{&pts.MySQL, &pts.AMQP, &pts.EPMD, &pts.Dist} {
			if *p, err = proc.FreePort(); err != nil {
				return cfg, "", "", pts, sec, err
			}
		}
	}
	switch {
	case o.externalDB():
		if o.PrepareDB == nil {
			return cfg, "", "", pts, sec, errors.New("database_url was given but cannot be prepared")
		}
		if cfg.Database, dbLoc, err = o.PrepareDB(ctx); err != nil {
			return cfg, "", "", pts, sec, err
		}
		dbKind = "mysql"
	case o.HeatType == Container:
		p := o.path(SQLiteFile)
		cfg.Database, dbKind, dbLoc = "sqlite:///"+p, "sqlite", p
	default:
		if sec.DBPassword, err = randomSecret(); err != nil {
			return cfg, "", "", pts, sec, err
		}
		o.Secret(sec.DBPassword)
		pts.HostMySQL = pts.MySQL
		if !o.hostNetwork() {
			// Published on the host's loopback for heat_db_dump, restore_db
			// and the watchdog.
			if pts.HostMySQL, err = proc.FreePort(); err != nil {
				return cfg, "", "", pts, sec, err
			}
		}
		cfg.Database = fmt.Sprintf("mysql+pymysql://heat:%s@127.0.0.1:%d/heat?charset=utf8", sec.DBPassword, pts.MySQL)
		if _, overridden := o.ExtraConf["database"]["connection"]; !overridden {
			// Heat (oslo.config) ignores this option; the tools on the host
			// (heat_db_dump, restore_db, the watchdog) use it.
			if cfg.Extra["database"] == nil {
				cfg.Extra["database"] = map[string]string{}
			}
			cfg.Extra["database"][dumps.HostConnectionKey] = fmt.Sprintf("mysql+pymysql://heat:%s@127.0.0.1:%d/heat?charset=utf8",
				sec.DBPassword, pts.HostMySQL)
		}
		dbKind, dbLoc = "mysql", fmt.Sprintf("mysql://heat@127.0.0.1:%d/heat (MariaDB of pod %s, datadir %s)",
			pts.HostMySQL, Name(o.HeatDir), o.path(MariaDBDir))
		if pts.HostMySQL != pts.MySQL {
			dbLoc = fmt.Sprintf("mysql://heat@127.0.0.1:%d/heat (MariaDB of pod %s, 127.0.0.1:%d inside the pod, datadir %s)",
				pts.HostMySQL, Name(o.HeatDir), pts.MySQL, o.path(MariaDBDir))
		}
	}
	if o.HeatType == Pod {
		if o.TransportURL != "" {
			if u, err := url.Parse(o.TransportURL); err == nil {
				if pw, ok := u.User.Password(); ok {
					o.Secret(pw)
				}
			}
			cfg.TransportURL = o.TransportURL
		} else {
			if sec.RabbitPassword, err = randomSecret(); err != nil {
				return cfg, "", "", pts, sec, err
			}
			o.Secret(sec.RabbitPassword)
			cfg.TransportURL = fmt.Sprintf("rabbit://heat:%s@127.0.0.1:%d/", sec.RabbitPassword, pts.AMQP)
		}
	}
	return cfg, dbKind, dbLoc, pts, sec, nil
}

// mergedExtra is our tuning (package tuning; not with StockConf), the
// settings a container needs, and the caller's extra settings.
func (o *Options) mergedExtra() map[string]map[string]string {
	out := tuning.Apply(nil, o.StockConf)
	// Containers are stopped by podman; never wait for oslo.service's 60 s.
	out = tuning.Merge(out, map[string]map[string]string{"DEFAULT": {"graceful_shutdown_timeout": "3"}})
	if !o.hostNetwork() {
		// Inside the container's own network namespace; podman publishes
		// the port on bind_host only.
		out["heat_api"] = map[string]string{"bind_host": "0.0.0.0"}
	}
	return tuning.Merge(out, o.ExtraConf)
}

func (o *Options) labels() map[string]string {
	return map[string]string{LabelManaged: "true", LabelDir: DirHash(o.HeatDir),
		LabelFingerprint: o.fingerprint(), LabelType: o.HeatType}
}

func (o *Options) createContainer(ctx context.Context, name string) error {
	s := specgen.NewSpecGenerator(o.Image, false)
	s.Name = name
	s.Labels = o.labels()
	conf := shq(o.path(heatconf.HeatConf))
	s.Command = o.script(CHeatAll, append(o.dbSyncScript(), "exec heat-all --config-file "+conf)...)
	s.Mounts = []spec.Mount{{Type: "bind", Source: o.HeatDir, Destination: o.HeatDir, Options: []string{"rbind", "rw"}}}
	for _, f := range o.roFiles() {
		s.Mounts = append(s.Mounts, spec.Mount{Type: "bind", Source: o.path(f), Destination: o.path(f), Options: []string{"rbind", "ro"}})
	}
	if o.hostNetwork() {
		s.NetNS = specgen.Namespace{NSMode: specgen.Host}
	} else {
		s.PortMappings = []nettypes.PortMapping{{HostIP: strings.Trim(o.BindHost, "[]"), HostPort: uint16(o.APIPort),
			ContainerPort: uint16(o.APIPort), Protocol: "tcp"}}
	}
	if _, err := containers.CreateWithSpec(ctx, s, nil); err != nil {
		return fmt.Errorf("creating container %s: %w", name, err)
	}
	if err := containers.Start(ctx, name, nil); err != nil {
		return fmt.Errorf("starting container %s: %w%s", name, err, o.logTails(ctx, []string{name}, CHeatAll))
	}
	return nil
}

func (o *Options) createPod(ctx context.Context, pts ports, sec secrets) error {
	if !o.externalDB() {
		if err := fsutil.WriteFileAtomic(o.path(MariaDBInit), mariaDBInitSQL(sec.DBPassword, !o.hostNetwork()), fsutil.SecretFileMode); err != nil {
			return err
		}
		if _, err := fsutil.EnsurePrivateDir(o.path(MariaDBDir)); err != nil {
			return err
		}
	}
	if o.TransportURL == "" {
		if err := fsutil.WriteFileAtomic(o.path(RabbitConf), rabbitConf(sec.RabbitPassword, pts), fsutil.SecretFileMode); err != nil {
			return err
		}
	}
	os.Remove(filepath.Join(o.HeatDir, RunDir, dbSyncMarker))
	pending := filepath.Join(o.HeatDir, RunDir, restorePending)
	os.Remove(pending)
	if o.RestoreDB && o.ownDBInPod() {
		if err := fsutil.WriteFileAtomic(pending, []byte("heat-engine waits until the launcher has restored the database\n"), fsutil.SecretFileMode); err != nil {
			return err
		}
	}
	y, err := o.renderPod(pts)
	if err != nil {
		return err
	}
	yp := o.path(PodYAML)
	if err := fsutil.WriteFileAtomic(yp, y, fsutil.SecretFileMode); err != nil {
		return err
	}
	rep, err := play.Kube(ctx, yp, new(play.KubeOptions).WithStart(true).WithQuiet(true))
	if err != nil {
		return fmt.Errorf("podman play kube %s: %w", yp, err)
	}
	for _, p := range rep.Pods {
		if len(p.ContainerErrors) > 0 {
			return fmt.Errorf("podman play kube %s: %s", yp, strings.Join(p.ContainerErrors, "; "))
		}
	}
	return nil
}

// serviceNames are the (podman) container names of a heat_dir's Heat and the
// names their logs have in heat_dir/log.
func (o *Options) serviceNames() (ctrs, logs []string) {
	name := Name(o.HeatDir)
	if o.HeatType == Container {
		return []string{name}, []string{CHeatAll}
	}
	for _, c := range []string{CMariaDB, CRabbitMQ, CHeatEngine, CHeatAPI} {
		if c == CMariaDB && o.externalDB() || c == CRabbitMQ && o.TransportURL != "" {
			continue
		}
		ctrs = append(ctrs, PodContainerName(o.HeatDir, c))
		logs = append(logs, c)
	}
	return ctrs, logs
}

func (o *Options) waitReady(ctx context.Context, name, endpoint string) error {
	deadline := time.Now().Add(o.Timeout)
	ctrs, logs := o.serviceNames()
	var last error
	for {
		for i, c := range ctrs {
			data, err := containers.Inspect(ctx, c, nil)
			if err != nil {
				return fmt.Errorf("inspecting container %s: %w", c, err)
			}
			if data.State != nil && !data.State.Running {
				return fmt.Errorf("container %s exited during start-up (%s, exit code %d)%s", c, data.State.Status,
					data.State.ExitCode, o.logTails(ctx, ctrs[i:i+1], logs[i]))
			}
		}
		if last = ready(ctx, endpoint, o.EngineWorkers); last == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("Heat in %s %s was not ready at %s within %s (%v; raise timeout if this host is slow)%s",
				o.HeatType, name, endpoint, o.Timeout, last, o.logTails(ctx, ctrs, logs...))
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for Heat: %w", ctx.Err())
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// logTails returns the last lines of the containers' output and of their log
// files in heat_dir/log, for error messages.
func (o *Options) logTails(ctx context.Context, ctrs []string, logNames ...string) string {
	var parts []string
	for _, c := range ctrs {
		if s := containerLogs(ctx, c, 15); s != "" {
			parts = append(parts, fmt.Sprintf("last lines of 'podman logs %s':\n%s", c, s))
		}
	}
	for _, n := range logNames {
		for _, f := range logFiles(n) {
			p := o.logPath(f)
			b, err := os.ReadFile(p)
			if err != nil || len(strings.TrimSpace(string(b))) == 0 {
				continue
			}
			parts = append(parts, fmt.Sprintf("last lines of %s:\n%s", p, proc.TailLines(b, 15)))
		}
	}
	if len(parts) == 0 {
		return "; its logs in " + o.path(heatconf.LogDir) + " are empty"
	}
	return "; " + strings.Join(parts, "\n")
}

func logFiles(service string) []string {
	switch service {
	case CMariaDB:
		return []string{"mariadb.stdout.log", "mariadb.log"}
	case CRabbitMQ:
		return []string{"rabbitmq.stdout.log", "rabbitmq.log"}
	case CHeatAll:
		return []string{"heat-all.stdout.log", "heat-manage.log", "heat-all.log"}
	case CHeatEngine:
		return []string{"heat-engine.stdout.log", "heat-manage.log", "heat-engine.log"}
	}
	return []string{service + ".stdout.log", service + ".log"}
}

// ready checks that the API answers and that engines consume RPC: GET
// /services is served by an engine over RPC and lists the engines up.
func ready(ctx context.Context, endpoint string, engines int) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, endpoint+"/services", nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("the API does not answer: %v", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET /services answered %s", resp.Status)
	}
	var body struct {
		Services []struct {
			Binary string `json:"binary"`
			Status string `json:"status"`
		} `json:"services"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return fmt.Errorf("GET /services: %v", err)
	}
	up := 0
	for _, s := range body.Services {
		if s.Binary == "heat-engine" && s.Status == "up" {
			up++
		}
	}
	if up < engines {
		return fmt.Errorf("%d of %d engines are up", up, engines)
	}
	return nil
}

func removeAll(ctx context.Context, x objects, o *Options) error {
	grace := int(o.StopGrace / time.Second)
	for _, p := range x.pods {
		if err := removePod(ctx, p, grace); err != nil {
			return err
		}
	}
	for _, c := range x.ctrs {
		if err := removeContainer(ctx, c, uint(grace)); err != nil {
			return err
		}
	}
	return nil
}

func stop(ctx context.Context, o *Options) (Outcome, error) {
	name := Name(o.HeatDir)
	out := Outcome{Name: name}
	rec, err := readRecord(o.HeatDir)
	if err != nil {
		return out, err
	}
	if rec != nil {
		out = o.outcome(rec)
		if rec.Socket != "" && o.Socket == DefaultSocket() {
			o.Socket = rec.Socket
		}
	}
	pctx, err := Connect(ctx, o.Socket)
	if err != nil {
		return out, err
	}
	x, err := find(pctx, o.HeatDir)
	if err != nil {
		return out, err
	}
	var dbItems []string
	if o.State == Absent {
		dbItems = o.liveDatabase()
	}
	if x.empty() && rec == nil && len(dbItems) == 0 {
		out.Msg = "no Heat is running for " + o.HeatDir
		return out, nil
	}
	out.Changed = true
	if o.CheckMode {
		out.Msg = "Heat would be stopped in " + o.HeatDir
		out.Removed = dbItems
		return out, nil
	}
	if err := removeAll(pctx, x, o); err != nil {
		return out, fmt.Errorf("stopping Heat: %w", err)
	}
	if rec != nil {
		if err := os.Remove(filepath.Join(o.HeatDir, StateFile)); err != nil && !os.IsNotExist(err) {
			return out, fmt.Errorf("removing the launch record: %w", err)
		}
		if !proc.WaitPortFree(rec.BindHost, rec.APIPort, 10*time.Second) {
			o.Warn("api_port %d is still in use after Heat stopped: %v", rec.APIPort, proc.PortInUse(rec.BindHost, rec.APIPort))
		}
	}
	out.Msg = "Heat stopped in " + o.HeatDir
	if x.empty() {
		out.Msg = "no pod or container was running for " + o.HeatDir
	}
	if o.State == Absent {
		removed, err := o.removeDatabase(ctx)
		out.Removed = removed
		if err != nil {
			return out, err
		}
		out.Msg += "; its database removed"
	}
	return out, nil
}

// ownMariaDB reports whether heat.conf points at the pod's own MariaDB.
func (o *Options) ownMariaDB() bool {
	if _, err := os.Stat(o.path(MariaDBInit)); err == nil {
		return true
	}
	// After state=absent the init file (credentials) is gone, but the pod
	// spec, an artifact, still says whether the pod ran its own MariaDB: a
	// second absent must not mistake its heat.conf for an external MySQL.
	if o.HeatType != Pod {
		return false
	}
	b, err := os.ReadFile(o.path(PodYAML))
	return err == nil && podRunsOwnMariaDB(b)
}

func (o *Options) liveDatabase() []string {
	if o.ownMariaDB() {
		if _, err := os.Stat(o.path(MariaDBDir)); err == nil {
			return []string{o.path(MariaDBDir)}
		}
		return nil
	}
	if files := o.sqliteFiles(); files != nil {
		var out []string
		for _, p := range files {
			if _, err := os.Stat(p); err == nil {
				out = append(out, p)
			}
		}
		return out
	}
	// An external MySQL: RemoveDB tells what it dropped.
	if _, err := os.Stat(o.path(heatconf.HeatConf)); err == nil && o.RemoveDB != nil {
		return []string{"the database named by " + o.path(heatconf.HeatConf)}
	}
	return nil
}

func (o *Options) removeDatabase(ctx context.Context) ([]string, error) {
	if o.ownMariaDB() {
		var removed []string
		if _, err := os.Stat(o.path(MariaDBDir)); err == nil {
			if err := os.RemoveAll(o.path(MariaDBDir)); err != nil {
				return nil, fmt.Errorf("removing the MariaDB datadir: %w", err)
			}
			removed = append(removed, o.path(MariaDBDir))
		}
		// Its credentials are gone with it.
		for _, f := range []string{MariaDBInit, RabbitConf} {
			os.Remove(o.path(f))
		}
		return removed, nil
	}
	if files := o.sqliteFiles(); files != nil {
		var removed []string
		for _, p := range files {
			err := os.Remove(p)
			if err == nil {
				removed = append(removed, p)
			} else if !os.IsNotExist(err) {
				return removed, fmt.Errorf("removing the Heat database %s: %w", p, err)
			}
		}
		return removed, nil
	}
	if o.RemoveDB == nil {
		return nil, nil
	}
	return o.RemoveDB(ctx)
}

// sqliteFiles is the sqlite database named by heat.conf and its journals
// (nil when heat.conf names another database).
func (o *Options) sqliteFiles() []string {
	ini, err := heatconf.ReadINI(o.path(heatconf.HeatConf))
	if err != nil {
		return nil
	}
	p, ok := strings.CutPrefix(ini.Get("database", "connection"), "sqlite:///")
	if !ok || !filepath.IsAbs(p) {
		return nil
	}
	return []string{p, p + "-journal", p + "-wal", p + "-shm"}
}
