package engine

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/mnemo-dev/mnemo/graph"
)

// TestFoldEdits is the precedence of docs/curation.md, one rule a case.
func TestFoldEdits(t *testing.T) {
	x := func(v float64) *float64 { return &v }
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	n := 0
	ed := func(kind graph.EditKind, mod func(e *graph.Edit)) graph.Edit {
		n++
		e := graph.Edit{ID: string(rune('a' + n)), Kind: kind, Status: graph.EditApproved, TargetMemoryID: "m",
			DecidedAt: t0.Add(time.Duration(n) * time.Minute)}
		if mod != nil {
			mod(&e)
		}
		return e
	}
	content := func(s string) func(e *graph.Edit) { return func(e *graph.Edit) { e.Content = s } }
	imp := func(v float64) func(e *graph.Edit) { return func(e *graph.Edit) { e.Importance = x(v) } }
	delta := func(v float64) func(e *graph.Edit) { return func(e *graph.Edit) { e.Delta = x(v) } }
	tests := []struct {
		name       string
		edits      []graph.Edit
		f          graph.Filter
		hidden     bool
		text       string // "" means the version's own
		importance float64
		applied    []string
	}{
		{"no edit", nil, graph.Filter{}, false, "", 0.9, nil},
		{"retract hides", []graph.Edit{ed(graph.EditRetract, nil)}, graph.Filter{}, true, "", 0.9, nil},
		{"retract hides even when quarantined are asked for", []graph.Edit{ed(graph.EditRetract, nil)}, graph.Filter{IncludeQuarantined: true, Channel: "team"}, true, "", 0.9, nil},
		{"retract wins over a later amend", []graph.Edit{ed(graph.EditRetract, nil), ed(graph.EditAmend, content("new"))}, graph.Filter{}, true, "", 0.9, nil},
		{"quarantine hides", []graph.Edit{ed(graph.EditQuarantine, nil)}, graph.Filter{}, true, "", 0.9, nil},
		{"quarantine shown when asked, flagged", []graph.Edit{ed(graph.EditQuarantine, nil), ed(graph.EditAmend, content("new"))}, graph.Filter{IncludeQuarantined: true}, false, "new", 0.9, []string{"quarantine", "amend"}},
		{"block hides on its channel", []graph.Edit{ed(graph.EditBlock, func(e *graph.Edit) { e.Channel = "public" })}, graph.Filter{Channel: "public"}, true, "", 0.9, nil},
		{"block shows on another channel", []graph.Edit{ed(graph.EditBlock, func(e *graph.Edit) { e.Channel = "public" })}, graph.Filter{Channel: "team"}, false, "", 0.9, nil},
		{"amend replaces text and importance", []graph.Edit{ed(graph.EditAmend, func(e *graph.Edit) { e.Content, e.Importance = "new", x(0.3) })}, graph.Filter{}, false, "new", 0.3, []string{"amend"}},
		{"the last amend's text wins", []graph.Edit{ed(graph.EditAmend, content("first")), ed(graph.EditAmend, content("second"))}, graph.Filter{}, false, "second", 0.9, []string{"amend", "amend"}},
		{"an amend of importance only keeps the text", []graph.Edit{ed(graph.EditAmend, content("new")), ed(graph.EditAmend, imp(0.2))}, graph.Filter{}, false, "new", 0.2, []string{"amend", "amend"}},
		{"attenuate by delta: 0.9 - 0.5 = 0.4", []graph.Edit{ed(graph.EditAttenuate, delta(-0.5))}, graph.Filter{}, false, "", 0.4, []string{"attenuate"}},
		{"deltas add up, floored at 0", []graph.Edit{ed(graph.EditAttenuate, delta(-0.5)), ed(graph.EditAttenuate, delta(-0.6))}, graph.Filter{}, false, "", 0, []string{"attenuate", "attenuate"}},
		{"a later absolute value resets the base", []graph.Edit{ed(graph.EditAttenuate, delta(-0.5)), ed(graph.EditAttenuate, imp(0.6)), ed(graph.EditAttenuate, delta(-0.2))}, graph.Filter{}, false, "", 0.4, []string{"attenuate", "attenuate", "attenuate"}},
		{"an absolute attenuation never raises", []graph.Edit{ed(graph.EditAttenuate, imp(0.95))}, graph.Filter{}, false, "", 0.9, []string{"attenuate"}},
		{"an amend's importance is the new base", []graph.Edit{ed(graph.EditAmend, imp(0.3)), ed(graph.EditAttenuate, imp(0.8))}, graph.Filter{}, false, "", 0.3, []string{"amend", "attenuate"}},
		{"an amend after deltas sets the value", []graph.Edit{ed(graph.EditAttenuate, delta(-0.5)), ed(graph.EditAmend, imp(0.7))}, graph.Filter{}, false, "", 0.7, []string{"attenuate", "amend"}},
		{"pinned to an older version: no longer applies", []graph.Edit{ed(graph.EditAmend, func(e *graph.Edit) { e.Content, e.TargetVersionID = "new", "v1" })}, graph.Filter{}, false, "", 0.9, nil},
		{"pinned to the current version: applies", []graph.Edit{ed(graph.EditAmend, func(e *graph.Edit) { e.Content, e.TargetVersionID = "new", "v2" })}, graph.Filter{}, false, "new", 0.9, []string{"amend"}},
		{"pending, rejected and others' edits do nothing", []graph.Edit{
			ed(graph.EditRetract, func(e *graph.Edit) { e.Status = graph.EditPending }),
			ed(graph.EditAmend, func(e *graph.Edit) { e.Status, e.Content = graph.EditRejected, "new" }),
			ed(graph.EditRetract, func(e *graph.Edit) { e.TargetMemoryID = "other" }),
		}, graph.Filter{}, false, "", 0.9, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := graph.Memory{ID: "m", Importance: 0.9, CurrentVersionID: "v2"}
			st := foldEdits(m, tc.edits, tc.f)
			assert.Equal(t, tc.hidden, st.Hidden)
			if tc.text == "" {
				assert.Nil(t, st.Content)
			} else if assert.NotNil(t, st.Content) {
				assert.Equal(t, tc.text, *st.Content)
			}
			if !tc.hidden {
				assert.InDelta(t, tc.importance, st.Importance, 1e-9)
				assert.Equal(t, tc.applied, st.Applied)
			}
		})
	}
}

// TestFoldEditsDecisionOrder: edits apply in decision order, not creation
// order.
func TestFoldEditsDecisionOrder(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	m := graph.Memory{ID: "m", Importance: 0.5}
	first := graph.Edit{ID: "x", Kind: graph.EditAmend, Status: graph.EditApproved, TargetMemoryID: "m", Content: "created first, decided last",
		CreatedAt: t0, DecidedAt: t0.Add(time.Hour)}
	second := graph.Edit{ID: "y", Kind: graph.EditAmend, Status: graph.EditApproved, TargetMemoryID: "m", Content: "created last, decided first",
		CreatedAt: t0.Add(time.Minute), DecidedAt: t0.Add(time.Minute)}
	st := foldEdits(m, []graph.Edit{first, second}, graph.Filter{})
	if assert.NotNil(t, st.Content) {
		assert.Equal(t, "created first, decided last", *st.Content)
	}
}
