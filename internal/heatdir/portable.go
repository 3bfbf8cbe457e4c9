package heatdir

import "strings"

// Portable says whether a backup of a working dir carries name (a path
// inside a heat_dir, slash-separated) to another place, and why not: the
// state of a Heat that runs or ran here (its launch record and lock, its
// database, a pod's datadir and markers) describes processes and files of
// this host, and the configuration every launch writes again names this
// heat_dir's location (heat.conf, heatrc, clouds.yaml, the token, the
// python plugins, a pod's spec and init files). What is left (the dumps
// with their sidecars, the logs, the marker) is what a relaunch elsewhere
// starts from.
func Portable(name string) (bool, string) {
	first, _, _ := strings.Cut(name, "/")
	switch first {
	case RecordFile, LockFile, MariaDBDir, RunDir:
		return false, "live Heat state"
	case HeatConf, APIPaste, TokenFile, CloudsYAML, HeatRC, PythonDir, PodYAML, MariaDBInit, RabbitConf:
		return false, "written again by every launch, naming this location"
	}
	if first == SQLiteFile || strings.HasPrefix(first, SQLiteFile+"-") {
		return false, "live database"
	}
	return true, ""
}
