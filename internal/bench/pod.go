package bench

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/ephemeral-heat/ephemeral-heat/internal/launch"
	"github.com/ephemeral-heat/ephemeral-heat/internal/launch/backend"
	"github.com/ephemeral-heat/ephemeral-heat/internal/launch/pod"
	"github.com/ephemeral-heat/ephemeral-heat/internal/launch/podheat"
	"github.com/ephemeral-heat/ephemeral-heat/internal/proc"
)

// podService makes sure a podman service answers: the default socket, or
// one this run starts (stopped by the returned function).
func podService(ctx context.Context, work string) (socket string, stop func(), err error) {
	if _, err := podheat.Connect(ctx, ""); err == nil {
		return podheat.DefaultSocket(), func() {}, nil
	}
	path := filepath.Join(work, "podman.sock")
	socket = "unix://" + path
	cmd := exec.Command("podman", "system", "service", "--time=0", socket)
	cmd.Stdout, cmd.Stderr = nil, nil
	if err := cmd.Start(); err != nil {
		return "", nil, fmt.Errorf("starting podman system service (apt-get install -y podman runc catatonit): %w", err)
	}
	stop = func() { cmd.Process.Kill(); cmd.Wait() }
	deadline := time.Now().Add(20 * time.Second)
	for {
		if _, err := podheat.Connect(ctx, socket); err == nil {
			return socket, stop, nil
		}
		if time.Now().After(deadline) {
			stop()
			return "", nil, fmt.Errorf("podman system service on %s did not answer within 20 s", socket)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// LaunchPod starts a pod Heat (heat-api, engines, its own MariaDB and
// RabbitMQ) in a fresh directory under base, with extra heat.conf settings
// over ours.
func LaunchPod(ctx context.Context, base, socket string, workers int, extra map[string]map[string]string) (*Heat, error) {
	port, err := proc.FreePort()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp(base, "pod-")
	if err != nil {
		return nil, err
	}
	o := launch.Options{State: launch.Started, HeatType: launch.Pod, HeatDir: filepath.Join(dir, "heat-launcher"),
		APIPort: port, Timeout: 300 * time.Second, ExtraConf: extra,
		Backend: backend.Values{pod.EngineWorkers.Name: workers, podheat.Image.Name: podheat.DefaultImage, podheat.Socket.Name: socket}}
	out, err := launch.Run(ctx, o)
	if err != nil {
		h := &Heat{Opts: o}
		h.Close()
		return nil, err
	}
	return &Heat{Opts: o, Endpoint: out.Endpoint}, nil
}

// PodRows measures test t on a pod with 1 and 2 engine workers against
// native heat-all + sqlite, all with our heat.conf, interleaved in the same run.
func PodRows(ctx context.Context, env *Env, t ScaleTest, rounds int) []Row {
	names := []string{"scale_" + t.Key + "_50_pod_mysql_1w", "scale_" + t.Key + "_50_pod_mysql_2w"}
	unavailable := func(why string) []Row {
		var rows []Row
		for _, n := range names {
			rows = append(rows, Unavailable(n, t.Desc+" on a pod", "pod", "native heat-all, sqlite, our heat.conf", why))
		}
		return rows
	}
	base, err := os.MkdirTemp(env.Work, "pod-")
	if err != nil {
		return unavailable(err.Error())
	}
	defer os.RemoveAll(base)
	socket, stop, err := podService(ctx, base)
	if err != nil {
		return unavailable(err.Error())
	}
	defer stop()
	native := Launchers[0]
	pod := func(workers int) Launcher {
		return Launcher{Desc: fmt.Sprintf("pod, %d engine worker(s), MySQL", workers),
			Launch: func(ctx context.Context, base string, _ HeatConfig) (*Heat, error) {
				return LaunchPod(ctx, base, socket, workers, nil)
			}}
	}
	vs := []Variant{
		{Name: "native", Run: func(ctx context.Context) (time.Duration, error) {
			return CreateOnce(ctx, native, base, env.Templates, Ours, t)
		}},
		{Name: "pod1", Run: func(ctx context.Context) (time.Duration, error) {
			return CreateOnce(ctx, pod(1), base, env.Templates, Ours, t)
		}},
		{Name: "pod2", Run: func(ctx context.Context) (time.Duration, error) {
			return CreateOnce(ctx, pod(2), base, env.Templates, Ours, t)
		}},
	}
	s := Interleave(ctx, env.Log, "pod_"+t.Key, rounds, vs)
	note := fmt.Sprintf("create time, POST to CREATE_COMPLETE; fresh Heat per run (pod start not timed); %d interleaved rounds; "+
		"both run our heat.conf (package tuning; the sqlite settings do not apply to the pod's MySQL)", rounds)
	return []Row{
		NewRow(names[0], t.Desc+" on a pod (heat-api + 1 heat-engine, MariaDB, RabbitMQ)", "pod, 1 engine worker", "native heat-all, sqlite, our heat.conf", s["pod1"], s["native"], note),
		NewRow(names[1], t.Desc+" on a pod (heat-api + 2 heat-engines, MariaDB, RabbitMQ)", "pod, 2 engine workers", "native heat-all, sqlite, our heat.conf", s["pod2"], s["native"], note),
	}
}
