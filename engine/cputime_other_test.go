//go:build !unix

package engine_test

import (
	"testing"
	"time"
)

// cpuTime is the process's CPU time where getrusage exists; elsewhere 0,
// and the benchmarks' *_cpu_ms metrics read 0.
func cpuTime(*testing.B) time.Duration { return 0 }
