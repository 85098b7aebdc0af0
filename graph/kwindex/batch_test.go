package kwindex

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
			if got := Refill(c.need, c.loaded, c.passed, c.last, c.round); got != c.want {
				t.Fatalf("Refill(%d, %d, %d, %d, %d) = %d, want %d", c.need, c.loaded, c.passed, c.last, c.round, got, c.want)
			}
		})
	}
}

// TestPassRates: the keyword filter's first batch is the limit for a
// filter never seen or passing everything, and otherwise what lets limit
// matches pass at the rate seen, three standard deviations over; the rate
// moves a quarter of the way to each search's.
func TestPassRates(t *testing.T) {
	r := NewPassRates()
	steps := []struct {
		name           string
		loaded, passed int // observed before firstBatch; 0 loaded: nothing observed
		want           int
	}{
		{"never seen", 0, 0, 100},
		{"passed everything", 100, 100, 100},
		{"8% hidden: a quarter of the way", 100, 92, 107}, // rate 0.98: (100 + 3*sqrt(2)) / 0.98 = 106.4
		{"kept until the next search", 0, 0, 107},
	}
	for _, s := range steps {
		if s.loaded > 0 {
			r.Observe("f", s.loaded, s.passed)
		}
		if got := r.FirstBatch("f", 100); got != s.want {
			t.Fatalf("%s: firstBatch = %d, want %d", s.name, got, s.want)
		}
	}
	for _, c := range []struct {
		name           string
		loaded, passed int
		limit, want    int
	}{
		{"half passing", 200, 100, 100, 243}, // (100 + 3*sqrt(50)) / 0.5
		{"nothing passing is capped", 100, 0, 100, 4096},
		{"small limits load 32", 10, 9, 5, 32},
		{"small limits that passed everything load the limit", 10, 10, 4, 4},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := NewPassRates()
			r.Observe("g", c.loaded, c.passed)
			if got := r.FirstBatch("g", c.limit); got != c.want {
				t.Fatalf("firstBatch = %d, want %d", got, c.want)
			}
		})
	}
	if got := r.FirstBatch("other", 100); got != 100 {
		t.Fatalf("a filter never seen borrows no rate: firstBatch = %d, want 100", got)
	}
}
