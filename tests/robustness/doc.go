// Package robustness is the fault and bad-input suite of the collection's
// modules (make test runs it): each case runs a module binary built from
// this checkout, as Ansible does (one JSON arguments file), in a sandbox
// directory, with a timeout and a memory bound, and asserts one JSON result,
// failed: true, a message naming the parameter or file and what is wrong,
// nothing changed outside the sandbox (modes, names) nor inside it on a
// refusal, and no process left behind. The cases are the faults of issue 19
// and the bad values every module's --help implies (module.BadInputs). Most
// need no Heat: the modules refuse before they would contact it.
package robustness
