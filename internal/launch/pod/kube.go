package pod

import (
	"fmt"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/ephemeral-heat/ephemeral-heat/internal/heatdir"
	"github.com/ephemeral-heat/ephemeral-heat/internal/launch/podheat"
)

// AnnotationDir is the heat_dir itself (pods only, and only when it fits:
// podman 4.3's play kube refuses annotation values over 63 characters).
const AnnotationDir = "ephemeral-heat/heat-dir"

// Container names inside a pod (podman names them <pod>-<name>), and the
// names of their logs in heat_dir/log.
const (
	CMariaDB    = "mariadb"
	CRabbitMQ   = "rabbitmq"
	CHeatAPI    = "heat-api"
	CHeatEngine = "heat-engine"
)

// ContainerName is the name podman gives container c of the pod of heatDir.
func ContainerName(heatDir, c string) string { return podheat.Name(heatDir) + "-" + c }

// ports are the loopback ports of the pod's own MariaDB and RabbitMQ (and
// RabbitMQ's epmd and distribution ports). Inside a bridge-networked pod
// they are the standard ones; with host networking they are free host ports.
// HostMySQL is where the host reaches the pod's MariaDB: a free port on the
// host's 127.0.0.1 that podman publishes (bridge), or MySQL itself (host
// networking).
type ports struct {
	MySQL, AMQP, EPMD, Dist int
	HostMySQL               int
}

func standardPorts() ports {
	return ports{MySQL: 3306, AMQP: 5672, EPMD: 4369, Dist: 25672, HostMySQL: 3306}
}

// secrets are the per-launch credentials of the pod's own services.
type secrets struct {
	DBPassword, RabbitPassword string
}

// waitRestoreScript holds the engine back while the launcher restores a dump
// into the pod's MariaDB (heat_dir/run/restore.pending exists); without that
// file it does nothing, so the pod also runs by hand.
func (b *Backend) waitRestoreScript() []string {
	return b.waitScript("while [ -e "+podheat.Shq(b.S.Dir.Run(heatdir.RestorePending))+" ]",
		"restore_db: the launcher did not finish restoring the database")
}

// waitDBSyncScript holds heat-api back until heat-engine's db_sync is done.
func (b *Backend) waitDBSyncScript() []string {
	return b.waitScript("until [ -e "+podheat.Shq(b.S.Dir.Run(heatdir.DBSyncDone))+" ]", "db_sync did not finish")
}

// waitScript loops (loop: "while COND" or "until COND") once a second, up
// to timeout, then fails saying msg.
func (b *Backend) waitScript(loop, msg string) []string {
	tries := strconv.Itoa(int(b.S.Timeout.Seconds()) + 1)
	return []string{
		"i=0",
		loop + "; do",
		"  i=$((i+1)); [ $i -lt " + tries + " ] || { echo '" + msg + "'; exit 1; }",
		"  sleep 1",
		"done",
	}
}

// mariaDBInitSQL creates Heat's database and user; it runs at each MariaDB
// start (--init-file), so a relaunch sets the new random password. A
// bridge-networked pod's MariaDB is reached from the host through the port
// podman publishes on the host's 127.0.0.1, which arrives from the bridge's
// gateway: the account then accepts any client address (only the host and
// the podman network reach the pod's address; the password is random).
func mariaDBInitSQL(pw string, fromHost bool) []byte {
	q := "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(pw) + "'"
	var b strings.Builder
	b.WriteString("CREATE DATABASE IF NOT EXISTS heat CHARACTER SET utf8;\n")
	hosts := []string{"127.0.0.1", "localhost", "::1"}
	if fromHost {
		hosts = append(hosts, "%")
	}
	for _, h := range hosts {
		acct := "'heat'@'" + h + "'"
		fmt.Fprintf(&b, "CREATE USER IF NOT EXISTS %s IDENTIFIED BY %s;\n", acct, q)
		fmt.Fprintf(&b, "ALTER USER %s IDENTIFIED BY %s;\n", acct, q)
		fmt.Fprintf(&b, "GRANT ALL PRIVILEGES ON heat.* TO %s;\n", acct)
	}
	b.WriteString("FLUSH PRIVILEGES;\n")
	return []byte(b.String())
}

