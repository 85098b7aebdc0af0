package engine

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"golang.org/x/sync/errgroup"

	"github.com/mnemo-dev/mnemo/graph"
)

// Memory types the context bundle gathers.
const (
	TypeDecision = "decision"
	TypeTask     = "task"
)

// Context bundle bounds.
const (
	// MaxBundleSection caps the memories of one section (and of each
	// visibility of the decisions) a bundle reads.
	MaxBundleSection = 20
	// MaxBundleCapsules caps the capsules a bundle reads.
	MaxBundleCapsules = 20
)

// DecisionOrder is the order of a bundle's decisions by visibility: the
// most binding first. Within one visibility, newest first.
var DecisionOrder = []graph.Visibility{
	graph.VisibilityPolicy, graph.VisibilityGlobal, graph.VisibilityProject, graph.VisibilityUser, graph.VisibilitySession,
}

// Bundle sections, in the order the token budget is spent on them.
const (
	SectionDecisions = "decisions"
	SectionCapsules  = "capsules"
	SectionTasks     = "tasks"
	SectionSession   = "session"
)

// BundleRequest asks for the context an agent starts from. SessionID
// names its session (its items, and the decisions of visibility session);
// ProjectID narrows decisions and tasks to a project. Channel and
// IncludeQuarantined apply edits as search does. TokenBudget 0 takes the
// policy's.
type BundleRequest struct {
	Scope              *graph.Scope
	SessionID          string
	ProjectID          string
	Channel            string
	IncludeQuarantined bool
	TokenBudget        int
}

// BundleBudget says what the token budget let in: Tokens is the budget,
// Used what the items cost (4 characters a token, as read_context counts),
// Omitted how many items of each section did not fit.
type BundleBudget struct {
	Tokens  int            `json:"tokens"`
	Used    int            `json:"used"`
	Omitted map[string]int `json:"omitted,omitempty"`
}

// BundleResponse is an agent's context bundle: the effective view of every
// item (approved edits applied), within the budget.
type BundleResponse struct {
	Scope     graph.Scope   `json:"scope"`
	AgentID   string        `json:"agent_id"`
	SessionID string        `json:"session_id,omitempty"`
	Decisions []ItemView    `json:"decisions"`
	Capsules  []CapsuleView `json:"capsules"`
	Tasks     []ItemView    `json:"tasks"`
	Session   []ItemView    `json:"session"`
	Budget    BundleBudget  `json:"budget"`
}

