package engine

import (
	"time"

	"github.com/mnemo-dev/mnemo/graph"
)

// TimeTravel reads memory as of a past time (docs/time.md). The zero value
// reads now.
type TimeTravel struct {
	// AsOf is valid time: memories valid at AsOf (valid_from <= AsOf <
	// valid_to), instead of valid now; expiry flags are judged at AsOf.
	AsOf time.Time
	// KnownAt is transaction time: what mnemo knew at KnownAt — memories
	// written by then, with the status, version, successor and approved
	// edits recorded by then (graph.Filter.KnownAt). An erasure is never
	// undone. The vector signal does not run (WarnKnownAtVectors).
	KnownAt time.Time
}

// WarnKnownAtVectors is the warning of a search that would have run the
// vector signal but reads as known at a past time: the vector index holds
// the embeddings of current versions only, so scoring then-current texts
// with it would rank (and filter) by text that did not exist then.
const WarnKnownAtVectors = "known_at: the vector signal was skipped, as the vector index holds current versions " +
	"only; results rank by the graph and keyword signals over the versions known then, and relevance is keyword " +
	"coverage alone, so the search does not abstain"

// check refuses a KnownAt after now: mnemo cannot have known what it has
// not recorded yet.
func (t TimeTravel) check(now time.Time) error {
	if t.KnownAt.After(now) {
		return &graph.FieldError{Field: "known_at", Message: "is in the future"}
	}
	return nil
}

// validAt is the instant validity is judged at: AsOf, else now.
func (t TimeTravel) validAt(now time.Time) time.Time {
	if !t.AsOf.IsZero() {
		return t.AsOf.UTC()
	}
	return now
}

// apply sets f's transaction time and, unless validity is not to be
// checked (include_expired without as_of), its valid time.
func (t TimeTravel) apply(f *graph.Filter, now time.Time, checkValidity bool) {
	if checkValidity || !t.AsOf.IsZero() {
		f.ValidAt = t.validAt(now)
	}
	if !t.KnownAt.IsZero() {
		f.KnownAt = t.KnownAt.UTC()
	}
}
