package engine

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/mnemo-dev/mnemo/graph"
	"github.com/mnemo-dev/mnemo/policy"
	"go.opentelemetry.io/otel/attribute"
)

// Search limits.
const (
	// DefaultSearchLimit is the number of results when a request names none.
	DefaultSearchLimit = 10
	// MaxSearchLimit caps the results of one search.
	MaxSearchLimit = 100
	// MaxQueryLen caps a query, in bytes.
	MaxQueryLen = 4096
)

// SearchRequest is one search as a caller states it. Zero fields do not
// filter. Scope may narrow the principal's scope, never widen it.
type SearchRequest struct {
	Scope *graph.Scope
	Query string
	// Mode is graph, vector, keyword or hybrid; empty takes the policy's.
	Mode string
	// Limit is the number of primary results (default 10, at most 100).
	Limit int

	UserID      string
	Visibility  []graph.Visibility
	SubjectType string
	SubjectID   string
	ProjectID   string
	SessionID   string
	Types       []string
	Tags        []string // every tag listed must be carried
	EntityTypes []string
	// DaysBack keeps memories created in the last DaysBack days.
	DaysBack      int
	CreatedAfter  time.Time
	CreatedBefore time.Time
	// Channel hides memories blocked on that channel.
	Channel string
	// IncludeArchived and IncludeSuperseded admit those statuses (ranked
	// below active ones); IncludeExpired admits memories outside their
	// validity window; IncludeQuarantined needs the read_quarantined
	// permission.
	IncludeArchived    bool
	IncludeSuperseded  bool
	IncludeExpired     bool
	IncludeQuarantined bool

	// Reranker overrides the policy's reranker kind (rrf, mmr,
	// node_distance).
	Reranker string
	// Center is node_distance's center: a memory id or an entity name.
	// Empty takes the best fused result.
	Center string
	// TokenBudget overrides the policy's token budget when positive.
	TokenBudget int
	// TimeTravel reads as of a past valid time (as_of) and as known at a
	// past transaction time (known_at). IncludeExpired with AsOf is
	// refused (as_of names the instant validity is judged at).
	TimeTravel
}

// SearchResponse is what Search returns.
type SearchResponse struct {
	Query    string `json:"query"`
	Mode     string `json:"mode"`
	Reranker string `json:"reranker"`
	// Fallback is true when graph mode found no graph candidates and fell
	// back to vector and keyword search.
	Fallback bool           `json:"fallback"`
	Results  []SearchResult `json:"results"`
	// Contradictions pairs results that contradict each other. They are
	// flagged, never resolved.
	Contradictions []Contradiction `json:"contradictions"`
	// Abstained is true when no result cleared the policy's abstention
	// threshold; Results is then empty and Message says why.
	Abstained bool   `json:"abstained"`
	Message   string `json:"message,omitempty"`
	Budget    Budget `json:"budget"`
	// Warnings says what the search could not do as asked (e.g.
	// WarnKnownAtVectors).
	Warnings []string `json:"warnings,omitempty"`
	// Dates are the spans of time the query names, as the time signal
	// read them (relative ones at as_of, else now): what a result marked
	// date_match was dated within, give or take the time-zone window
	// (docs/search.md, "The time signal").
	Dates []DateRange `json:"dates,omitempty"`
}

// SignalRank is what one retrieval signal said of a result: its 1-based
// rank within that signal and the signal's own score (the square root of
// the walk score for graph, cosine similarity for vector, BM25 for
// keyword).
type SignalRank struct {
	Rank  int     `json:"rank"`
	Score float64 `json:"score"`
}

