package engine

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/mnemo-dev/mnemo/graph"
	"github.com/mnemo-dev/mnemo/vector"
)

// write executes the plans: new memories first (one transaction per wave;
// a wave holds the items that do not supersede another item of the same
// batch), then new versions, reinforcements, queued requests and the audit
// events of rejections. Any error stops it; an ErrConflict from the first
// step (a concurrent writer superseded a target) leaves nothing written.
func (e *Engine) write(ctx context.Context, plans []*plan, o ingestOpts) error {
	now := e.now().UTC()
	actor := func(pl *plan) string {
		if o.approvedBy != "" {
			return o.approvedBy
		}
		return pl.principal.ID
	}
	if err := e.writeMemories(ctx, plans, actor, now, o); err != nil {
		return err
	}
	if err := e.writeVersions(ctx, plans, actor, now, o); err != nil {
		return err
	}
	if err := e.settleReinforced(ctx, plans, o); err != nil {
		return err
	}
	if err := e.reinforce(ctx, plans, now); err != nil {
		return err
	}
	var rejects []graph.AuditEvent
	for _, pl := range plans {
		switch pl.act {
		case actQueue:
			g, ev, err := gateRequest(pl, now)
			if err != nil {
				return err
			}
			if _, err := e.store.CreateGateRequest(ctx, g, ev); err != nil {
				return fmt.Errorf("queue write for a librarian: %w", err)
			}
			pl.requestID = g.ID
		case actReject:
			rejects = append(rejects, rejectAudit(pl, now))
		}
	}
	if len(rejects) > 0 {
		if err := e.store.AppendAudit(ctx, rejects...); err != nil {
			return fmt.Errorf("audit rejected writes: %w", err)
		}
	}
	return nil
}

// writeMemories creates the new memories, wave by wave.
func (e *Engine) writeMemories(ctx context.Context, plans []*plan, actor func(*plan) string, now time.Time, o ingestOpts) error {
	var waves [][]*plan
	for _, pl := range plans {
		if pl.act != actNew && pl.act != actSupersede {
			continue
		}
		if pl.act == actSupersede {
			pl.in.Supersedes = pl.targetID()
		}
		pl.in.Audit = append([]graph.AuditEvent{approveAudit(pl, AuditGateApprove, actor(pl), now)},
			contradictionAudits(pl, actor(pl), now)...)
		pl.in.Settles = o.settle.of(pl)
		pl.in.Version.Index = e.enqueue
		w := wave(pl)
		for len(waves) <= w {
			waves = append(waves, nil)
		}
		waves[w] = append(waves[w], pl)
	}
	for _, wv := range waves {
		ins := make([]graph.MemoryInput, len(wv))
		for i, pl := range wv {
			ins[i] = pl.in
		}
		created, err := e.store.CreateMemories(ctx, ins)
		if err != nil {
			return fmt.Errorf("write %d memories: %w", len(ins), err)
		}
		for i, pl := range wv {
			pl.memory, pl.version, pl.written = created[i].Memory, created[i].Version, true
			if pl.stmt != nil && pl.version.Content == pl.in.Version.Content {
				e.stmts.put(pl.x, pl.version.ID, *pl.stmt)
			}
		}
	}
	return nil
}

// settleReinforced settles the request of an approved replay that turned
// out to reinforce a stored memory, before the reinforcement: it writes
// nothing else, and a request settled meanwhile by another librarian stops
// it. (A failed reinforcement afterwards leaves an access count one short,
// never a memory without its decision.)
func (e *Engine) settleReinforced(ctx context.Context, plans []*plan, o ingestOpts) error {
	for _, pl := range plans {
		if pl.act != actReinforce {
			continue
		}
		if g := o.settle.of(pl); g != nil {
			if _, err := e.store.DecideGateRequest(ctx, g.Scope, g.RequestID, g.Decision, g.Audit); err != nil {
				return fmt.Errorf("settle gate request %s: %w", g.RequestID, err)
			}
		}
	}
	return nil
}

// wave is how many in-batch supersessions pl sits on.
func wave(pl *plan) int {
	t := pl.targetPlan
	if pl.act != actSupersede || t == nil || (t.act != actNew && t.act != actSupersede) {
		return 0
	}
	return wave(t) + 1
}

// writeVersions appends the new versions of changed documents, each with
// its approval's audit event in the same transaction.
func (e *Engine) writeVersions(ctx context.Context, plans []*plan, actor func(*plan) string, now time.Time, o ingestOpts) error {
	for _, pl := range plans {
		if pl.act != actVersion {
			continue
		}
		in := pl.in.Version
		in.Audit = []graph.AuditEvent{approveAudit(pl, AuditGateApproveVersion, actor(pl), now)}
		in.Index = e.enqueue
		in.Settles = o.settle.of(pl)
		v, err := e.store.AddVersion(ctx, pl.in.Memory.Scope, pl.targetID(), in)
		if err != nil {
			return fmt.Errorf("new version of %s: %w", pl.targetID(), err)
		}
		pl.memory, pl.version, pl.written = baseMemory(pl), v, true
	}
	return nil
}

// baseMemory is the memory a version plan adds to.
func baseMemory(pl *plan) graph.Memory {
	if pl.targetPlan != nil {
		if pl.targetPlan.act == actVersion {
			return baseMemory(pl.targetPlan)
		}
		return pl.targetPlan.memory
	}
	return pl.target
}

