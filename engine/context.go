package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/mnemo-dev/mnemo/graph"
	"github.com/mnemo-dev/mnemo/policy"
)

// Baseline selector kinds of read_context.
const (
	SelectorPublished = "published"
	SelectorBaseline  = "baseline"
)

// read_context limits.
const (
	// DefaultContextItems is the number of items when a request names none.
	DefaultContextItems = 10
	// MaxContextItems caps the items of one read_context.
	MaxContextItems = 50
	// MaxVerifyCitations caps the citations one verification checks.
	MaxVerifyCitations = 1000
)

// ContextSelector picks which versions read_context returns: published (the
// scope's latest baseline when it has one, else the current version of each
// active memory) or one baseline by id.
type ContextSelector struct {
	Kind       string `json:"kind"`
	BaselineID string `json:"baseline_id,omitempty"`
}

// ContextLimits bounds a read_context answer.
type ContextLimits struct {
	// MaxItems caps the items (default 10, at most 50).
	MaxItems int `json:"max_items,omitempty"`
	// TokenBudget caps the items' content, 4 characters a token; items that
	// do not fit are left out. 0 takes the policy's token budget.
	TokenBudget int `json:"token_budget,omitempty"`
}

// ContextRequest is one read_context call: a query to search, or one
// element (memory id) to fetch.
type ContextRequest struct {
	Scope     *graph.Scope
	Selector  ContextSelector
	Query     string
	ElementID string
	Limits    ContextLimits
	// Channel and IncludeQuarantined apply edits as in SearchRequest: a
	// memory blocked on Channel is left out; a quarantined one is shown
	// only with IncludeQuarantined (permission read_quarantined).
	Channel            string
	IncludeQuarantined bool
	// TimeTravel reads as of a past valid time and as known at a past
	// transaction time, as in SearchRequest; a baseline selector then
	// picks among the baselines published by KnownAt.
	TimeTravel
}

// ContextItem is one piece of returned context with the citations that pin
// it to the exact version it came from.
type ContextItem struct {
	RepositoryID string           `json:"repository_id"`
	ElementID    string           `json:"element_id"`
	VersionID    string           `json:"version_id"`
	Title        string           `json:"title"`
	Content      string           `json:"content"`
	Citations    []graph.Citation `json:"citations"`
	WhyIncluded  []string         `json:"why_included"`
	// Status is the element's status when it is not active (superseded,
	// archived); HeadID then names the newest memory of its supersession
	// chain, the one that holds the fact now.
	Status graph.Status `json:"status,omitempty"`
	HeadID string       `json:"head_id,omitempty"`
	// Edits lists the approved edits applied to the element (amend,
	// attenuate, quarantine).
	Edits []string `json:"edits,omitempty"`
}

// ContextResponse is read_context's answer. ContextID names the stored
// receipt that /v1/citations/verify checks answers against.
type ContextResponse struct {
	Scope                graph.Scope     `json:"scope"`
	BaselineSelectorUsed ContextSelector `json:"baseline_selector_used"`
	Items                []ContextItem   `json:"items"`
	ContextID            string          `json:"context_id"`
	// Warnings says what the read could not do as asked (as in
	// SearchResponse).
	Warnings []string `json:"warnings,omitempty"`
}

