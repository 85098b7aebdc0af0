package kwindex

import (
	"math"
	"sync"
)

// Refill sizes the next keyword filter batch when need more matches must
// pass: the need over the pass rate seen so far, and half again. A filter
// that hides a few of the best matches (approved edits, archived
// memories) then costs a few dozen more rows, not twice the limit. From
// the third batch on it at least doubles, so that a filter whose pass rate
// falls with rank, or passes nothing, is walked in a logarithmic number of
// statements. Between 32 and 4096 rows.
func Refill(need, loaded, passed, last, round int) int {
	n := 2 * last
	if passed > 0 {
		est := need * loaded / passed
		est += est / 2
		if round == 0 {
			n = est
		} else {
			n = max(est, n)
		}
	}
	return min(max(n, 32), 4096)
}

// PassRates keeps, per keyword filter (a store's key of its filter), the share of ranked
// matches the filter passed in earlier searches (a moving average), so
// that the first batch of the next search is the size that lets limit
// matches pass: a tenant whose approved edits hide 2% of its memories
// hid one of the best 100 matches in most searches, and the second
// statement that followed cost more than loading a few more rids in the
// first one (docs/curation.md, "Cost of the effective view"). It holds
// no memory, only a rate; past maxPassRates filters it starts over.
type PassRates struct {
	mu sync.Mutex
	m  map[string]float64
}

const maxPassRates = 4096

// NewPassRates returns rates with none seen.
func NewPassRates() *PassRates { return &PassRates{m: map[string]float64{}} }

// FirstBatch is the first batch for limit matches under the filter key: n
// such that the matches passing, Binomial(n, p) at the rate p seen, fall
// short of limit with a chance of about one in a thousand (the normal
// approximation: mean n*p, three standard deviations). The limit when
// the filter passed everything or was never seen; between 32 and 4096,
// except that a filter that passed every row it was shown loads just the
// limit however small: the write path's near-duplicate lookup asks for 4
// under a filter that hides nothing, and loading 32 rows cost it a fifth
// of its time (docs/benchmarks.md, "Ingest").
func (r *PassRates) FirstBatch(key string, limit int) int {
	r.mu.Lock()
	p, ok := r.m[key]
	r.mu.Unlock()
	n := float64(limit)
	if ok && p < 1 {
		p = max(p, 1.0/4096)
		n = (n + 3*math.Sqrt(n*(1-p))) / p
	}
	floor := 32
	if ok && p >= 1 {
		floor = limit
	}
	return min(max(int(math.Ceil(n)), floor), 4096)
}

// Observe folds a search's pass rate (passed of loaded) into key's: the
// first search's rate, then a quarter of each new one.
func (r *PassRates) Observe(key string, loaded, passed int) {
	if loaded == 0 {
		return
	}
	rate := float64(passed) / float64(loaded)
	r.mu.Lock()
	defer r.mu.Unlock()
	old, ok := r.m[key]
	if !ok && len(r.m) >= maxPassRates {
		clear(r.m)
	}
	if ok {
		rate = old + (rate-old)/4
	}
	r.m[key] = rate
}
