package launch

import "github.com/ephemeral-heat/ephemeral-heat/internal/tuning"

// mergedExtra is our tuning (unless StockConf) plus the caller's extra settings.
func (o *Options) mergedExtra() map[string]map[string]string {
	return tuning.Apply(o.ExtraConf, o.StockConf)
}
