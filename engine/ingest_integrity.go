package engine

import (
	"context"
	"errors"
	"fmt"
	"sort"

	"github.com/mnemo-dev/mnemo/extract"
	"github.com/mnemo-dev/mnemo/graph"
	"github.com/mnemo-dev/mnemo/policy"
)

// allStatuses admits every memory status, for lookups that must see a
// memory whatever became of it.
var allStatuses = []graph.Status{graph.StatusActive, graph.StatusSuperseded, graph.StatusArchived, graph.StatusRetracted}

// nsKey is a canonical key within its namespace.
type nsKey struct {
	ns  graph.Namespace
	key string
}

// batch is what the items of one ingest batch see of the items before
// them: the approved writes by key and in order, and the stored or earlier
// memories a later item replaces.
type batch struct {
	byKey map[nsKey]*plan
	plans []*plan
	// byWord indexes plans by content word: an item meets as candidates
	// only the earlier ones it shares a word with.
	byWord map[string][]*plan
	// replaced maps the id of a memory superseded within the batch to the
	// plan that supersedes it: a later item meets the new memory instead.
	replaced map[string]*plan
}

func newBatch() *batch {
	return &batch{byKey: map[nsKey]*plan{}, byWord: map[string][]*plan{}, replaced: map[string]*plan{}}
}

// head follows in-batch supersessions from h to the memory that holds its
// fact now.
func (b *batch) head(h holder) holder {
	for i := 0; i < len(b.replaced); i++ { // bounded: a chain never loops
		t, ok := b.replaced[h.id()]
		if !ok {
			break
		}
		h = holder{plan: t, content: t.in.Version.Content}
	}
	return h
}

// add records an approved write.
func (b *batch) add(pl *plan) {
	if k := pl.in.Memory.CanonicalKey; k != "" && pl.dedupe {
		b.byKey[nsKey{pl.namespace(), k}] = pl
	}
	if pl.dedupe && !pl.doc {
		b.plans = append(b.plans, pl)
		for _, w := range pl.statement().Words() {
			b.byWord[w] = append(b.byWord[w], pl)
		}
	}
	if pl.act == actSupersede {
		b.replaced[pl.targetID()] = pl
	}
}

// planIntegrity decides, for every item, reinforce, supersede, new version
// or new memory (integrity), then applies the gate: a rejection stands, a
// queue turns any write into a GateRequest, and a reinforcement goes ahead
// unless the gate rejects (it writes nothing new). Items of one batch see
// each other: a later item with the key of an earlier approved one
// reinforces, supersedes or versions it.
func (e *Engine) planIntegrity(ctx context.Context, plans []*plan, o ingestOpts) error {
	inBatch := newBatch()
	for _, pl := range plans {
		if err := ctx.Err(); err != nil {
			return err
		}
		if o.approvedBy != "" {
			pl.gate = policy.GateDecision{Action: policy.ActionApprove, Rule: o.rule, Reason: o.note}
		}
		pl.rule, pl.reason = pl.gate.Rule, pl.gate.Reason
		if pl.gate.Action == policy.ActionReject {
			pl.act, pl.fix = actReject, gateFix(pl)
			continue
		}
		if err := e.integrity(ctx, pl, inBatch); err != nil {
			return err
		}
		switch {
		case pl.act == actReject, pl.act == actReinforce:
			continue
		case pl.gate.Action == policy.ActionQueue:
			pl.act = actQueue
			continue
		}
		inBatch.add(pl)
	}
	return nil
}

// integrity sets pl.act (and its target) from the stored state.
func (e *Engine) integrity(ctx context.Context, pl *plan, inBatch *batch) error {
	pl.act = actNew
	if id := pl.req.Supersedes; id != "" {
		return e.explicitSupersede(ctx, pl, id)
	}
	if pl.baseKey == "" || !pl.dedupe {
		return nil
	}
	if pl.doc {
		return e.documentIntegrity(ctx, pl, inBatch)
	}
	return e.keyIntegrity(ctx, pl, inBatch)
}

// holder is the active memory (stored, or written earlier in the batch)
// that holds a key, with the content of its current version.
type holder struct {
	memory  graph.Memory
	plan    *plan
	content string
	// version is the id of the stored version content is of; stmt its
	// statement when it was cached (content is then left empty).
	version string
	stmt    *extract.Statement
	// weak: a candidate found by content that shares its subject but few
	// words with the statement; it is reinforced or superseded on
	// Relate's word, never flagged.
	weak bool
}

