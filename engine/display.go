package engine

import (
	"context"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/mnemo-dev/mnemo/graph"
	"github.com/mnemo-dev/mnemo/policy"
)

// charsPerToken is the token estimate used for budgets: 4 characters are
// about one token for English text and common tokenizers.
const charsPerToken = 4

// Neighbour is a memory appended to a primary result because it shares
// entities with it or an explicit relation links them, shown per its
// type's display.neighbour rule: full (content), summary (summary + id) or
// id.
type Neighbour struct {
	ID        string `json:"id"`
	Type      string `json:"type"`
	Title     string `json:"title,omitempty"`
	VersionID string `json:"version_id"`
	Display   string `json:"display"`
	Content   string `json:"content,omitempty"`
	Summary   string `json:"summary,omitempty"`
	// Reason says why it is appended: shared_entities, or the type of
	// the relation that links it (RELATES_TO, DEPENDS_ON, CONTRADICTS,
	// DERIVED_FROM), whose id is RelationID; Direction is out when the
	// result is the relation's from, in when it is its to.
	Reason     string   `json:"reason"`
	RelationID string   `json:"relation_id,omitempty"`
	Direction  string   `json:"direction,omitempty"`
	Shared     []string `json:"shared"`
}

// Budget reports how the token budget was spent.
type Budget struct {
	// TokenBudget is the cap in force (0: none).
	TokenBudget int `json:"token_budget"`
	// TokensUsed estimates the tokens of what was returned.
	TokensUsed int `json:"tokens_used"`
	// TokenBudgetExceeded is true when something was left out for the cap;
	// ExcludedCount says how many results and neighbours were.
	TokenBudgetExceeded bool `json:"token_budget_exceeded"`
	ExcludedCount       int  `json:"excluded_count"`
}

// searchResults turns hits, versions loaded, into results: confidence
// scored, shaped per display policy, cited. A hit without a version (not
// visible under the filter) is left out.
func searchResults(q searchPlan, hs []*hit) []SearchResult {
	out := make([]SearchResult, 0, len(hs))
	for _, h := range hs {
		if !h.hasVersion {
			continue // its version is not visible under the filter
		}
		conf, flags := confidence(h, q.validAt)
		if slices.Contains(h.edits, string(graph.EditQuarantine)) {
			flags = append(flags, FlagQuarantined)
		}
		td, known := q.pol.Type(h.mem.Type)
		content, appendix := shape(td, known, h.mem, h.version, h.text())
		r := SearchResult{
			Memory: h.mem, VersionID: h.version.ID, VersionNumber: h.version.Number,
			Content: content, Appendix: appendix, Score: h.score, Confidence: conf,
			Signals: map[string]SignalRank{}, Path: h.path, Edits: h.edits, Flags: flags,
			Citation: citationOf(h.mem, h.version.ID), fullText: h.text(),
		}
		for _, s := range resultSignals {
			if rank, ok := h.rank(s); ok {
				raw, _ := h.rawScore(s)
				r.WhyIncluded = append(r.WhyIncluded, whyOf[s])
				r.Signals[s] = SignalRank{Rank: rank, Score: raw}
			}
		}
		out = append(out, r)
	}
	return out
}

// repositoryID is the repository_id of a citation: the memory's repo id, or
// "tenant/org" for an org-wide memory, or "tenant" for a tenant-wide one.
func repositoryID(s graph.Scope) string {
	switch {
	case s.RepoID != "":
		return s.RepoID
	case s.OrgID != "":
		return s.TenantID + "/" + s.OrgID
	}
	return s.TenantID
}

// citationOf cites a whole version of m.
func citationOf(m graph.Memory, versionID string) graph.Citation {
	return graph.Citation{RepositoryID: repositoryID(m.Scope), ElementID: m.ID, VersionID: versionID}
}

