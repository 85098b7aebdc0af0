package engine

import (
	"context"
	"errors"
	"fmt"

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

// planIntegrity decides, for every item, reinforce, supersede, new version
// or new memory (integrity), then applies the gate: a rejection stands, a
// queue turns any write into a GateRequest, and a reinforcement goes ahead
// unless the gate rejects (it writes nothing new). Items of one batch see
// each other: a later item with the key of an earlier approved one
// reinforces, supersedes or versions it.
func (e *Engine) planIntegrity(ctx context.Context, plans []*plan, o ingestOpts) error {
	inBatch := map[nsKey]*plan{}
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
		if k := pl.in.Memory.CanonicalKey; k != "" && pl.dedupe {
			inBatch[nsKey{pl.namespace(), k}] = pl
		}
	}
	return nil
}

// integrity sets pl.act (and its target) from the stored state.
func (e *Engine) integrity(ctx context.Context, pl *plan, inBatch map[nsKey]*plan) error {
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
}

func (h holder) id() string {
	if h.plan != nil {
		return h.plan.memoryID()
	}
	return h.memory.ID
}

// findHolder returns the holder of key in pl's namespace, if any.
func (e *Engine) findHolder(ctx context.Context, pl *plan, inBatch map[nsKey]*plan, key string) (holder, bool, error) {
	if t, ok := inBatch[nsKey{pl.namespace(), key}]; ok {
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
	return holder{memory: old, content: v.Content}, true, nil
}

// keyIntegrity decides between reinforce, supersede and a new memory for a
// statement with a canonical key. A key only says two statements may be
// about one slot; extract.Compare says whether they are. The statement
// tries its key, then its slot key (subject and verb), then its fact key
// (content words): the first free key is its own; a holder that restates
// it is reinforced; a holder it updates (same slot, new value) is
// superseded; a holder that states a different fact is passed over, and
// one it may contradict is named in the result and an audit event — both
// memories stay. A key the caller chose names the slot itself: anything
// but a restatement supersedes.
func (e *Engine) keyIntegrity(ctx context.Context, pl *plan, inBatch map[nsKey]*plan) error {
	stmt := pl.x.Statement(pl.in.Version.Content)
	keys := []string{pl.baseKey}
	if !pl.callerKey {
		keys = append(keys, pl.x.SlotKey(pl.baseKey, stmt), pl.x.FactKey(pl.baseKey, stmt))
	}
	for _, key := range keys {
		h, ok, err := e.findHolder(ctx, pl, inBatch, key)
		if err != nil {
			return err
		}
		if !ok {
			pl.in.Memory.CanonicalKey = key
			return nil
		}
		c := pl.x.Relate(pl.x.Statement(h.content), stmt)
		if pl.callerKey && c.Relation != extract.Restates {
			c = extract.Comparison{Relation: extract.Updates, Reason: "the caller's canonical key names the slot"}
		}
		switch c.Relation {
		case extract.Restates:
			pl.act, pl.target, pl.targetPlan = actReinforce, h.memory, h.plan
			if t := h.plan; t != nil && (t.act == actNew || t.act == actSupersede) {
				t.in.Memory.AccessCount++
			}
			pl.decision = c.Reason
			return nil
		case extract.Updates:
			pl.act, pl.target, pl.targetPlan = actSupersede, h.memory, h.plan
			pl.in.Memory.CanonicalKey = key
			pl.decision = c.Reason
			return nil
		case extract.Unsure:
			pl.contradicts = append(pl.contradicts, contradiction{id: h.id(), key: key, reason: c.Reason})
		}
	}
	// Every key is held by another fact (a hash collision): keep the
	// memory without a key rather than hide either.
	pl.in.Memory.CanonicalKey, pl.in.ExclusiveKey = "", false
	return nil
}

// documentIntegrity: a document is identified by its source; the same
// content reinforces it, other content is its new version.
func (e *Engine) documentIntegrity(ctx context.Context, pl *plan, inBatch map[nsKey]*plan) error {
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