// ReadContext returns version-pinned context for a query or one element,
// stores a receipt of every citation it handed out, and reinforces the
// memories it returned.
func (e *Engine) ReadContext(ctx context.Context, p graph.Principal, r ContextRequest) (ContextResponse, error) {
	r.Query = strings.TrimSpace(r.Query)
	switch {
	case r.Query == "" && r.ElementID == "":
		return ContextResponse{}, &graph.FieldError{Field: "query", Message: "query or element_id is required"}
	case r.Query != "" && r.ElementID != "":
		return ContextResponse{}, &graph.FieldError{Field: "element_id", Message: "give query or element_id, not both"}
	case r.Limits.MaxItems < 0 || r.Limits.MaxItems > MaxContextItems:
		return ContextResponse{}, &graph.FieldError{Field: "limits.max_items", Message: fmt.Sprintf("must be from 1 to %d", MaxContextItems)}
	case r.Limits.TokenBudget < 0:
		return ContextResponse{}, &graph.FieldError{Field: "limits.token_budget", Message: "must be >= 0"}
	}
	if r.Limits.MaxItems == 0 {
		r.Limits.MaxItems = DefaultContextItems
	}
	sel := r.Selector
	switch {
	case sel.Kind == "" && sel.BaselineID != "":
		sel.Kind = SelectorBaseline
	case sel.Kind == "":
		sel.Kind = SelectorPublished
	}
	switch {
	case sel.Kind != SelectorPublished && sel.Kind != SelectorBaseline:
		return ContextResponse{}, &graph.FieldError{Field: "selector.kind", Message: fmt.Sprintf("unknown selector %q: published or baseline", sel.Kind)}
	case sel.Kind == SelectorBaseline && sel.BaselineID == "":
		return ContextResponse{}, &graph.FieldError{Field: "selector.baseline_id", Message: "required for a baseline selector"}
	case sel.Kind == SelectorPublished && sel.BaselineID != "":
		return ContextResponse{}, &graph.FieldError{Field: "selector.baseline_id", Message: "not allowed with the published selector"}
	}
	pol := e.policy.Current()
	now := e.now().UTC()
	if err := r.check(now); err != nil {
		return ContextResponse{}, err
	}
	want := graph.Filter{Channel: r.Channel, IncludeQuarantined: r.IncludeQuarantined}
	r.apply(&want, now, true)
	f, err := readFilter(pol, p, r.Scope, want)
	if err != nil {
		return ContextResponse{}, err
	}
	pinned, used, err := e.selectBaseline(ctx, f, sel)
	if err != nil {
		return ContextResponse{}, err
	}
	var (
		hits     []*hit
		warnings []string
	)
	if r.ElementID != "" {
		hits, err = e.fetchElement(ctx, f, r.ElementID, pinned)
	} else {
		hits, warnings, err = e.contextSearch(ctx, pol, p, r, pinned)
	}
	if err != nil {
		return ContextResponse{}, err
	}
	items, err := e.contextItems(ctx, f, hits, pinned, r.Limits, pol.Retrieval.TokenBudget)
	if err != nil {
		return ContextResponse{}, err
	}
	resp := ContextResponse{Scope: f.Scope, BaselineSelectorUsed: used, Items: items, Warnings: warnings}
	receipt := graph.ContextReceipt{ID: graph.NewID(), Scope: f.Scope, PrincipalID: p.ID, Query: r.Query,
		Citations: []graph.Citation{}, CreatedAt: e.now().UTC()}
	if r.ElementID != "" {
		receipt.Query = "element:" + r.ElementID
	}
	ids := make([]string, 0, len(items))
	for _, it := range items {
		receipt.Citations = append(receipt.Citations, it.Citations...)
		ids = append(ids, it.ElementID)
	}
	saved, err := e.store.CreateContextReceipt(ctx, receipt)
	if err != nil {
		return ContextResponse{}, fmt.Errorf("store context receipt: %w", err)
	}
	resp.ContextID = saved.ID
	if len(ids) > 0 {
		if err := e.store.Touch(ctx, f.Scope, ids, e.now().UTC()); err != nil {
			e.log.Warn("reinforce on read_context failed", "err", err)
		}
	}
	return resp, nil
}

// pinning is what a baseline selector pins: versions, keyed by memory id,
// and which memories it speaks for. A baseline_id selector speaks for every
// memory (one it does not publish is left out); the published selector
// speaks for the repositories that have a published baseline, and memories
// elsewhere (repositories never promoted, org- and tenant-wide memories)
// are read at their current version. nil: current versions everywhere.
type pinning struct {
	versions map[string]graph.Version
	all      bool
	curated  map[graph.Scope]bool
}

