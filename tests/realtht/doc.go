// Package realtht owns the real tripleo-heat-templates stacks of a test
// run (issue 24, decision g), each created once on its own real native Heat
// with our tuned heat.conf, through our own heat_stack code
// (internal/stack). The wallaby overcloud of package tests/tht
// (Controller×1 + Compute×3, pre-provisioned servers) is shared: every test
// that needs a real-THT stack is an ordered step of TestRealTHT in
// realtht_test.go, working on the state the previous steps left (see steps
// there). TestRealTHTServices (services_test.go) creates three more, one
// per site of serviceSites: network isolation, a CephStorage node, the
// tree's environments for the services operators commonly add and (site-c)
// generated composable roles, for the export, the prechecks, the saved
// nodes, the scale-down's guard of the last nodes and config-download's
// differential test on them, and stacks deployed from their exports: a
// distributed compute site (dcn0, from site-a's) and a Nova cell (cell1,
// from site-c's cell export).
// The package has tests only.
package realtht
