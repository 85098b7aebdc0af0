package engine

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/mnemo-dev/mnemo/graph"
	"github.com/mnemo-dev/mnemo/policy"
)

// Audit actions of forgetting. Their events carry ids, counts and the
// requester's reason, never a memory's content.
const (
	AuditArchive   = "memory.archive"
	AuditRestore   = "memory.restore"
	AuditErase     = "memory.erase"
	AuditEraseUser = "user.erase"
	subjectUser    = "User"
)

// Forgotten is the outcome of an archive or a restore: the memory as it is
// now.
type Forgotten struct {
	Memory graph.Memory `json:"memory"`
}

// EraseResult is the outcome of an erase.
type EraseResult struct {
	// IDs are the memories erased now; a memory erased before is not
	// listed.
	IDs []string `json:"ids"`
	graph.Erasure
	// Skipped counts a user's memories the principal reads but may not
	// erase (in a scope above its own): they are left as they are.
	Skipped int `json:"skipped,omitempty"`
}

// notErased is every status but erased: what an archive, restore or erase
// may find.
var notErased = []graph.Status{graph.StatusActive, graph.StatusSuperseded, graph.StatusArchived, graph.StatusRetracted}

// Archive hides memory id: reads skip it unless they ask for archived
// memories, and Restore brings it back unchanged. It needs write, and the
// memory's user must be p's own (or p may act as any user).
func (e *Engine) Archive(ctx context.Context, p graph.Principal, id, reason string) (Forgotten, error) {
	return e.lifecycle(ctx, p, id, reason, AuditArchive, e.store.Archive)
}

// Restore makes an archived memory active again, under Archive's rules.
func (e *Engine) Restore(ctx context.Context, p graph.Principal, id, reason string) (Forgotten, error) {
	return e.lifecycle(ctx, p, id, reason, AuditRestore, e.store.Restore)
}

func (e *Engine) lifecycle(ctx context.Context, p graph.Principal, id, reason, action string,
	change func(context.Context, graph.Scope, string, ...graph.AuditEvent) error) (Forgotten, error) {
	pol := e.policy.Current()
	if err := authorize(pol, p, PermWrite); err != nil {
		return Forgotten{}, err
	}
	m, err := e.target(ctx, pol, p, id)
	if err != nil {
		return Forgotten{}, fmt.Errorf("%s %s: %w", action, id, err)
	}
	if err := mayWriteAs(pol, p, m.UserID); err != nil {
		return Forgotten{}, err
	}
	// The change and its audit event: one transaction.
	ev := graph.AuditEvent{ID: graph.NewID(), Scope: m.Scope, Action: action, SubjectKind: subjectMemory, SubjectID: id,
		ActorID: p.ID, Outcome: map[string]string{AuditArchive: "archived", AuditRestore: "restored"}[action],
		Reason: truncate(reason, graph.MaxTitleLen), CreatedAt: e.now().UTC()}
	if err := change(ctx, m.Scope, id, ev); err != nil {
		return Forgotten{}, fmt.Errorf("%s %s: %w", action, id, err)
	}
	f, _ := readFilter(pol, p, nil, graph.Filter{Statuses: notErased})
	if m, err = e.store.GetMemory(ctx, f, id); err != nil {
		return Forgotten{}, fmt.Errorf("%s %s: %w", action, id, err)
	}
	return Forgotten{Memory: m}, nil
}

// target reads memory id for a change by p: a memory p reads (in any
// status but erased) in a scope p may write (its own, or beneath it with
// subscopes).
func (e *Engine) target(ctx context.Context, pol *policy.Policy, p graph.Principal, id string) (graph.Memory, error) {
	f, err := readFilter(pol, p, nil, graph.Filter{Statuses: []graph.Status{graph.StatusActive, graph.StatusSuperseded, graph.StatusArchived, graph.StatusRetracted, graph.StatusErased}})
	if err != nil {
		return graph.Memory{}, err
	}
	m, err := e.store.GetMemory(ctx, f, id)
	if err != nil {
		return graph.Memory{}, err
	}
	if _, err := scopeFor(pol, p, &m.Scope); err != nil {
		return graph.Memory{}, err
	}
	return m, nil
}

// mayErase checks that p may erase the memories of user: with the erase
// permission any user's, with write its own user's.
func mayErase(pol *policy.Policy, p graph.Principal, user string) error {
	if pol.Allows(p.Roles, policy.PermErase) {
		return nil
	}
	if user != "" && user == p.User() && pol.Allows(p.Roles, PermWrite) {
		return nil
	}
	return fmt.Errorf("%w: principal %q may not erase memories of user %q: needs permission %s",
		graph.ErrForbidden, p.ID, user, policy.PermErase)
}

// Erase removes memory id's content for good (graph/forget.go says what goes
// and what stays), from the graph, its keyword data and the vector index,
// and audits it without content. reason is the requester's (e.g. a ticket
// number) and must not quote the memory. Erasing an erased memory erases
// nothing and succeeds.
func (e *Engine) Erase(ctx context.Context, p graph.Principal, id, reason string) (EraseResult, error) {
	pol := e.policy.Current()
	m, err := e.target(ctx, pol, p, id)
	if err != nil {
		return EraseResult{}, fmt.Errorf("erase %s: %w", id, err)
	}
	if err := mayErase(pol, p, m.UserID); err != nil {
		return EraseResult{}, err
	}
	if m.Status == graph.StatusErased {
		return EraseResult{IDs: []string{}}, nil
	}
	return e.erase(ctx, p, m.Scope, []string{id}, reason)
}

