package tripleocommon

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/ephemeral-heat/ephemeral-heat/internal/heatapi"
	"github.com/ephemeral-heat/ephemeral-heat/internal/stack"
)

// SampleDir is samples/overcloud, the sample overcloud the parity test and
// tests/integration deploy.
func SampleDir() string { return filepath.Join(RepoRoot(), "samples", "overcloud") }

// DeploySample creates or updates stack name of the sample overcloud
// (SampleDir's overcloud.yaml with its resource registry, then envs, paths
// relative to SampleDir) with params and waits for it, 10 minutes at most.
// logf gets Heat's warnings and what was done to the stack in how long.
func DeploySample(ctx context.Context, c *heatapi.Client, name string, envs []string, params map[string]any, logf func(string, ...any)) error {
	dir := SampleDir()
	files := []string{filepath.Join(dir, "overcloud-resource-registry.yaml")}
	for _, e := range envs {
		files = append(files, filepath.Join(dir, e))
	}
	req, err := stack.Prepare(stack.Options{Name: name, Template: filepath.Join(dir, "overcloud.yaml"),
		EnvironmentFiles: files, Parameters: params, Timeout: 10, Wait: true,
		Warn: func(f string, a ...any) { logf("warning: "+f, a...) }})
	if err != nil {
		return fmt.Errorf("preparing stack %s: %w", name, err)
	}
	start := time.Now()
	out, err := req.Run(ctx, c)
	if err != nil {
		return fmt.Errorf("stack %s: %w (%s %v)", name, err, out.Msg, out.Failures)
	}
	if out.Failed {
		return fmt.Errorf("stack %s: %s %v", name, out.Msg, out.Failures)
	}
	logf("stack %s: %s in %s", name, out.Action, time.Since(start).Round(time.Second))
	return nil
}
