package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/ephemeral-heat/ephemeral-heat/internal/tuning"
)

// HeatConfig is a heat.conf to measure: TripleO's stock ephemeral one
// (Stock) or ours, plus extra settings.
type HeatConfig struct {
	Name  string
	Stock bool
	Extra map[string]map[string]string
}

// Stock is TripleO's stock ephemeral heat.conf; Ours is our default.
var (
	Stock = HeatConfig{Name: "stock", Stock: true}
	Ours  = HeatConfig{Name: "ours"}
)

// Launcher starts one kind of Heat for a measurement.
type Launcher struct {
	// Suffix is appended to row names ("" for native heat-all on sqlite).
	Suffix string
	// Desc says what runs, for the table.
	Desc   string
	Launch func(ctx context.Context, base string, c HeatConfig) (*Heat, error)
}

// Launchers are the Heat kinds the scale tests run on. Hook: the pod
// launcher (heat-api + heat-engine on MySQL + RabbitMQ) appends entries
// with Suffix "_pod_mysql_1w" and "_pod_mysql_2w" (1 and 2 engine workers)
// once it can be launched from here; every scale row is then measured on
// each launcher.
var Launchers = []Launcher{{
	Desc: "native heat-all, sqlite",
	Launch: func(ctx context.Context, base string, c HeatConfig) (*Heat, error) {
		return LaunchNative(ctx, base, c.Extra, c.Stock)
	},
}}

// ScaleTest is a stack to create.
type ScaleTest struct {
	Key      string // row name part: copies, group
	Desc     string
	Template string // file name in the templates dir
	Envs     []string
}

// ScaleTests are test (a) and (b).
var ScaleTests = []ScaleTest{
	{Key: "copies", Desc: "(a) one stack, 50 copies of DeployedServer + StructuredConfig + StructuredDeployment", Template: "copies.yaml"},
	{Key: "group", Desc: "(b) ResourceGroup of 50 provider-template nodes (3 resources each)", Template: "group.yaml", Envs: []string{"group-env.yaml"}},
}

// CreateOnce launches a fresh Heat, creates the test's stack and stops Heat:
// the create time (POST until CREATE_COMPLETE) is returned.
func CreateOnce(ctx context.Context, l Launcher, base, tdir string, c HeatConfig, t ScaleTest) (time.Duration, error) {
	h, err := l.Launch(ctx, base, c)
	if err != nil {
		return 0, fmt.Errorf("launch: %w", err)
	}
	defer h.Close()
	var envs []string
	for _, e := range t.Envs {
		envs = append(envs, filepath.Join(tdir, e))
	}
	return CreateTime(ctx, h.Endpoint, "bench-"+t.Key, filepath.Join(tdir, t.Template), envs, nil)
}

// TuningConfigs are, for each of our create-time settings, the stock
// heat.conf plus that setting alone ("heat_tuning_NAME") and our heat.conf
// without it ("heat_tuning_NAME_left_out"): the settings interact, so both
// are measured.
func TuningConfigs() []HeatConfig {
	var out []HeatConfig
	all := tuning.Settings()
	for _, s := range all {
		if s.Effect != tuning.EffectCreate {
			continue
		}
		var others map[string]map[string]string
		for _, o := range all {
			if o.Name != s.Name {
				others = tuning.Merge(others, o.Conf)
			}
		}
		out = append(out, HeatConfig{Name: "heat_tuning_" + s.Name, Stock: true, Extra: s.Conf},
			HeatConfig{Name: "heat_tuning_" + s.Name + LeftOut, Stock: true, Extra: others})
	}
	return out
}

// LeftOut ends the name of a row that measures our heat.conf without one setting.
const LeftOut = "_left_out"

// ScaleRows measures test t with our defaults against the stock heat.conf
// on every launcher, interleaved; with tuning, each setting alone on top of
// stock is measured in the same rounds (against the same stock samples).
func ScaleRows(ctx context.Context, env *Env, t ScaleTest, rounds int, withTuning bool) []Row {
	var rows []Row
	for _, l := range Launchers {
		base, err := os.MkdirTemp(env.Work, "scale-")
		if err != nil {
			return append(rows, Unavailable("scale_"+t.Key+"_50"+l.Suffix, t.Desc, "ours", "stock", err.Error()))
		}
		cfgs := []HeatConfig{Ours, Stock}
		if withTuning {
			cfgs = append(cfgs, TuningConfigs()...)
		}
		var vs []Variant
		for _, c := range cfgs {
			c := c
			vs = append(vs, Variant{Name: c.Name, Run: func(ctx context.Context) (time.Duration, error) {
				return CreateOnce(ctx, l, base, env.Templates, c, t)
			}})
		}
		s := Interleave(ctx, env.Log, "scale_"+t.Key+l.Suffix, rounds, vs)
		os.RemoveAll(base)
		rows = append(rows, NewRow("scale_"+t.Key+"_50"+l.Suffix, t.Desc+" on "+l.Desc,
			"our heat.conf", "TripleO stock heat.conf", s["ours"], s["stock"],
			fmt.Sprintf("create time, POST to CREATE_COMPLETE (client polls every 200 ms); fresh Heat per run; %d interleaved rounds", rounds)))
		if withTuning {
			for _, s2 := range tuning.Settings() {
				if s2.Effect != tuning.EffectCreate {
					continue
				}
				name := "heat_tuning_" + s2.Name
				rows = append(rows, NewRow(name+l.Suffix, "test (b) with only "+s2.Title+" on top of stock",
					"stock + "+s2.Title, "TripleO stock heat.conf", s[name], s["stock"], s2.What),
					NewRow(name+LeftOut+l.Suffix, "test (b) with our heat.conf against ours without "+s2.Title,
						"our heat.conf", "ours without "+s2.Title, s["ours"], s[name+LeftOut],
						"what this setting adds to the others: the same samples of ours as scale_"+t.Key+"_50"))
			}
		}
	}
	return rows
}