// shape renders a memory per its type's display rule: the primary field
// (trimmed) and the appendix fields (text fields trimmed). A type missing from the policy shows
// its content.
func shape(td policy.TypeDef, known bool, m graph.Memory, v graph.Version, text string) (string, map[string]string) {
	if !known || td.Display.Primary == "" {
		return text, nil
	}
	primary := trim(field(td.Display.Primary, m, v, text), td.Display.PrimaryTrim)
	var appendix map[string]string
	for _, name := range td.Display.Appendix {
		if name == td.Display.Primary {
			continue
		}
		val := field(name, m, v, text)
		if name == policy.FieldContent || name == policy.FieldSummary || name == policy.FieldTitle {
			val = trim(val, td.Display.AppendixTrim) // status, due and tags are never cut
		}
		if val != "" {
			if appendix == nil {
				appendix = map[string]string{}
			}
			appendix[name] = val
		}
	}
	return primary, appendix
}

// field returns one display field of a memory. A task's status and due date
// are read from its "status:" and "due:" tags; the summary falls back to the
// content.
func field(name string, m graph.Memory, v graph.Version, text string) string {
	switch name {
	case policy.FieldTitle:
		return m.Title
	case policy.FieldContent:
		return text
	case policy.FieldSummary:
		if v.Summary != "" {
			return v.Summary
		}
		return text
	case policy.FieldStatus:
		if s := tagValue(m.Tags, "status"); s != "" {
			return s
		}
		return string(m.Status)
	case policy.FieldDue:
		return tagValue(m.Tags, "due")
	case policy.FieldTags:
		return strings.Join(m.Tags, ", ")
	}
	return ""
}

// tagValue returns the value of the first "key:value" tag.
func tagValue(tags []string, key string) string {
	for _, t := range tags {
		if v, ok := strings.CutPrefix(t, key+":"); ok {
			return v
		}
	}
	return ""
}

// trim cuts s to n characters (0: no cut), marking the cut with an ellipsis.
func trim(s string, n int) string {
	if n <= 0 || utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return strings.TrimSpace(string(r[:n])) + "…"
}

// tokens estimates the tokens of s.
func tokens(s string) int {
	return (utf8.RuneCountInString(s) + charsPerToken - 1) / charsPerToken
}

// appendNeighbours gives each result its appendix of neighbours from set:
// first the memories its relations lead to, up to relations_limit
// (pickRelated), then memories sharing entities with it, up to
// notes_limit shown in full and docs_limit shown as summary or id, under
// the same filter, each memory at most once in the response and never one
// that is already a primary result. Neighbours of a seed that did not
// become a result are dropped. The store found more neighbours than are
// shown (room for those it skips); only the versions of those shown are
// loaded, in as many rounds as a neighbour without a visible version
// leaves a place to the next.
func (e *Engine) appendNeighbours(ctx context.Context, q searchPlan, rs []SearchResult, set neighbourSet) error {
	tried := map[*hit]bool{}
	for {
		var load []*hit
		for _, pk := range pickNeighbours(q, rs, set, func(h *hit) bool { return h.hasVersion || !tried[h] }) {
			if !tried[pk.h] && !pk.h.hasVersion {
				tried[pk.h] = true
				load = append(load, pk.h)
			}
		}
		if len(load) == 0 {
			break
		}
		if err := e.loadVersions(ctx, q.f, load); err != nil {
			return err
		}
	}
	for _, pk := range pickNeighbours(q, rs, set, func(h *hit) bool { return h.hasVersion }) {
		nb := shapeNeighbour(q, pk.h)
		if r := pk.rel; r != nil {
			nb.Reason, nb.RelationID, nb.Direction, nb.Shared = string(r.Type), r.ID, DirectionOut, []string{}
			if r.ToID == rs[pk.result].Memory.ID {
				nb.Direction = DirectionIn
			}
		} else {
			nb.Reason, nb.Shared = NeighbourSharedEntities, pk.shared
		}
		rs[pk.result].Neighbours = append(rs[pk.result].Neighbours, nb)
	}
	return nil
}

