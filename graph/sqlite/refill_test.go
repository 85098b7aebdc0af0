package sqlite

import "testing"

// TestRefill: the keyword filter's next batch follows the pass rate seen
// so far, doubles from the third batch on or when nothing passed, and
// stays within 32 and 4096 rows.
func TestRefill(t *testing.T) {
	for _, c := range []struct {
		name                              string
		need, loaded, passed, last, round int
		want                              int
	}{
		{"a few hidden of the first batch", 8, 100, 92, 100, 0, 32},
		{"half hidden", 50, 100, 50, 100, 0, 150},
		{"nothing passed doubles", 100, 100, 0, 100, 0, 200},
		{"third batch at least doubles", 5, 132, 120, 32, 1, 64},
		{"rare passes capped", 100, 4096, 1, 4096, 3, 4096},
		{"estimate above doubling", 90, 300, 30, 100, 1, 1350},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := refill(c.need, c.loaded, c.passed, c.last, c.round); got != c.want {
				t.Fatalf("refill(%d, %d, %d, %d, %d) = %d, want %d", c.need, c.loaded, c.passed, c.last, c.round, got, c.want)
			}
		})
	}
}