// ContextBundle gathers what agent p starts from: the active decisions it
// may read (policy > global > project > user > session, newest first
// within each), the live capsules addressed to it, the active tasks, and
// its session's memories (newest first), each memory once (in the first
// section that holds it), every read under p's filter (capsule items under
// their capsule's grant), edits applied. The token budget is spent in that
// order; what does not fit is counted in Budget.Omitted.
func (e *Engine) ContextBundle(ctx context.Context, p graph.Principal, r BundleRequest) (BundleResponse, error) {
	if r.TokenBudget < 0 {
		return BundleResponse{}, &graph.FieldError{Field: "token_budget", Message: "must be >= 0"}
	}
	for field, v := range map[string]string{"session_id": r.SessionID, "project_id": r.ProjectID, "channel": r.Channel} {
		if strings.TrimSpace(v) != v || len(v) > graph.MaxIDLen {
			return BundleResponse{}, &graph.FieldError{Field: field, Message: "malformed"}
		}
	}
	pol := e.policy.Current()
	now := e.now().UTC()
	f, err := readFilter(pol, p, r.Scope, graph.Filter{ValidAt: now, Channel: r.Channel,
		IncludeQuarantined: r.IncludeQuarantined})
	if err != nil {
		return BundleResponse{}, err
	}
	// The memory sections and the capsules are independent reads: run
	// together, a bundle waits for the slower of them, not their sum
	// (docs/benchmarks.md, "Curation targets").
	var (
		sections map[string][]ItemView
		capsules []CapsuleView
	)
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		var err error
		sections, err = e.bundleMemories(gctx, f, r)
		return err
	})
	if caps, err := e.capsules(); err == nil {
		g.Go(func() error {
			cs, _, err := caps.ListCapsules(gctx, f, graph.CapsuleQuery{Agent: p.ID, At: now}, graph.Page{Limit: MaxBundleCapsules})
			if err != nil {
				return fmt.Errorf("bundle capsules: %w", err)
			}
			capsules, err = e.resolveCapsules(gctx, p, cs, now, r.Channel)
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return BundleResponse{}, err
	}
	budget := r.TokenBudget
	if budget == 0 {
		budget = pol.Retrieval.TokenBudget
	}
	b := &bundleBudget{BundleBudget: BundleBudget{Tokens: budget, Omitted: map[string]int{}}}
	resp := BundleResponse{Scope: f.Scope, AgentID: p.ID, SessionID: r.SessionID,
		Decisions: b.fit(SectionDecisions, sections[SectionDecisions]), Capsules: []CapsuleView{}}
	for _, c := range capsules {
		c.Items = b.fit(SectionCapsules, c.Items)
		resp.Capsules = append(resp.Capsules, c)
	}
	resp.Tasks = b.fit(SectionTasks, sections[SectionTasks])
	resp.Session = b.fit(SectionSession, sections[SectionSession])
	if len(b.Omitted) == 0 {
		b.Omitted = nil
	}
	resp.Budget = b.BundleBudget
	return resp, nil
}

// bundleMemories reads the memory sections of a bundle under f: decisions
// by visibility, tasks, the session's memories; each memory once, edits
// applied, current versions loaded.
func (e *Engine) bundleMemories(ctx context.Context, f graph.Filter, r BundleRequest) (map[string][]ItemView, error) {
	type query struct {
		section string
		f       graph.Filter
	}
	var qs []query
	for _, v := range DecisionOrder {
		q := f
		q.Types, q.Visibility, q.ProjectID = []string{TypeDecision}, []graph.Visibility{v}, r.ProjectID
		if v == graph.VisibilitySession {
			if r.SessionID == "" {
				continue // another session's decisions are not this agent's
			}
			q.SessionID = r.SessionID
		}
		qs = append(qs, query{SectionDecisions, q})
	}
	tasks := f
	tasks.Types, tasks.ProjectID = []string{TypeTask}, r.ProjectID
	qs = append(qs, query{SectionTasks, tasks})
	if r.SessionID != "" {
		session := f
		session.SessionID = r.SessionID
		qs = append(qs, query{SectionSession, session})
	}
	// The listings run concurrently (each its own round trip; the store's
	// pool bounds them) and are merged in order, so the result is the
	// same as reading them one after the other.
	lists := make([][]graph.Memory, len(qs))
	g, gctx := errgroup.WithContext(ctx)
	for i, q := range qs {
		g.Go(func() error {
			l, err := e.store.ListMemories(gctx, q.f, graph.Page{Limit: MaxBundleSection})
			if err != nil {
				return fmt.Errorf("bundle %s: %w", q.section, err)
			}
			lists[i] = l.Memories
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	var (
		hs      []*hit
		section = map[*hit]string{}
		seen    = map[string]bool{}
	)
	for i, q := range qs {
		for _, m := range lists[i] {
			if seen[m.ID] {
				continue
			}
			seen[m.ID] = true
			h := &hit{mem: m}
			hs = append(hs, h)
			section[h] = q.section
		}
	}
	hs, err := e.effectiveHits(ctx, f, hs)
	if err != nil {
		return nil, err
	}
	out := map[string][]ItemView{}
	for _, h := range hs {
		out[section[h]] = append(out[section[h]], memoryItem(h))
	}
	return out, nil
}

// bundleBudget spends a token budget on items in the order offered.
type bundleBudget struct {
	BundleBudget
}

// fit keeps the items of section that fit what is left of the budget (a
// budget of 0 keeps everything), counting the others as omitted. An item
// that does not fit does not stop a smaller one after it.
func (b *bundleBudget) fit(section string, items []ItemView) []ItemView {
	out := make([]ItemView, 0, len(items))
	for _, it := range items {
		n := it.tokens()
		if b.Tokens > 0 && b.Used+n > b.Tokens {
			b.Omitted[section]++
			continue
		}
		b.Used += n
		out = append(out, it)
	}
	return slices.Clip(out)
}
