package engine

import (
	"context"
	"errors"
	"fmt"

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
	m := pl.in.Memory
	if id := pl.req.Supersedes; id != "" {
		return e.explicitSupersede(ctx, pl, id)
	}
	if m.CanonicalKey == "" || !pl.dedupe {
		return nil
	}
	changed := actSupersede
	if pl.doc {
		changed = actVersion
	}
	if t, ok := inBatch[nsKey{pl.namespace(), m.CanonicalKey}]; ok {
		pl.targetPlan = t
		pl.act = changed
		if t.in.Version.ContentHash == pl.in.Version.ContentHash {
			pl.act = actReinforce
			if t.act == actNew || t.act == actSupersede {
				t.in.Memory.AccessCount++
			}
		}
		return nil
	}
	old, err := e.store.FindActiveByKey(ctx, pl.namespace(), m.CanonicalKey)
	if errors.Is(err, graph.ErrNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("find memory by key %s: %w", m.CanonicalKey, err)
	}
	v, err := e.store.GetVersion(ctx, graph.Filter{Scope: m.Scope, Reader: graph.System, Statuses: allStatuses}, old.CurrentVersionID)
	if err != nil {
		return fmt.Errorf("current version of memory %s: %w", old.ID, err)
	}
	pl.target = old
	pl.act = changed
	if v.ContentHash == pl.in.Version.ContentHash {
		pl.act = actReinforce
	}
	return nil
}

// explicitSupersede honours supersedes: id. The memory must exist in the
// writer's scope, be readable by the writer and be active; otherwise the
// write is rejected with a fix. Superseding a memory another user owns
// needs the act_as_user permission (ErrForbidden).
func (e *Engine) explicitSupersede(ctx context.Context, pl *plan, id string) error {
	s := pl.in.Memory.Scope
	old, err := e.store.GetMemory(ctx, graph.Filter{Scope: s, Reader: pl.reader, Statuses: allStatuses}, id)
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
			fix = fmt.Sprintf("memory %s is superseded by %s: supersede %s instead", id, old.SupersededBy, old.SupersededBy)
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
