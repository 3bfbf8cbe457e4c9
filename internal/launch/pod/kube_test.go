package pod

import (
	"strings"
	"testing"
	"time"

	"github.com/ephemeral-heat/ephemeral-heat/internal/heatdb"
	"github.com/ephemeral-heat/ephemeral-heat/internal/heatdir"
	"github.com/ephemeral-heat/ephemeral-heat/internal/launch/backend"
	"github.com/ephemeral-heat/ephemeral-heat/internal/launch/podheat"

	"gopkg.in/yaml.v3"
)

func TestRenderPod(t *testing.T) {
	o := podBackend(t, "/srv/x/heat-launcher", backend.Values{"image": "img:1", "engine_image": "eng:1", "engine_workers": 2})
	b, err := o.renderPod(standardPorts())
	if err != nil {
		t.Fatal(err)
	}
	var pod kPod
	if err := yaml.Unmarshal(b, &pod); err != nil {
		t.Fatal(err)
	}
	if pod.Kind != "Pod" || pod.Metadata.Name != podheat.Name(o.Dir()) || pod.Spec.HostNetwork {
		t.Errorf("pod: %+v", pod)
	}
	names := map[string]kContainer{}
	for _, c := range pod.Spec.Containers {
		names[c.Name] = c
	}
	for _, n := range []string{CMariaDB, CRabbitMQ, CHeatAPI, CHeatEngine} {
		if _, ok := names[n]; !ok {
			t.Errorf("container %s missing", n)
		}
	}
	if names[CHeatEngine].Image != "eng:1" || names[CHeatAPI].Image != "img:1" {
		t.Errorf("images: %+v", names)
	}
	api := names[CHeatAPI]
	if len(api.Ports) != 1 || api.Ports[0].HostIP != "127.0.0.1" || api.Ports[0].HostPort != 8006 {
		t.Errorf("api ports: %+v", api.Ports)
	}
	if !strings.Contains(strings.Join(names[CHeatEngine].Command, " "), "db_sync") {
		t.Errorf("engine does not run db_sync first")
	}
	// Heat's services find the SQLAlchemy plugin in heat_dir/python.
	for _, n := range []string{CHeatAPI, CHeatEngine} {
		if cmd := strings.Join(names[n].Command, " "); !strings.Contains(cmd,
			"\nexport PYTHONPATH='/srv/x/heat-launcher/python' PYTHONDONTWRITEBYTECODE='1'\n") {
			t.Errorf("%s does not export PYTHONPATH: %s", n, cmd)
		}
	}
	ro := 0
	for _, m := range api.VolumeMounts {
		if m.ReadOnly {
			ro++
		}
	}
	if ro != len(o.roFiles()) {
		t.Errorf("read-only mounts: %+v", api.VolumeMounts)
	}
	if pod.Metadata.Labels[podheat.LabelDir] != podheat.DirHash(o.Dir()) || pod.Metadata.Labels[podheat.LabelLaunch] != "launch-1" {
		t.Errorf("labels: %v", pod.Metadata.Labels)
	}

	// External services: no MariaDB nor RabbitMQ; loopback ones need host networking.
	o.S.AdminDB = &heatdb.DB{Kind: heatdb.MySQL, User: "root", Password: "pw", Net: "tcp", Addr: "127.0.0.1:3306"}
	o.S.Options[TransportURL.Name] = "rabbit://u:p@127.0.0.1:5672/"
	b, _ = o.renderPod(standardPorts())
	pod = kPod{}
	yaml.Unmarshal(b, &pod)
	if len(pod.Spec.Containers) != 2 || !pod.Spec.HostNetwork || len(pod.Spec.Containers[1].Ports) != 0 {
		t.Errorf("external services: %+v", pod.Spec)
	}
	if strings.Contains(string(b), "pw") {
		t.Errorf("credentials in the pod yaml")
	}
}

func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		o    backend.Values
		bind string
		want string
	}{
		{backend.Values{"transport_url": "http://h/"}, "127.0.0.1", "rabbit://"},
		{backend.Values{}, "localhost", "must be an IP address"},
		{backend.Values{"engine_workers": -1}, "127.0.0.1", "at least 1"},
	} {
		s := backend.Spec{BindHost: tc.bind, Options: tc.o, Secret: func(string) {}}
		if err := New().Check(&s); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v", tc.o, err)
		}
	}
	// Defaults: the workers, the socket; the password of transport_url is a secret.
	var secrets []string
	s := backend.Spec{BindHost: "127.0.0.1", Options: backend.Values{"transport_url": "rabbit://u:pw9@h:5672/"},
		Secret: func(x string) { secrets = append(secrets, x) }}
	if err := New().Check(&s); err != nil || s.Options.Int("engine_workers") != DefaultEngineWorkers() ||
		s.Options.Str("podman_socket") == "" || len(secrets) != 1 || secrets[0] != "pw9" {
		t.Errorf("pod defaults: %+v %v %v", s.Options, secrets, err)
	}
}

