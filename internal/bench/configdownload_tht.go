package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/ephemeral-heat/ephemeral-heat/internal/configdownload"
	"github.com/ephemeral-heat/ephemeral-heat/internal/heatapi"
	"github.com/ephemeral-heat/ephemeral-heat/tests/tht"
	"github.com/ephemeral-heat/ephemeral-heat/tests/tripleocommon"
)

// ConfigDownloadTHTRow renders the real tripleo-heat-templates overcloud
// (tests/tht's wallaby workload, Controller×1 + Compute×2, created once on
// our native Heat) with config_download and with tripleo-common's own
// config download + inventory (tests/tripleocommon's harness), each round
// into a fresh directory. Both sides include their Heat API calls; ours
// also its git commit; tripleo-common's is timed inside its process
// (interpreter start and imports excluded; its git commit included).
func ConfigDownloadTHTRow(ctx context.Context, env *Env, rounds int) Row {
	const name, title = "config_download_tht", "config-download of the real THT overcloud (Controller + 2 Computes), Heat API calls included"
	cand := "config_download (in process: fetch, render, atomic write, git commit)"
	base := "tripleo-common stable/wallaby get_overcloud_config + generate_tripleo_ansible_inventory (in process: interpreter start and imports excluded)"
	if err := tripleocommon.RequirePython(); err != nil {
		return Unavailable(name, title, cand, base, err.Error())
	}
	dir, err := os.MkdirTemp(env.Work, "tht-")
	if err != nil {
		return Unavailable(name, title, cand, base, err.Error())
	}
	defer os.RemoveAll(dir)
	w, err := tht.Generate(tht.Options{WorkDir: filepath.Join(dir, "overcloud-deploy"), ControllerCount: 1, ComputeCount: 2})
	if err != nil {
		return Unavailable(name, title, cand, base, "generating the THT workload: "+err.Error())
	}
	tc, err := tripleocommon.ExtractTripleoCommonFrom(w.TripleoCommonSource, filepath.Join(dir, "tripleo-common"))
	if err != nil {
		return Unavailable(name, title, cand, base, err.Error())
	}
	h, err := LaunchNative(ctx, dir, nil, false)
	if err != nil {
		return Unavailable(name, title, cand, base, "launching Heat: "+err.Error())
	}
	defer h.Close()
	created, err := CreateTime(ctx, h.Endpoint, w.StackName, w.Template, w.EnvironmentFiles, w.Parameters)
	if err != nil {
		return Unavailable(name, title, cand, base, "creating the THT stack: "+err.Error())
	}
	fmt.Fprintf(env.Log, "  config_download_tht: stack created in %.0fs\n", created.Seconds())
	c, err := heatapi.NewNoAuth(h.Endpoint)
	if err != nil {
		return Unavailable(name, title, cand, base, err.Error())
	}
	var files int
	var wall Samples
	n := 0
	fresh := func(side string) string {
		n++
		return filepath.Join(dir, fmt.Sprintf("%s-%d", side, n), w.StackName)
	}
	s := Interleave(ctx, env.Log, name, rounds, []Variant{
		{Name: "go", Run: func(ctx context.Context) (time.Duration, error) {
			start := time.Now()
			out, err := configdownload.Run(ctx, c, configdownload.RunOptions{Stack: w.StackName, Dest: fresh("ours"), Commit: true})
			files = len(out.Files.Added)
			return time.Since(start), err
		}},
		{Name: "python", Run: func(ctx context.Context) (time.Duration, error) {
			r, err := tripleocommon.RunReference(ctx, tc, h.Endpoint, w.StackName, fresh("tripleo-common"),
				configdownload.DefaultSSHNetwork, configdownload.DefaultSSHUser)
			wall = append(wall, r.Wall)
			return time.Duration((r.DownloadSeconds + r.InventorySeconds) * float64(time.Second)), err
		}},
	})
	wm, _, _ := wall.stats()
	note := fmt.Sprintf("stack: %d hosts, created once in %.0f s; %d files and directories written by ours; the whole python3 process took %.2f s (median); "+
		"the stack has no software deployment, so ours skips the nested resource listing (about 10 s here) that tripleo-common always makes",
		len(w.Hosts), created.Seconds(), files, wm)
	return NewRow(name, title, cand, base, s["go"], s["python"], note)
}
