package stats

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestPercentiles(t *testing.T) {
	var ds []time.Duration
	for i := 100; i >= 1; i-- { // unsorted on purpose
		ds = append(ds, time.Duration(i)*time.Millisecond)
	}
	l := Percentiles(ds)
	assert.Equal(t, Latency{N: 100, P50: 50 * time.Millisecond, P95: 95 * time.Millisecond, P99: 99 * time.Millisecond}, l)
	assert.Equal(t, 100*time.Millisecond, ds[0], "the input is not reordered")
	assert.Equal(t, Latency{N: 1, P50: 7, P95: 7, P99: 7}, Percentiles([]time.Duration{7}))
	assert.Equal(t, Latency{}, Percentiles(nil))
	assert.Equal(t, time.Duration(2), Percentile([]time.Duration{1, 2, 3}, 50), "nearest rank: ceil(1.5) = 2nd")
}

type metrics map[string]float64

func (m metrics) ReportMetric(n float64, unit string) { m[unit] = n }

func TestReport(t *testing.T) {
	m := metrics{}
	Report(m, []time.Duration{3 * time.Millisecond, 1500 * time.Microsecond, 2 * time.Millisecond})
	assert.Equal(t, metrics{"p50_ms": 2, "p95_ms": 3, "p99_ms": 3}, m)
	empty := metrics{}
	Report(empty, nil)
	assert.Empty(t, empty, "nothing timed, nothing reported")
}

// TestSizes: MNEMO_BENCH_SIZES, comma-separated, else the default; a size
// that is not a positive number is an error naming the variable.
func TestSizes(t *testing.T) {
	for _, c := range []struct {
		env     string
		want    []int
		wantErr bool
	}{
		{"", []int{10}, false},
		{"100000", []int{100000}, false},
		{" 1000, 20000 ", []int{1000, 20000}, false},
		{"10k", nil, true},
		{"0", nil, true},
	} {
		t.Run(c.env, func(t *testing.T) {
			t.Setenv("MNEMO_BENCH_SIZES", c.env)
			got, err := Sizes(10)
			if c.wantErr {
				if err == nil || !strings.Contains(err.Error(), "MNEMO_BENCH_SIZES") {
					t.Fatalf("Sizes() = %v, %v; want an error naming MNEMO_BENCH_SIZES", got, err)
				}
				return
			}
			if err != nil || !slices.Equal(got, c.want) {
				t.Fatalf("Sizes() = %v, %v; want %v", got, err, c.want)
			}
		})
	}
}