// erase erases ids (at most graph.MaxEraseBatch) in scope s, audits each and
// deletes their vector points; more audit events go in the same
// transaction.
func (e *Engine) erase(ctx context.Context, p graph.Principal, s graph.Scope, ids []string, reason string, more ...graph.AuditEvent) (EraseResult, error) {
	now := e.now().UTC()
	events := make([]graph.AuditEvent, len(ids), len(ids)+len(more))
	for i, id := range ids {
		events[i] = graph.AuditEvent{ID: graph.NewID(), Scope: s, Action: AuditErase, SubjectKind: subjectMemory,
			SubjectID: id, ActorID: p.ID, Outcome: "erased", Reason: truncate(reason, graph.MaxTitleLen), CreatedAt: now}
	}
	events = append(events, more...)
	out, err := e.store.Erase(ctx, s, graph.EraseInput{IDs: ids, Index: e.enqueue, Audit: events})
	if err != nil {
		return EraseResult{}, fmt.Errorf("erase: %w", err)
	}
	e.stmts.clear() // it may hold statements of the erased content
	if e.index != nil {
		// The queued deletes would do it at the next drain; do it now so
		// the vector index forgets as soon as the graph has. A failure
		// leaves it to the outbox.
		if err := e.index.Delete(ctx, ids); err != nil {
			e.log.Warn("vector delete after erase failed; the outbox retries it", "err", err)
		}
	}
	return EraseResult{IDs: ids, Erasure: out}, nil
}

// EraseUser erases every memory of user that p reaches, in batches of
// graph.MaxEraseBatch, each one transaction (a failure part way leaves the
// batches before it erased; running it again finishes the job). It needs
// the erase permission, or write when user is p's own. Memories the user
// writes while it runs may be left. Each memory's erase is audited in its
// batch's transaction; one more event (user.erase) records the whole
// request, in the last batch's transaction (alone when there was nothing
// to erase), so a request that returns without error is audited.
func (e *Engine) EraseUser(ctx context.Context, p graph.Principal, user, reason string) (EraseResult, error) {
	pol := e.policy.Current()
	if err := graph.CheckID("user", user); err != nil {
		return EraseResult{}, err
	}
	if err := authorize(pol, p, PermRead); err != nil {
		return EraseResult{}, err
	}
	if err := mayErase(pol, p, user); err != nil {
		return EraseResult{}, err
	}
	// The erase reaches every private memory of the user (the permission
	// said so), in p's scope and beneath it when p may act there.
	f := graph.Filter{Scope: p.Scope, UserID: user, Statuses: notErased,
		Reader: graph.Reader{AllUsers: true, Subscopes: pol.Allows(p.Roles, policy.PermSubscopes)}}
	res := EraseResult{IDs: []string{}}
	page := graph.Page{Limit: graph.MaxEraseBatch}
	for {
		l, err := e.store.ListMemories(ctx, f, page)
		if err != nil {
			return res, fmt.Errorf("erase user %s: %w", user, err)
		}
		byScope := map[graph.Scope][]string{}
		for _, m := range l.Memories {
			if !p.Scope.Contains(m.Scope) {
				res.Skipped++ // a scope above p's: not p's to erase
				continue
			}
			byScope[m.Scope] = append(byScope[m.Scope], m.ID)
		}
		scopes := slices.SortedFunc(maps.Keys(byScope), func(a, b graph.Scope) int { return strings.Compare(scopeName(a), scopeName(b)) })
		for i, s := range scopes {
			var summary []graph.AuditEvent
			if l.NextCursor == "" && i == len(scopes)-1 { // the request's last batch
				summary = append(summary, eraseUserEvent(p, user, reason, res.Memories+len(byScope[s]), e.now()))
			}
			r, err := e.erase(ctx, p, s, byScope[s], reason, summary...)
			if err != nil {
				return res, fmt.Errorf("erase user %s: %w", user, err)
			}
			res.IDs = append(res.IDs, r.IDs...)
			res.Erasure = res.Erasure.Add(r.Erasure)
		}
		if l.NextCursor == "" {
			if len(scopes) == 0 { // nothing in the last page: the summary alone
				if err := e.store.AppendAudit(ctx, eraseUserEvent(p, user, reason, res.Memories, e.now())); err != nil {
					return res, fmt.Errorf("erase user %s: audit: %w", user, err)
				}
			}
			break
		}
		page.Cursor = l.NextCursor
	}
	return res, nil
}

// eraseUserEvent is the audit event of a user's erase that erased n
// memories.
func eraseUserEvent(p graph.Principal, user, reason string, n int, at time.Time) graph.AuditEvent {
	return graph.AuditEvent{ID: graph.NewID(), Scope: p.Scope, Action: AuditEraseUser, SubjectKind: subjectUser, SubjectID: user,
		ActorID: p.ID, Outcome: fmt.Sprintf("erased %d memories", n), Reason: truncate(reason, graph.MaxTitleLen), CreatedAt: at.UTC()}
}