// pinned returns the version pinned for memory m.
func (pn *pinning) pinned(m graph.Memory) (graph.Version, bool) {
	if pn == nil {
		return graph.Version{}, false
	}
	v, ok := pn.versions[m.ID]
	return v, ok
}

// excludes reports whether the selection leaves m out: a memory of a
// curated scope its baseline does not publish, or one not active outside
// them (only a baseline brings back superseded or archived memories).
func (pn *pinning) excludes(m graph.Memory) bool {
	if pn == nil {
		return false
	}
	if _, ok := pn.versions[m.ID]; ok {
		return false
	}
	return pn.all || pn.curated[m.Scope] || m.Status != graph.StatusActive
}

// selectBaseline resolves the selector to what it pins (nil: current
// versions) and the selector as used (baseline_id: the one baseline, or
// the published baseline of the read's own repository).
func (e *Engine) selectBaseline(ctx context.Context, f graph.Filter, sel ContextSelector) (*pinning, ContextSelector, error) {
	var bs []graph.Baseline
	pn := &pinning{versions: map[string]graph.Version{}, curated: map[graph.Scope]bool{}}
	used := ContextSelector{Kind: sel.Kind}
	if sel.Kind == SelectorBaseline {
		ps, err := capability(e.caps.proposals, "proposals")
		if err != nil {
			return nil, sel, err
		}
		b, err := ps.GetBaseline(ctx, f, sel.BaselineID)
		if err != nil {
			return nil, sel, fmt.Errorf("baseline %s: %w", sel.BaselineID, err)
		}
		bs, pn.all, used.BaselineID = []graph.Baseline{b}, true, b.ID
	} else {
		ps := e.caps.proposals
		if ps == nil { // a store without the capability has no baselines
			return nil, used, nil
		}
		var err error
		if bs, err = ps.PublishedBaselines(ctx, f); err != nil {
			return nil, sel, fmt.Errorf("published baselines: %w", err)
		}
		if len(bs) == 0 {
			return nil, used, nil
		}
		for _, b := range bs {
			pn.curated[b.Scope] = true
			if b.Scope == f.Scope || used.BaselineID == "" {
				used.BaselineID = b.ID
			}
		}
	}
	all := f
	all.Statuses = []graph.Status{graph.StatusActive, graph.StatusSuperseded, graph.StatusArchived}
	for _, b := range bs {
		vs, err := e.store.GetVersions(ctx, all, b.VersionIDs)
		if err != nil {
			return nil, sel, fmt.Errorf("baseline %s versions: %w", b.ID, err)
		}
		for _, v := range vs {
			pn.versions[v.MemoryID] = v
		}
	}
	return pn, used, nil
}

// fetchElement is a direct fetch of one memory.
func (e *Engine) fetchElement(ctx context.Context, f graph.Filter, id string, pinned *pinning) ([]*hit, error) {
	m, err := e.store.GetMemory(ctx, f, id)
	if err != nil {
		return nil, fmt.Errorf("element %s: %w", id, err)
	}
	if pinned.excludes(m) && (pinned.all || pinned.curated[m.Scope]) {
		return nil, fmt.Errorf("element %s is not in the selected baseline: %w", id, graph.ErrNotFound)
	}
	h := &hit{mem: m, loaded: true, norm: 1}
	if err := e.applyEdits(ctx, f, []*hit{h}); err != nil {
		return nil, err
	}
	if h.mem.ID == "" {
		return nil, fmt.Errorf("element %s: %w", id, graph.ErrNotFound)
	}
	return []*hit{h}, nil
}