// SearchResult is one primary result, shaped by its type's display policy.
type SearchResult struct {
	Memory        graph.Memory `json:"memory"`
	VersionID     string       `json:"version_id"`
	VersionNumber int          `json:"version_number"`
	// Content is the type's primary display field (trimmed per policy).
	Content string `json:"content"`
	// Appendix holds the type's appendix fields (status, due, tags, ...).
	Appendix map[string]string `json:"appendix,omitempty"`
	// Score is the fused score after the importance prior; Confidence is
	// the score in [0, 1] after the documented penalties.
	Score       float64               `json:"score"`
	Confidence  float64               `json:"confidence"`
	WhyIncluded []string              `json:"why_included"`
	Signals     map[string]SignalRank `json:"signals"`
	// Path lists the entities that led the graph signal here.
	Path []string `json:"path,omitempty"`
	// Edits lists the approved edits applied (amend, attenuate, and
	// quarantine when include_quarantined showed a quarantined memory).
	Edits []string `json:"edits,omitempty"`
	// Flags marks superseded, archived, expired, expiring, inferred and
	// quarantined results.
	Flags      []string       `json:"flags,omitempty"`
	Citation   graph.Citation `json:"citation"`
	Neighbours []Neighbour    `json:"neighbours,omitempty"`

	fullText string // the whole (amended) content, for validation
}

// Search runs the read path: authorize, find candidates per mode, rerank,
// apply the effective view (edits, validity, supersession), validate and
// shape the results per the display policy within the token budget.
func (e *Engine) Search(ctx context.Context, p graph.Principal, r SearchRequest) (resp SearchResponse, err error) {
	ctx, end := startSpan(ctx, "mnemo.search", attribute.String("mnemo.mode_asked", r.Mode))
	defer func() {
		e.observeSearch(r.Mode, resp, err)
		end(err, attribute.String("mnemo.mode", resp.Mode), attribute.Int("mnemo.results", len(resp.Results)),
			attribute.Bool("mnemo.abstained", resp.Abstained), attribute.Bool("mnemo.fallback", resp.Fallback))
	}()
	q, err := e.planSearch(e.policy.Current(), p, r)
	if err != nil {
		return SearchResponse{}, err
	}
	rctx, endRank := startSpan(ctx, "mnemo.search.rank")
	ranked, fallback, err := e.rank(rctx, q)
	endRank(err)
	if err != nil {
		return SearchResponse{}, err
	}
	resp = SearchResponse{Query: q.text, Mode: q.mode, Reranker: q.reranker, Fallback: fallback,
		Results: []SearchResult{}, Contradictions: []Contradiction{}, Warnings: q.warnings, Dates: dateRanges(q.dates)}
	if abstains(q, ranked[:min(len(ranked), q.limit)]) {
		resp.Abstained = true
		resp.Message = fmt.Sprintf("no memory matched well enough: no result's relevance reached the abstention threshold %.2f", q.rt.AbstentionThreshold)
		return resp, nil
	}
	if len(ranked) == 0 {
		resp.Message = "no memory matched"
		return resp, nil
	}
	// The neighbours of the results-to-be load while the results resolve
	// (resolve only drops a hit whose version the filter hides).
	seeds := make([]string, 0, min(len(ranked), q.limit))
	for _, h := range ranked[:min(len(ranked), q.limit)] {
		seeds = append(seeds, h.mem.ID)
	}
	var (
		set    neighbourSet
		setErr error
		setOK  = make(chan struct{})
	)
	go func() {
		defer close(setOK)
		set, setErr = e.fetchNeighbours(ctx, q, seeds)
	}()
	results, err := e.resolve(ctx, q, ranked)
	<-setOK
	if err := cmp.Or(err, setErr); err != nil {
		return SearchResponse{}, err
	}
	if err := e.appendNeighbours(ctx, q, results, set); err != nil {
		return SearchResponse{}, err
	}
	resp.Contradictions = contradictions(results)
	resp.Results, resp.Budget = applyBudget(results, q.budget)
	return resp, nil
}

// searchPlan is a validated search: its filter and the knobs in force.
type searchPlan struct {
	f           graph.Filter
	text        string
	mode        string
	reranker    string
	center      string
	limit       int
	budget      int
	rt          policy.Retrieval
	pol         *policy.Policy
	now         time.Time
	withVectors bool
	// validAt is the instant expiry is judged at (as_of, else now).
	validAt time.Time
	// content is the query without its dates, for relevance ("" when it
	// names none: contentQuery); dates are the spans it names, relative
	// ones read at validAt (queryDatesAt), for the time signal. Both are
	// read once, here.
	content  string
	dates    []dateSpan
	warnings []string
}

