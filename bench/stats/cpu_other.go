//go:build !unix

package stats

import "time"

// CPUTime is the process's CPU time where getrusage exists; elsewhere 0,
// and the benchmarks' cpu_ms metrics read 0.
func CPUTime() time.Duration { return 0 }
