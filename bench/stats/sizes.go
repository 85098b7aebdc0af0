package stats

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Sizes returns the corpus sizes a benchmark runs at: MNEMO_BENCH_SIZES
// (comma-separated, e.g. "10000,100000"), else def.
func Sizes(def ...int) ([]int, error) {
	v := os.Getenv("MNEMO_BENCH_SIZES")
	if v == "" {
		return def, nil
	}
	var sizes []int
	for _, f := range strings.Split(v, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("MNEMO_BENCH_SIZES: %q is not a positive size", f)
		}
		sizes = append(sizes, n)
	}
	return sizes, nil
}
