package engine

import (
	"cmp"
	"slices"

	"github.com/mnemo-dev/mnemo/graph"
)

// editState is what a memory's approved edits make of it for one reader
// (its filter's channel and include_quarantined). docs/curation.md states
// the precedence foldEdits implements; search, read_context, get and an
// edit's preview all read a memory through it.
type editState struct {
	// Hidden is true when an edit hides the memory from this reader.
	Hidden bool
	// Content is the latest approved amendment's text, nil when none.
	Content *string
	// Importance is the importance after amend and attenuate edits.
	Importance float64
	// Applied lists the edits that changed what the reader sees, in the
	// order applied (amend, attenuate, and quarantine when a quarantined
	// memory is shown because the reader asked for it).
	Applied []string
}

// foldEdits applies the approved edits among edits that target m, under
// filter f, in this precedence:
//
//  1. Hiding wins over every other edit, whatever the order: an approved
//     retract hides m from everyone; quarantine hides it unless
//     f.IncludeQuarantined (then it is shown, flagged "quarantine"); block
//     hides it on its channel (f.Channel) only.
//  2. Otherwise amend and attenuate apply in decision order (decided_at,
//     then created_at, then id). An edit pinned to a version other than
//     m's current one no longer applies.
//  3. Text: the last amend that carries content wins.
//  4. Importance: it starts at m's. An amend's importance sets it and
//     becomes the base; an attenuate's absolute importance sets it to at
//     most the base (an attenuation never raises), discarding earlier
//     deltas; an attenuate's delta adds to the current value. The value is
//     kept within [0, 1] after each step: 0.9 with delta -0.5 is 0.4; then
//     importance 0.6 is 0.6.
func foldEdits(m graph.Memory, edits []graph.Edit, f graph.Filter) editState {
	st := editState{Importance: m.Importance}
	mine := make([]graph.Edit, 0, len(edits))
	for _, ed := range edits {
		if ed.TargetMemoryID == m.ID && ed.Status == graph.EditApproved {
			mine = append(mine, ed)
		}
	}
	if len(mine) == 0 {
		return st
	}
	slices.SortStableFunc(mine, func(a, b graph.Edit) int {
		return cmp.Or(a.DecidedAt.Compare(b.DecidedAt), a.CreatedAt.Compare(b.CreatedAt), cmp.Compare(a.ID, b.ID))
	})
	quarantined := false
	for _, ed := range mine {
		switch ed.Kind {
		case graph.EditRetract:
			st.Hidden = true
		case graph.EditQuarantine:
			quarantined = true
			st.Hidden = st.Hidden || !f.IncludeQuarantined
		case graph.EditBlock:
			st.Hidden = st.Hidden || (f.Channel != "" && ed.Channel == f.Channel)
		}
	}
	if st.Hidden {
		return editState{Hidden: true, Importance: m.Importance}
	}
	if quarantined {
		st.Applied = append(st.Applied, string(graph.EditQuarantine))
	}
	base := m.Importance
	for _, ed := range mine {
		if ed.TargetVersionID != "" && ed.TargetVersionID != m.CurrentVersionID {
			continue
		}
		switch ed.Kind {
		case graph.EditAmend:
			if ed.Content != "" {
				c := ed.Content
				st.Content = &c
			}
			if ed.Importance != nil {
				base = clamp01(*ed.Importance)
				st.Importance = base
			}
		case graph.EditAttenuate:
			switch {
			case ed.Importance != nil:
				st.Importance = min(base, clamp01(*ed.Importance))
			case ed.Delta != nil:
				st.Importance = clamp01(st.Importance + *ed.Delta)
			}
		default:
			continue
		}
		st.Applied = append(st.Applied, string(ed.Kind))
	}
	return st
}