// holderStatement is h's content analysed by x: the in-batch plan's, the
// cached one of its stored version, or analysed now.
func (e *Engine) holderStatement(x *extract.Extractor, h holder) extract.Statement {
	switch {
	case h.stmt != nil:
		return *h.stmt
	case h.plan != nil && h.content == h.plan.in.Version.Content:
		return h.plan.statement()
	}
	return e.statementOf(x, h.version, h.content)
}

// key is the holder's canonical key.
func (h holder) key() string {
	if h.plan != nil {
		return h.plan.in.Memory.CanonicalKey
	}
	return h.memory.CanonicalKey
}

func (h holder) id() string {
	if h.plan != nil {
		return h.plan.memoryID()
	}
	return h.memory.ID
}

// findHolder returns the holder of key in pl's namespace, if any.
func (e *Engine) findHolder(ctx context.Context, pl *plan, inBatch *batch, key string) (holder, bool, error) {
	if t, ok := inBatch.byKey[nsKey{pl.namespace(), key}]; ok {
		return holder{plan: t, content: t.in.Version.Content}, true, nil
	}
	old, err := e.store.FindActiveByKey(ctx, pl.namespace(), key)
	if errors.Is(err, graph.ErrNotFound) {
		return holder{}, false, nil
	}
	if err != nil {
		return holder{}, false, fmt.Errorf("find memory by key %s: %w", key, err)
	}
	v, err := e.store.GetVersion(ctx, graph.Filter{Scope: old.Scope, Reader: graph.System, Statuses: allStatuses}, old.CurrentVersionID)
	if err != nil {
		return holder{}, false, fmt.Errorf("current version of memory %s: %w", old.ID, err)
	}
	return inBatch.head(holder{memory: old, content: v.Content, version: v.ID}), true, nil
}

// keyIntegrity decides between reinforce, supersede and a new memory for a
// statement with a canonical key. A key only says two statements may be
// about one slot; extract.Compare says whether they are. The statement
// tries its key, then its slot key (subject and verb), then its fact key
// (content words): the first free key is its own. A key that embeds a value
// ("I live in Berlin") or a paraphrase ("tyres", "tires") misses the memory
// it restates or updates, so the few active memories of the namespace
// closest in content (candidates) are related to it as well. A holder or
// candidate that restates it is reinforced; one it updates (same slot, new
// value) is superseded; one that states a different fact is passed over,
// and one it may contradict is named in the result and an audit event —
// both memories stay. A key the caller chose names the slot itself:
// anything but a restatement supersedes, and no candidates are sought.
func (e *Engine) keyIntegrity(ctx context.Context, pl *plan, inBatch *batch) error {
	stmt := pl.statement()
	keys := []string{pl.baseKey}
	if !pl.callerKey {
		keys = append(keys, pl.x.SlotKey(pl.baseKey, stmt), pl.x.FactKey(pl.baseKey, stmt))
	}
	own, free := "", false
	seen := map[string]bool{}
	for _, key := range keys {
		h, ok, err := e.findHolder(ctx, pl, inBatch, key)
		if err != nil {
			return err
		}
		if !ok {
			own, free = key, true
			break
		}
		seen[h.id()] = true
		if e.relate(pl, h, stmt, key, pl.callerKey) {
			return nil
		}
	}
	if !pl.callerKey {
		cands, err := e.candidates(ctx, pl, inBatch, stmt, seen)
		if err != nil {
			return err
		}
		for _, h := range cands {
			if e.relate(pl, h, stmt, own, false) {
				return nil
			}
		}
	}
	pl.in.Memory.CanonicalKey = own
	if !free {
		// Every key is held by another fact (a hash collision): keep the
		// memory without a key rather than hide either.
		pl.in.ExclusiveKey = false
	}
	return nil
}