func rabbitConf(pw string, p ports) []byte {
	return []byte(fmt.Sprintf(`# Written by ephemeral.heat: the pod's own RabbitMQ, on loopback only.
listeners.tcp.1 = 127.0.0.1:%d
default_user = heat
default_pass = %s
loopback_users = none
log.file.level = info
`, p.AMQP, pw))
}

func (b *Backend) mariaDBScript(p ports) []string {
	dd := podheat.Shq(b.Path(heatdir.MariaDBDir))
	// Bridge: the pod's own network namespace, where podman's port
	// forwarding arrives on the pod's address. Host networking: the host's
	// loopback only.
	bind := "0.0.0.0"
	if b.hostNetwork() {
		bind = "127.0.0.1"
	}
	return b.Script(CMariaDB,
		"mkdir -p /run/mysqld",
		"if [ ! -d "+dd+"/mysql ]; then",
		"  mariadb-install-db --user=root --datadir="+dd+" --auth-root-authentication-method=socket --skip-test-db >/dev/null",
		"fi",
		"exec mariadbd --user=root --datadir="+dd+" --bind-address="+bind+" --port="+strconv.Itoa(p.MySQL)+
			" --socket=/run/mysqld/mysqld.sock --skip-name-resolve --innodb-buffer-pool-size=64M"+
			" --max-connections=1000 --init-file="+podheat.Shq(b.Path(heatdir.MariaDBInit))+" --log-error="+podheat.Shq(b.LogPath(heatdir.ServiceLog(CMariaDB))),
	)
}

func (b *Backend) rabbitScript(p ports) []string {
	return b.Script(CRabbitMQ,
		"export HOME=/var/lib/rabbitmq RABBITMQ_NODENAME=rabbit@localhost",
		"export RABBITMQ_CONFIG_FILE="+podheat.Shq(strings.TrimSuffix(b.Path(heatdir.RabbitConf), ".conf")),
		"export RABBITMQ_LOGS="+podheat.Shq(b.LogPath(heatdir.ServiceLog(CRabbitMQ))),
		"export RABBITMQ_MNESIA_BASE=/var/lib/rabbitmq/mnesia RABBITMQ_ENABLED_PLUGINS_FILE=/var/lib/rabbitmq/enabled_plugins",
		"export ERL_EPMD_ADDRESS=127.0.0.1 ERL_EPMD_PORT="+strconv.Itoa(p.EPMD)+" RABBITMQ_DIST_PORT="+strconv.Itoa(p.Dist),
		`export RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS="-kernel inet_dist_use_interface {127,0,0,1}"`,
		"mkdir -p /var/lib/rabbitmq && echo '[].' > /var/lib/rabbitmq/enabled_plugins",
		"exec /usr/lib/rabbitmq/bin/rabbitmq-server",
	)
}

// kube types: just what the pod needs.
type kPod struct {
	APIVersion string   `yaml:"apiVersion"`
	Kind       string   `yaml:"kind"`
	Metadata   kMeta    `yaml:"metadata"`
	Spec       kPodSpec `yaml:"spec"`
}

type kMeta struct {
	Name        string            `yaml:"name"`
	Labels      map[string]string `yaml:"labels,omitempty"`
	Annotations map[string]string `yaml:"annotations,omitempty"`
}

type kPodSpec struct {
	HostNetwork   bool         `yaml:"hostNetwork,omitempty"`
	RestartPolicy string       `yaml:"restartPolicy"`
	Containers    []kContainer `yaml:"containers"`
	Volumes       []kVolume    `yaml:"volumes"`
}

type kContainer struct {
	Name         string   `yaml:"name"`
	Image        string   `yaml:"image"`
	Command      []string `yaml:"command"`
	Env          []kEnv   `yaml:"env,omitempty"`
	Ports        []kPort  `yaml:"ports,omitempty"`
	VolumeMounts []kMount `yaml:"volumeMounts"`
}

type kEnv struct {
	Name  string `yaml:"name"`
	Value string `yaml:"value"`
}

type kPort struct {
	ContainerPort int    `yaml:"containerPort"`
	HostPort      int    `yaml:"hostPort"`
	HostIP        string `yaml:"hostIP"`
	Protocol      string `yaml:"protocol"`
}

type kMount struct {
	Name      string `yaml:"name"`
	MountPath string `yaml:"mountPath"`
	ReadOnly  bool   `yaml:"readOnly,omitempty"`
}

