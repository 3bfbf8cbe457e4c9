package podheat

import "runtime"

func numCPU() int { return runtime.NumCPU() }