// relate decides pl against the holder h: it reinforces a restatement,
// supersedes an update (the new memory taking key), notes a possible
// contradiction, and reports whether it decided.
func (e *Engine) relate(pl *plan, h holder, stmt extract.Statement, key string, callerKey bool) bool {
	c := pl.x.Relate(e.holderStatement(pl.x, h), stmt)
	if callerKey && c.Relation != extract.Restates {
		c = extract.Comparison{Relation: extract.Updates, Reason: "the caller's canonical key names the slot"}
	}
	switch c.Relation {
	case extract.Restates:
		pl.act, pl.target, pl.targetPlan = actReinforce, h.memory, h.plan
		if t := h.plan; t != nil && (t.act == actNew || t.act == actSupersede) {
			t.in.Memory.AccessCount++
		}
		pl.decision = c.Reason
		return true
	case extract.Updates:
		pl.act, pl.target, pl.targetPlan = actSupersede, h.memory, h.plan
		pl.in.Memory.CanonicalKey = key
		if key == "" {
			pl.in.ExclusiveKey = false
		}
		pl.decision = c.Reason
		return true
	case extract.Unsure:
		if h.weak {
			return false
		}
		pl.contradicts = append(pl.contradicts, contradiction{id: h.id(), key: h.key(), reason: c.Reason})
	}
	return false
}

// Candidate retrieval: how many memories the keyword index is asked for,
// and the share of content words a candidate must have in common with the
// statement (extract.Overlap) to be related to it at all. Below the floor
// two statements are not about one thing, and Relate is not asked.
const (
	candidatePool  = 4
	candidateFloor = 0.5
)

// candidates are the active memories of pl's namespace, written earlier in
// the batch or stored, that share most content words with stmt, best
// first, leaving out those already related (seen).
func (e *Engine) candidates(ctx context.Context, pl *plan, inBatch *batch, stmt extract.Statement, seen map[string]bool) ([]holder, error) {
	type cand struct {
		h       holder
		overlap float64
	}
	own := stmt
	var out []cand
	consider := func(h holder) {
		h = inBatch.head(h)
		if seen[h.id()] || h.id() == "" {
			return
		}
		seen[h.id()] = true
		st := e.holderStatement(pl.x, h)
		o := pl.x.Overlap(st, own)
		if o < candidateFloor && !pl.x.SameSubject(st, own) {
			return
		}
		h.weak = o < candidateFloor
		out = append(out, cand{h, o})
	}
	ns := pl.namespace()
	shares := map[*plan]bool{}
	for _, w := range stmt.Words() {
		for _, t := range inBatch.byWord[w] {
			shares[t] = true
		}
	}
	for _, t := range inBatch.plans { // in batch order
		if shares[t] && t != pl && t.namespace() == ns {
			consider(holder{plan: t, content: t.in.Version.Content})
		}
	}
	f := graph.Filter{Scope: ns.Scope, Reader: graph.System, UserID: ns.UserID, Types: []string{ns.Type}}
	hits, err := e.store.KeywordSearch(ctx, f, keywordQuery(pl.in.Version.Content), candidatePool)
	if err != nil {
		return nil, fmt.Errorf("candidate memories: %w", err)
	}
	var found []graph.Memory
	for _, hit := range hits {
		m := hit.Memory
		// The filter admits the scope's ancestors and, with no user, every
		// user's memories: a candidate is of this namespace exactly.
		if m.Scope != ns.Scope || m.UserID != ns.UserID || m.Type != ns.Type || m.Status != graph.StatusActive || seen[m.ID] {
			continue
		}
		if _, ok := inBatch.replaced[m.ID]; ok {
			consider(holder{memory: m})
			continue
		}
		found = append(found, m)
	}
	// A candidate whose version's statement is cached needs no content.
	cached := map[string]extract.Statement{}
	var vids []string
	for _, m := range found {
		if st, ok := e.stmts.get(pl.x, m.CurrentVersionID); ok {
			cached[m.CurrentVersionID] = st
		} else {
			vids = append(vids, m.CurrentVersionID)
		}
	}
	content := map[string]string{}
	if len(vids) > 0 {
		vs, err := e.store.GetVersions(ctx, graph.Filter{Scope: ns.Scope, Reader: graph.System, Statuses: allStatuses}, vids)
		if err != nil {
			return nil, fmt.Errorf("current versions of candidate memories: %w", err)
		}
		for _, v := range vs {
			content[v.ID] = v.Content
		}
	}
	for _, m := range found {
		vid := m.CurrentVersionID
		if st, ok := cached[vid]; ok {
			consider(holder{memory: m, version: vid, stmt: &st})
		} else if c, ok := content[vid]; ok {
			consider(holder{memory: m, content: c, version: vid})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].overlap > out[j].overlap })
	hs := make([]holder, len(out))
	for i, c := range out {
		hs[i] = c.h
	}
	return hs, nil
}

