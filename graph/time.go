package graph

import "time"

// AsKnownAt is e as it stood at transaction time t (Filter.KnownAt): an
// edit decided after t was still pending then. The zero t is now.
func (e Edit) AsKnownAt(t time.Time) Edit {
	if t.IsZero() || e.Status == EditPending || !e.DecidedAt.After(t) {
		return e
	}
	e.Status, e.DecidedBy, e.DecidedAt = EditPending, "", time.Time{}
	return e
}