// planSearch validates r and builds the filter from the principal, under
// pol, the request's policy snapshot (its retrieval knobs, types and
// roles all come from it).
func (e *Engine) planSearch(pol *policy.Policy, p graph.Principal, r SearchRequest) (searchPlan, error) {
	rt := pol.Retrieval
	q := searchPlan{text: strings.TrimSpace(r.Query), mode: r.Mode, reranker: r.Reranker, center: r.Center,
		limit: r.Limit, budget: rt.TokenBudget, rt: rt, pol: pol, now: e.now().UTC(),
		withVectors: e.vectorsOn()}
	switch {
	case q.text == "":
		return q, &graph.FieldError{Field: "query", Message: "required"}
	case len(q.text) > MaxQueryLen:
		return q, &graph.FieldError{Field: "query", Message: fmt.Sprintf("longer than %d bytes", MaxQueryLen)}
	}
	if q.mode == "" {
		q.mode = rt.Mode
	}
	if !slices.Contains([]string{policy.ModeGraph, policy.ModeVector, policy.ModeKeyword, policy.ModeHybrid}, q.mode) {
		return q, &graph.FieldError{Field: "mode", Message: fmt.Sprintf("unknown mode %q: graph, vector, keyword or hybrid", q.mode)}
	}
	if q.mode == policy.ModeVector && !q.withVectors {
		return q, &graph.FieldError{Field: "mode", Message: "vector mode needs a vector index and an embedder, and this server has none"}
	}
	if err := r.check(q.now); err != nil {
		return q, err
	}
	if !r.AsOf.IsZero() && r.IncludeExpired {
		return q, &graph.FieldError{Field: "as_of", Message: "cannot be combined with include_expired"}
	}
	q.validAt = r.validAt(q.now)
	q.content, q.dates = readDates(q.text, q.validAt)
	if !r.KnownAt.IsZero() && q.withVectors {
		// The vector index holds current versions only (docs/time.md).
		if q.mode == policy.ModeVector {
			return q, &graph.FieldError{Field: "known_at", Message: "vector mode cannot read as known at a past time: the vector index holds current versions only"}
		}
		q.withVectors = false
		q.warnings = append(q.warnings, WarnKnownAtVectors)
	}
	if q.reranker == "" {
		q.reranker = rt.Reranker.Kind
	}
	if !slices.Contains([]string{policy.RerankerRRF, policy.RerankerMMR, policy.RerankerNodeDistance}, q.reranker) {
		return q, &graph.FieldError{Field: "reranker", Message: fmt.Sprintf("unknown reranker %q: rrf, mmr or node_distance", q.reranker)}
	}
	switch {
	case q.limit == 0:
		q.limit = DefaultSearchLimit
	case q.limit < 0 || q.limit > MaxSearchLimit:
		return q, &graph.FieldError{Field: "limit", Message: fmt.Sprintf("must be from 1 to %d", MaxSearchLimit)}
	}
	switch {
	case r.TokenBudget < 0:
		return q, &graph.FieldError{Field: "token_budget", Message: "must be >= 0"}
	case r.TokenBudget > 0:
		q.budget = r.TokenBudget
	}
	if r.DaysBack < 0 {
		return q, &graph.FieldError{Field: "days_back", Message: "must be >= 0"}
	}
	f := graph.Filter{
		UserID: r.UserID, Types: r.Types, Tags: r.Tags, Visibility: r.Visibility,
		SubjectType: r.SubjectType, SubjectID: r.SubjectID, ProjectID: r.ProjectID, SessionID: r.SessionID,
		EntityTypes: r.EntityTypes, CreatedAfter: r.CreatedAfter, CreatedBefore: r.CreatedBefore,
		Channel: r.Channel, IncludeQuarantined: r.IncludeQuarantined,
		Statuses: []graph.Status{graph.StatusActive},
	}
	if r.DaysBack > 0 {
		if after := q.now.AddDate(0, 0, -r.DaysBack); after.After(f.CreatedAfter) {
			f.CreatedAfter = after
		}
	}
	if r.IncludeArchived {
		f.Statuses = append(f.Statuses, graph.StatusArchived)
	}
	if r.IncludeSuperseded {
		f.Statuses = append(f.Statuses, graph.StatusSuperseded)
	}
	r.apply(&f, q.now, !r.IncludeExpired)
	f, err := readFilter(pol, p, r.Scope, f)
	if err != nil {
		return q, err
	}
	q.f = f
	return q, nil
}
