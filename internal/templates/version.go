package templates

import (
	"fmt"
	"sort"
	"strings"
)

// Version keys and the versions Heat 19 (Zed) registers (the heat.templates
// entry points of openstack-heat).
const (
	keyHOT = "heat_template_version"
	keyAWS = "AWSTemplateFormatVersion"
	keyCFN = "HeatTemplateFormatVersion"
)

var versionKeys = []string{keyHOT, keyAWS, keyCFN}

var knownVersions = map[string][]string{
	keyHOT: {
		"2013-05-23", "2014-10-16", "2015-04-30", "2015-10-15", "2016-04-08",
		"2016-10-14", "2017-02-24", "2017-09-01", "2018-03-02", "2018-08-31",
		"2021-04-16", "newton", "ocata", "pike", "queens", "rocky", "wallaby",
	},
	keyAWS: {"2010-09-09"},
	keyCFN: {"2012-12-12"},
}

// hasVersionKey is heatclient's test for "this file is a template": a
// mapping with at least one of the version keys.
func hasVersionKey(tpl map[string]any) bool {
	for _, k := range versionKeys {
		if _, ok := tpl[k]; ok {
			return true
		}
	}
	return false
}

// checkVersion requires exactly one version key with a version Heat knows,
// as the Heat engine does (heat.engine.template.get_version); name is the
// file, for the message.
func checkVersion(tpl map[string]any, name string) error {
	var present []string
	for _, k := range versionKeys {
		if _, ok := tpl[k]; ok {
			present = append(present, k)
		}
	}
	switch len(present) {
	case 0:
		return fmt.Errorf("%s: not a Heat template: no version key; add \"heat_template_version: 2021-04-16\" (HOT) or \"AWSTemplateFormatVersion: 2010-09-09\" (CFN) at the top", name)
	case 1:
	default:
		return fmt.Errorf("%s: ambiguous template version: it has %s; keep exactly one", name, strings.Join(present, " and "))
	}
	key := present[0]
	v, ok := tpl[key].(string)
	if !ok {
		return fmt.Errorf("%s: %s must be a version string such as %q, not %v", name, key, knownVersions[key][0], tpl[key])
	}
	for _, known := range knownVersions[key] {
		if v == known {
			return nil
		}
	}
	accepted := append([]string(nil), knownVersions[key]...)
	sort.Strings(accepted)
	return fmt.Errorf("%s: unknown %s %q; Heat accepts %s", name, key, v, strings.Join(accepted, ", "))
}
