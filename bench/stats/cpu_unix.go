//go:build unix

package stats

import (
	"syscall"
	"time"
)

// CPUTime is the CPU time (user + system) the process has used so far:
// what benchmarks report as cpu_ms beside the wall-clock percentiles, as
// the machine's load inflates it far less. 0 if getrusage fails.
func CPUTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