// documentIntegrity: a document is identified by its source; the same
// content reinforces it, other content is its new version.
func (e *Engine) documentIntegrity(ctx context.Context, pl *plan, inBatch *batch) error {
	h, ok, err := e.findHolder(ctx, pl, inBatch, pl.baseKey)
	if err != nil || !ok {
		return err
	}
	pl.target, pl.targetPlan = h.memory, h.plan
	pl.act = actVersion
	if graph.ContentHash(h.content) == pl.in.Version.ContentHash {
		pl.act = actReinforce
		if t := h.plan; t != nil && (t.act == actNew || t.act == actSupersede) {
			t.in.Memory.AccessCount++
		}
	}
	return nil
}

// explicitSupersede honours supersedes: id. The memory must exist in the
// writer's scope, be readable by the writer and be active; otherwise the
// write is rejected with a fix. Superseding a memory another user owns
// needs the act_as_user permission (ErrForbidden).
func (e *Engine) explicitSupersede(ctx context.Context, pl *plan, id string) error {
	s := pl.in.Memory.Scope
	f := graph.Filter{Scope: s, Reader: pl.reader, Statuses: allStatuses}
	old, err := e.store.GetMemory(ctx, f, id)
	switch {
	case errors.Is(err, graph.ErrNotFound):
		e.rejectConflict(pl, "supersedes-missing", fmt.Sprintf("memory %s (named in supersedes) does not exist in this scope", id),
			"check the id, or leave supersedes out to write a new memory")
		return nil
	case err != nil:
		return fmt.Errorf("memory %s named in supersedes: %w", id, err)
	case old.Status != graph.StatusActive:
		fix := fmt.Sprintf("memory %s is %s: leave supersedes out to write a new memory", id, old.Status)
		if old.SupersededBy != "" {
			head := e.chainHead(ctx, f, old)
			fix = fmt.Sprintf("memory %s is superseded; the head of its chain is %s: supersede %s instead", id, head, head)
		}
		e.rejectConflict(pl, "supersedes-inactive", fmt.Sprintf("memory %s (named in supersedes) is %s, not active", id, old.Status), fix)
		return nil
	case old.Scope != s:
		e.rejectConflict(pl, "supersedes-scope", fmt.Sprintf("memory %s (named in supersedes) lives in another scope", id),
			"write in the memory's own scope, or leave supersedes out")
		return nil
	case old.UserID != "" && old.UserID != pl.principal.User() && !pl.actAsUser:
		return fmt.Errorf("%w: principal %q may not supersede memory %s of user %q: needs permission %s",
			graph.ErrForbidden, pl.principal.ID, id, old.UserID, policy.PermActAsUser)
	}
	pl.act, pl.target = actSupersede, old
	return nil
}

func (e *Engine) rejectConflict(pl *plan, rule, reason, fix string) {
	pl.act, pl.conflict = actReject, true
	pl.rule, pl.reason, pl.fix = "integrity:"+rule, reason, fix
}

// gateFix suggests how to get a write the gate rejected through.
func gateFix(pl *plan) string {
	m := pl.in.Memory
	return fmt.Sprintf("gate rule %q refuses %s writes of type %s (%s.%s) from this principal%s; change what the rule matches or ask a librarian to write it",
		pl.gate.Rule, m.SourceKind, m.Type, m.Layer, m.Sublayer, channelNote(m.Channel))
}

func channelNote(ch string) string {
	if ch == "" {
		return ""
	}
	return fmt.Sprintf(" on channel %q", ch)
}

// chainHead is the id of the newest memory of m's supersession chain that
// f admits, or m's successor when the chain cannot be followed.
func (e *Engine) chainHead(ctx context.Context, f graph.Filter, m graph.Memory) string {
	head, err := e.headOf(ctx, f, m)
	if err != nil {
		e.log.Warn("resolve supersession chain", "memory", m.ID, "err", err)
	}
	if head == "" {
		return m.SupersededBy
	}
	return head
}