// reinforce touches the stored memories that identical items matched.
// Items matching a memory new in this batch already raised its initial
// access count.
func (e *Engine) reinforce(ctx context.Context, plans []*plan, now time.Time) error {
	type touch struct {
		scope graph.Scope
		ids   []string
	}
	var rounds []map[graph.Scope]*touch // a memory matched n times is touched in n rounds
	seen := map[string]int{}
	for _, pl := range plans {
		if pl.act != actReinforce || (pl.targetPlan != nil && pl.targetPlan.act != actVersion) {
			continue
		}
		id := pl.targetID()
		r := seen[id]
		seen[id]++
		for len(rounds) <= r {
			rounds = append(rounds, map[graph.Scope]*touch{})
		}
		s := pl.in.Memory.Scope
		if rounds[r][s] == nil {
			rounds[r][s] = &touch{scope: s}
		}
		rounds[r][s].ids = append(rounds[r][s].ids, id)
	}
	for _, round := range rounds {
		for _, t := range round {
			if err := e.store.Touch(ctx, t.scope, t.ids, now); err != nil {
				return fmt.Errorf("reinforce %d memories: %w", len(t.ids), err)
			}
		}
	}
	return nil
}

// embedding is an Embed call running beside the graph write.
type embedding struct {
	texts  []string
	vecs   [][]float32
	err    error
	done   chan struct{}
	cancel context.CancelFunc
}

// embedAhead starts embedding the index texts of every planned item while
// the integrity checks and the graph transaction run: on two cores the
// model (most of a short note's cost) and the store then overlap. Items that
// end up not written (reinforcements, queued for a librarian) cost an
// embedding for nothing; indexNow embeds any written text it lacks.
func (e *Engine) embedAhead(ctx context.Context, plans []*plan) *embedding {
	ctx, cancel := context.WithCancel(ctx)
	a := &embedding{done: make(chan struct{}), cancel: cancel}
	if e.index == nil {
		close(a.done)
		return a
	}
	seen := make(map[string]bool, len(plans))
	for _, pl := range plans {
		if t := graph.SearchText(pl.in.Version.IndexText, pl.in.Version.Content); !seen[t] {
			seen[t] = true
			a.texts = append(a.texts, t)
		}
	}
	go func() {
		defer close(a.done)
		a.vecs, a.err = e.embedder.Embed(ctx, a.texts)
	}()
	return a
}

// wait returns the vectors embedAhead computed, by text (nil if it failed).
func (a *embedding) wait() map[string][]float32 {
	<-a.done
	defer a.cancel()
	if a.err != nil || len(a.vecs) != len(a.texts) {
		return nil
	}
	out := make(map[string][]float32, len(a.texts))
	for i, t := range a.texts {
		out[t] = a.vecs[i]
	}
	return out
}

// indexNow upserts the new versions' vectors: those embedded ahead, and the
// rest embedded now in one call. A failure is logged, not returned: the
// outbox entry written with each version stays, and the drain loop delivers
// it later.
func (e *Engine) indexNow(ctx context.Context, plans []*plan, ahead map[string][]float32) {
	if e.index == nil {
		return
	}
	var (
		ready   []*plan
		vecs    [][]float32
		missing []string
		at      []int // index in vecs of each missing text
	)
	for _, pl := range plans {
		if !pl.written {
			continue
		}
		t := graph.SearchText(pl.in.Version.IndexText, pl.in.Version.Content)
		v, ok := ahead[t]
		if !ok {
			missing, at = append(missing, t), append(at, len(vecs))
		}
		ready, vecs = append(ready, pl), append(vecs, v)
	}
	if len(ready) == 0 {
		return
	}
	if len(missing) > 0 {
		got, err := e.embedder.Embed(ctx, missing)
		if err != nil {
			e.log.Warn("embed new versions failed; the outbox will retry", "count", len(missing), "err", err)
			return
		}
		for i, v := range got {
			vecs[at[i]] = v
		}
	}
	pts := make([]vector.Point, len(ready))
	for i, pl := range ready {
		pts[i] = point(pl.memory, pl.version.ID, vecs[i])
	}
	if err := e.index.Upsert(ctx, pts); err != nil {
		e.log.Warn("vector upsert failed; the outbox will retry", "count", len(pts), "err", err)
	}
}

// point is the vector index entry of memory m at version versionID.
func point(m graph.Memory, versionID string, vec []float32) vector.Point {
	return vector.Point{ID: m.ID, Vector: vec, Payload: VectorPayload(m, versionID)}
}

// VectorPayload is what the vector index stores of memory m at version
// versionID: every field vectorFilter pushes into the index (scope, owner,
// visibility, type, tags, subject, project, session, creation time). A
// memory's fields do not change after it is written (only its status, which
// the index does not carry), so the payload stays right until the next
// version. Benchmarks that load an index directly use it too.
func VectorPayload(m graph.Memory, versionID string) vector.Payload {
	return vector.Payload{
		MemoryID: m.ID, VersionID: versionID, TenantID: m.Scope.TenantID, OrgID: m.Scope.OrgID,
		RepoID: m.Scope.RepoID, UserID: m.UserID, Visibility: string(m.Visibility), Type: m.Type,
		Tags: slices.Clone(m.Tags), SubjectType: m.SubjectType, SubjectID: m.SubjectID,
		ProjectID: m.ProjectID, SessionID: m.SessionID, CreatedAt: m.CreatedAt,
	}
}