type kVolume struct {
	Name     string    `yaml:"name"`
	HostPath kHostPath `yaml:"hostPath"`
}

type kHostPath struct {
	Path string `yaml:"path"`
	Type string `yaml:"type"`
}

// mounts: heat_dir read-write at its own path (logs, MariaDB datadir, sqlite)
// and the configuration files read-only over it.
func (b *Backend) kubeMounts() ([]kMount, []kVolume) {
	ms := []kMount{{Name: "heat-dir", MountPath: b.Dir()}}
	vs := []kVolume{{Name: "heat-dir", HostPath: kHostPath{Path: b.Dir(), Type: "Directory"}}}
	for i, f := range b.roFiles() {
		n := fmt.Sprintf("conf-%d", i)
		ms = append(ms, kMount{Name: n, MountPath: b.Path(f), ReadOnly: true})
		vs = append(vs, kVolume{Name: n, HostPath: kHostPath{Path: b.Path(f), Type: "File"}})
	}
	return ms, vs
}

// roFiles are the configuration files mounted read-only: Heat's, and those
// of the pod's own MariaDB and RabbitMQ.
func (b *Backend) roFiles() []string {
	var more []string
	if !b.externalDB() {
		more = append(more, heatdir.MariaDBInit)
	}
	if b.transportURL() == "" {
		more = append(more, heatdir.RabbitConf)
	}
	return podheat.ROFiles(more...)
}

// renderPod renders heat-pod.yaml: a Kubernetes Pod that `podman play kube`
// accepts, with heat-api, heat-engine and, unless external URLs are given,
// MariaDB and RabbitMQ.
func (b *Backend) renderPod(p ports) ([]byte, error) {
	mounts, vols := b.kubeMounts()
	name := b.Name()
	pod := kPod{APIVersion: "v1", Kind: "Pod",
		Metadata: kMeta{Name: name,
			Labels: b.Labels(),
		},
		Spec: kPodSpec{HostNetwork: b.hostNetwork(), RestartPolicy: "Never", Volumes: vols},
	}
	if len(b.Dir()) <= 63 {
		pod.Metadata.Annotations = map[string]string{AnnotationDir: b.Dir()}
	}
	if !b.externalDB() {
		db := kContainer{Name: CMariaDB, Image: b.Image(), Command: b.mariaDBScript(p), VolumeMounts: mounts}
		if !b.hostNetwork() {
			// For heat_db_dump, restore_db and the watchdog on the host: the
			// host's loopback only.
			db.Ports = []kPort{{ContainerPort: p.MySQL, HostPort: p.HostMySQL, HostIP: "127.0.0.1", Protocol: "TCP"}}
		}
		pod.Spec.Containers = append(pod.Spec.Containers, db)
	}
	if b.transportURL() == "" {
		pod.Spec.Containers = append(pod.Spec.Containers, kContainer{Name: CRabbitMQ, Image: b.Image(),
			Command: b.rabbitScript(p), VolumeMounts: mounts})
	}
	conf := b.HeatConf()
	engine := kContainer{Name: CHeatEngine, Image: b.engineImage(), VolumeMounts: mounts,
		Command: b.Script(CHeatEngine, append(append(b.waitRestoreScript(), b.DBSyncScript(true)...), "exec heat-engine --config-file "+conf)...)}
	api := kContainer{Name: CHeatAPI, Image: b.apiImage(), VolumeMounts: mounts,
		Command: b.Script(CHeatAPI, append(b.waitDBSyncScript(), "exec heat-api --config-file "+conf)...)}
	if !b.hostNetwork() {
		api.Ports = []kPort{{ContainerPort: b.S.APIPort, HostPort: b.S.APIPort, HostIP: b.S.BindHost, Protocol: "TCP"}}
	}
	pod.Spec.Containers = append(pod.Spec.Containers, engine, api)
	body, err := yaml.Marshal(pod)
	if err != nil {
		return nil, fmt.Errorf("rendering %s: %w", heatdir.PodYAML, err)
	}
	head := fmt.Sprintf("# Written by ephemeral.heat for the ephemeral Heat in %s.\n"+
		"# By hand: podman play kube %s   (and: podman pod rm -f %s)\n", b.Dir(), b.Path(heatdir.PodYAML), name)
	return append([]byte(head), body...), nil
}
