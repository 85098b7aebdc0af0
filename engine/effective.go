package engine

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/mnemo-dev/mnemo/graph"
)

// Ranking and confidence adjustments of the effective view. docs/search.md
// documents them.
const (
	// Importance prior: the fused score is multiplied by
	// importanceBase + importanceSpan*importance (0.75 .. 1.25; 1 at the
	// default importance 0.5), so an attenuated memory ranks lower.
	importanceBase = 0.75
	importanceSpan = 0.5
	// Score factors for memories that are no longer current.
	supersededFactor = 0.5
	archivedFactor   = 0.75

	// Confidence penalties.
	penaltyOlderVersion = 0.25 // superseded, or an older version than the memory's newest
	penaltyExpired      = 0.30 // valid_to has passed (only when expired memories were asked for)
	penaltyExpiring     = 0.10 // valid_to within expiringWindow
	penaltyInferred     = 0.10 // proposed or produced by an agent rather than stated
	expiringWindow      = 7 * 24 * time.Hour
)

// inferredActors are provenance actor types whose versions were inferred by
// a program rather than stated by a person or ingested from a source.
var inferredActors = []string{"agent", "model", "llm", "inferred"}

// effectiveView applies approved edits (foldEdits: amend replaces text and
// importance, attenuate lowers importance; retract, quarantine and block —
// which the store already hides — are dropped again here as a second line), the
// importance prior and the penalties for superseded and archived memories,
// and orders every superseded memory after its successor.
func (e *Engine) effectiveView(ctx context.Context, q searchPlan, hs []*hit) ([]*hit, error) {
	if len(hs) == 0 {
		return hs, nil
	}
	if err := e.applyEdits(ctx, q.f, hs); err != nil {
		return nil, err
	}
	hs = slices.DeleteFunc(hs, func(h *hit) bool { return h == nil || h.mem.ID == "" })
	for _, h := range hs {
		factor := importanceBase + importanceSpan*h.mem.Importance
		switch h.mem.Status {
		case graph.StatusSuperseded:
			factor *= supersededFactor
		case graph.StatusArchived:
			factor *= archivedFactor
		}
		h.score = scaled(h.score, factor)
		h.norm = min(h.norm*factor, 1)
	}
	sortHits(hs)
	return successorsFirst(hs), nil
}

// scaled applies a prior factor to a fused score so that a factor below 1
// always lowers it: z-score fusion gives negative scores, which a plain
// product would raise (an attenuated memory ranked higher).
func scaled(score, factor float64) float64 {
	if score < 0 {
		return score / factor
	}
	return score * factor
}

// applyEdits reads the approved edits on hs and applies them (foldEdits
// states the precedence). A hidden hit is zeroed (its memory id cleared)
// for the caller to drop.
func (e *Engine) applyEdits(ctx context.Context, f graph.Filter, hs []*hit) error {
	ids := make([]string, 0, len(hs))
	for _, h := range hs {
		if h.mem.ID != "" {
			ids = append(ids, h.mem.ID)
		}
	}
	if len(ids) == 0 || e.caps.edits == nil { // no Edits: no edit was ever approved
		return nil
	}
	edits, err := e.caps.edits.ListEdits(ctx, f, graph.EditQuery{MemoryIDs: ids, Statuses: []graph.EditStatus{graph.EditApproved}})
	if err != nil {
		return fmt.Errorf("list edits: %w", err)
	}
	if len(edits) == 0 {
		return nil
	}
	byTarget := make(map[string][]graph.Edit, len(edits))
	for _, ed := range edits {
		byTarget[ed.TargetMemoryID] = append(byTarget[ed.TargetMemoryID], ed)
	}
	for _, h := range hs {
		eds := byTarget[h.mem.ID]
		if h.mem.ID == "" || len(eds) == 0 {
			continue
		}
		st := foldEdits(h.mem, eds, f)
		if st.Hidden {
			h.mem.ID = ""
			continue
		}
		h.amended, h.mem.Importance = st.Content, st.Importance
		h.edits = append(h.edits, st.Applied...)
	}
	return nil
}

// successorsFirst moves every superseded hit whose successor is also present
// right after that successor.
func successorsFirst(hs []*hit) []*hit {
	present := make(map[string]bool, len(hs))
	for _, h := range hs {
		present[h.mem.ID] = true
	}
	waiting := map[string][]*hit{} // successor id -> hits to emit after it
	out := make([]*hit, 0, len(hs))
	emitted := map[string]bool{}
	var emit func(h *hit)
	emit = func(h *hit) {
		out = append(out, h)
		emitted[h.mem.ID] = true
		for _, w := range waiting[h.mem.ID] {
			emit(w)
		}
		delete(waiting, h.mem.ID)
	}
	for _, h := range hs {
		if s := h.mem.SupersededBy; s != "" && present[s] && !emitted[s] {
			waiting[s] = append(waiting[s], h)
			continue
		}
		emit(h)
	}
	for _, h := range hs { // a cycle would leave hits waiting: emit them as they came
		if !emitted[h.mem.ID] {
			out = append(out, h)
			emitted[h.mem.ID] = true
		}
	}
	return out
}

// confidence is a result's confidence in [0, 1]: its relevance
// (relevance.go), absolute, so it means the same in every query, minus the
// penalties that apply (see the penalty constants), with the flags that
// explain them.
func confidence(h *hit, now time.Time) (float64, []string) {
	c := h.relevance
	var flags []string
	switch {
	case h.mem.Status == graph.StatusSuperseded:
		c -= penaltyOlderVersion
		flags = append(flags, "superseded")
	case h.hasVersion && h.version.Number > 0 && h.version.Number < h.mem.VersionCount:
		c -= penaltyOlderVersion
		flags = append(flags, "older_version")
	}
	if h.mem.Status == graph.StatusArchived {
		flags = append(flags, "archived")
	}
	if to := h.mem.ValidTo; !to.IsZero() {
		switch {
		case !to.After(now):
			c -= penaltyExpired
			flags = append(flags, "expired")
		case to.Sub(now) <= expiringWindow:
			c -= penaltyExpiring
			flags = append(flags, "expiring")
		}
	}
	if h.mem.SourceKind == graph.SourceProposed || slices.Contains(inferredActors, strings.ToLower(h.version.Provenance.ActorType)) {
		c -= penaltyInferred
		flags = append(flags, "inferred")
	}
	return clamp01(c), flags
}

func clamp01(x float64) float64 { return max(0, min(1, x)) }