func TestRenderPodPublishesMariaDBOnHostLoopback(t *testing.T) {
	o := podBackend(t, "/srv/x/heat-launcher", backend.Values{"image": "img:1", "engine_workers": 1})
	p := standardPorts()
	p.HostMySQL = 41234
	b, err := o.renderPod(p)
	if err != nil {
		t.Fatal(err)
	}
	var pod kPod
	if err := yaml.Unmarshal(b, &pod); err != nil {
		t.Fatal(err)
	}
	names := map[string]kContainer{}
	for _, c := range pod.Spec.Containers {
		names[c.Name] = c
	}
	db := names[CMariaDB]
	if len(db.Ports) != 1 || db.Ports[0].HostIP != "127.0.0.1" || db.Ports[0].HostPort != 41234 || db.Ports[0].ContainerPort != 3306 {
		t.Errorf("mariadb ports: %+v", db.Ports)
	}
	if cmd := strings.Join(db.Command, " "); !strings.Contains(cmd, "--bind-address=0.0.0.0") {
		t.Errorf("mariadb does not listen where podman forwards: %s", cmd)
	}
	engine := strings.Join(names[CHeatEngine].Command, " ")
	if i, j := strings.Index(engine, heatdir.RestorePending), strings.Index(engine, "db_sync"); i < 0 || j < 0 || i > j {
		t.Errorf("heat-engine does not wait for the restore before db_sync: %s", engine)
	}
	if sql := string(mariaDBInitSQL("pw", true)); !strings.Contains(sql, "'heat'@'%'") {
		t.Errorf("no account for the host: %s", sql)
	}

	// Host networking: MariaDB on the host's loopback at its free port, nothing published.
	o.S.Options[TransportURL.Name] = "rabbit://u:p@127.0.0.1:5672/"
	p = ports{MySQL: 40001, AMQP: 40002, EPMD: 40003, Dist: 40004, HostMySQL: 40001}
	b, _ = o.renderPod(p)
	pod = kPod{}
	yaml.Unmarshal(b, &pod)
	for _, c := range pod.Spec.Containers {
		if c.Name == CMariaDB && (len(c.Ports) != 0 || !strings.Contains(strings.Join(c.Command, " "), "--bind-address=127.0.0.1 --port=40001")) {
			t.Errorf("host-network mariadb: %+v", c)
		}
	}
	if sql := string(mariaDBInitSQL("pw", false)); strings.Contains(sql, "'%'") {
		t.Errorf("host-network account open to any address: %s", sql)
	}
}

func TestAnnotationOnlyWhenItFits(t *testing.T) {
	long := "/tmp/TestPodRestoreRoundTrip3391521894/001/overcloud/heat-launcher"
	o := podBackend(t, long, backend.Values{"image": "i", "engine_workers": 1})
	b, _ := o.renderPod(standardPorts())
	var pod kPod
	yaml.Unmarshal(b, &pod)
	if _, ok := pod.Metadata.Annotations[AnnotationDir]; ok {
		t.Errorf("a %d-character annotation (podman play kube refuses over 63)", len(long))
	}
	o = podBackend(t, "/srv/x/heat-launcher", backend.Values{"image": "i", "engine_workers": 1})
	b, _ = o.renderPod(standardPorts())
	pod = kPod{}
	yaml.Unmarshal(b, &pod)
	if pod.Metadata.Annotations[AnnotationDir] != o.Dir() {
		t.Errorf("annotations: %v", pod.Metadata.Annotations)
	}
}

// podBackend is a pod backend for heatDir with options o.
func podBackend(t *testing.T, heatDir string, o backend.Values) *Backend {
	t.Helper()
	d, err := heatdir.At(heatDir)
	if err != nil {
		t.Fatal(err)
	}
	s := &backend.Spec{Dir: d, HeatType: HeatType, APIPort: 8006, BindHost: "127.0.0.1", Timeout: time.Minute, LaunchID: "launch-1", Options: o}
	b := New().(*Backend)
	b.S = s
	return b
}
