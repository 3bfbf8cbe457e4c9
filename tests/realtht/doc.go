// Package realtht owns the one real tripleo-heat-templates stack of a test
// run (issue 24, decision g): the wallaby overcloud of package tests/tht
// (Controller×1 + Compute×3, pre-provisioned servers) is created once on a
// real native Heat with our tuned heat.conf, through our own heat_stack code
// (internal/stack), and every test that needs a real-THT stack is an ordered
// step of TestRealTHT in realtht_test.go, working on the state the previous
// steps left (see steps there). The package has tests only.
package realtht