// neighbourPick is a neighbour to show: the result it joins, the hit, and
// the relation that led to it or the entities it shares with the result.
type neighbourPick struct {
	result int
	h      *hit
	rel    *graph.Relation
	shared []string
}

// pickNeighbours chooses the neighbours appendNeighbours shows, in the
// order they are appended, counting as visible the hits shown accepts.
func pickNeighbours(q searchPlan, rs []SearchResult, set neighbourSet, shown func(*hit) bool) []neighbourPick {
	lim := q.rt.Neighbours
	if len(rs) == 0 || (len(set.ns) == 0 && len(set.rels) == 0) {
		return nil
	}
	taken := make(map[string]bool, len(rs))
	for _, r := range rs {
		taken[r.Memory.ID] = true
	}
	// usable: not a primary result (cycle), not already shown, not hidden
	// by an edit, and visible.
	usable := func(h *hit) bool { return h != nil && h.mem.ID != "" && shown(h) && !taken[h.mem.ID] }
	picks := pickRelated(q, rs, set, usable)
	for _, pk := range picks {
		taken[pk.h.mem.ID] = true
	}
	ns, byID := set.ns, set.byID
	seedIndex := make(map[string]int, len(rs))
	for i, r := range rs {
		seedIndex[r.Memory.ID] = i
	}
	notes, docs := make([]int, len(rs)), make([]int, len(rs))
	for _, n := range ns {
		i, isResult := seedIndex[n.SeedID]
		h := byID[n.Memory.ID]
		if !isResult || !usable(h) {
			continue
		}
		td, _ := q.pol.Type(h.mem.Type)
		if td.Display.Neighbour == policy.NeighbourFull {
			if notes[i] >= lim.NotesLimit {
				continue
			}
			notes[i]++
		} else {
			if docs[i] >= lim.DocsLimit {
				continue
			}
			docs[i]++
		}
		taken[h.mem.ID] = true
		picks = append(picks, neighbourPick{result: i, h: h, shared: n.Shared})
	}
	return picks
}

// shapeNeighbour renders h as a neighbour per its type's
// display.neighbour rule (summary when the type has none).
func shapeNeighbour(q searchPlan, h *hit) Neighbour {
	td, _ := q.pol.Type(h.mem.Type)
	nb := Neighbour{ID: h.mem.ID, Type: h.mem.Type, Title: h.mem.Title, VersionID: h.version.ID,
		Display: td.Display.Neighbour}
	switch nb.Display {
	case policy.NeighbourFull:
		nb.Content = h.text()
	case "", policy.NeighbourSummary:
		nb.Display = policy.NeighbourSummary
		nb.Summary = trim(field(policy.FieldSummary, h.mem, h.version, h.text()), 280)
	}
	return nb
}

// applyBudget keeps, in rank order, the results that fit in budget tokens
// (0: no cap), then, in the same order, the neighbours that still fit, so a
// neighbour never displaces a primary result. It reports what it left out.
func applyBudget(rs []SearchResult, budget int) ([]SearchResult, Budget) {
	b := Budget{TokenBudget: budget}
	fits := func(n int) bool { return budget <= 0 || b.TokensUsed+n <= budget }
	out := make([]SearchResult, 0, len(rs))
	for _, r := range rs {
		n := tokens(r.Memory.Title) + tokens(r.Content)
		for _, v := range r.Appendix {
			n += tokens(v)
		}
		if !fits(n) {
			b.ExcludedCount += 1 + len(r.Neighbours)
			continue
		}
		b.TokensUsed += n
		out = append(out, r)
	}
	for i := range out {
		kept := make([]Neighbour, 0, len(out[i].Neighbours))
		for _, nb := range out[i].Neighbours {
			m := tokens(nb.ID) + tokens(nb.Title) + tokens(nb.Content) + tokens(nb.Summary)
			if !fits(m) {
				b.ExcludedCount++
				continue
			}
			b.TokensUsed += m
			kept = append(kept, nb)
		}
		out[i].Neighbours = kept
	}
	b.TokenBudgetExceeded = b.ExcludedCount > 0
	return out, b
}