// contextSearch ranks memories for the query with the policy's search,
// keeping those the baseline pins (when one is selected).
func (e *Engine) contextSearch(ctx context.Context, pol *policy.Policy, p graph.Principal, r ContextRequest, pinned *pinning) ([]*hit, []string, error) {
	sr := SearchRequest{Scope: r.Scope, Query: r.Query, Limit: r.Limits.MaxItems,
		Channel: r.Channel, IncludeQuarantined: r.IncludeQuarantined, TimeTravel: r.TimeTravel}
	if pinned != nil {
		// A baseline may pin versions of memories superseded since.
		sr.IncludeSuperseded, sr.IncludeArchived, sr.Limit = true, true, MaxSearchLimit
	}
	q, err := e.planSearch(pol, p, sr)
	if err != nil {
		return nil, nil, err
	}
	ranked, _, err := e.rank(ctx, q)
	if err != nil {
		return nil, nil, err
	}
	if abstains(q, ranked[:min(len(ranked), q.limit)]) {
		return nil, q.warnings, nil
	}
	out := make([]*hit, 0, r.Limits.MaxItems)
	for _, h := range ranked {
		if len(out) == r.Limits.MaxItems {
			break
		}
		if pinned.excludes(h.mem) {
			continue
		}
		out = append(out, h)
	}
	return out, q.warnings, nil
}

// contextItems pins each hit to its version (the baseline's, or the current
// one), cites the whole version and each of its chunks, and keeps the items
// that fit the token budget (lim's, else defaultBudget, the policy's).
func (e *Engine) contextItems(ctx context.Context, f graph.Filter, hs []*hit, pinned *pinning, lim ContextLimits, defaultBudget int) ([]ContextItem, error) {
	for _, h := range hs {
		if v, ok := pinned.pinned(h.mem); ok {
			h.version, h.hasVersion = v, true
			if v.ID != h.mem.CurrentVersionID {
				h.amended = nil // an amendment applies to the current version only
			}
		}
	}
	if err := e.loadVersions(ctx, f, hs); err != nil { // the hits no baseline pins
		return nil, err
	}
	budget := lim.TokenBudget
	if budget == 0 {
		budget = defaultBudget
	}
	used := 0
	items := make([]ContextItem, 0, len(hs))
	for _, h := range hs {
		if !h.hasVersion {
			continue
		}
		content := h.text()
		if n := tokens(h.mem.Title) + tokens(content); budget > 0 && used+n > budget {
			continue
		} else {
			used += n
		}
		it := ContextItem{RepositoryID: repositoryID(h.mem.Scope), ElementID: h.mem.ID, VersionID: h.version.ID,
			Title: h.mem.Title, Content: content, WhyIncluded: []string{}, Edits: h.edits}
		if h.mem.Status != graph.StatusActive {
			it.Status = h.mem.Status
		}
		if h.mem.SupersededBy != "" {
			head, err := e.headOf(ctx, f, h.mem)
			if err != nil {
				return nil, err
			}
			it.HeadID = head
		}
		start, end := 0, len(content)
		whole := citationOf(h.mem, h.version.ID)
		whole.Start, whole.End = &start, &end
		it.Citations = []graph.Citation{whole}
		chunks, err := e.store.GetChunks(ctx, f, h.version.ID)
		if err != nil && !errors.Is(err, graph.ErrNotFound) {
			return nil, fmt.Errorf("chunks of %s: %w", h.version.ID, err)
		}
		for _, c := range chunks {
			cs, ce := c.Start, c.End
			cit := citationOf(h.mem, h.version.ID)
			cit.ChunkKey, cit.Start, cit.End = c.Key, &cs, &ce
			it.Citations = append(it.Citations, cit)
		}
		for _, s := range resultSignals {
			if _, ok := h.rank(s); ok {
				it.WhyIncluded = append(it.WhyIncluded, whyOf[s])
			}
		}
		if h.rankedBy() == 0 {
			it.WhyIncluded = append(it.WhyIncluded, WhyDirect)
		}
		items = append(items, it)
	}
	return items, nil
}
