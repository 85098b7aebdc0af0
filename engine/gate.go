package engine

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/mnemo-dev/mnemo/graph"
)

// Audit actions of the write path. Every gate decision is one AuditEvent
// carrying the rule that decided. An approval that creates a memory is
// written in the same transaction as the memory (MemoryInput.Audit), so the
// number of memories always equals the number of AuditGateApprove events.
const (
	// AuditGateApprove: the gate (or a librarian) approved a new memory.
	AuditGateApprove = "gate.approve"
	// AuditGateApproveVersion: the gate approved a new version of an
	// existing memory (a changed document).
	AuditGateApproveVersion = "gate.approve_version"
	// AuditGateQueue: the gate queued a write as a GateRequest.
	AuditGateQueue = "gate.queue"
	// AuditGateReject: the gate rejected a write.
	AuditGateReject = "gate.reject"
	// AuditIntegrityReject: the write contradicts the stored state (e.g.
	// supersedes names a memory that is no longer active).
	AuditIntegrityReject = "ingest.reject"
	// AuditPossibleContradiction: a new memory was kept beside an active
	// one under its key that it may contradict (the event's reason names
	// the other memory); neither hides the other.
	AuditPossibleContradiction = "ingest.possible_contradiction"
	// AuditLibrarianApprove and AuditLibrarianReject settle a GateRequest.
	AuditLibrarianApprove = "librarian.approve"
	AuditLibrarianReject  = "librarian.reject"
	// AuditBacklogArchive: a mirrored document's file is gone.
	AuditBacklogArchive = "backlog.archive"
	// AuditPolicyReload: the running policy was replaced.
	AuditPolicyReload = "policy.reload"
)

// Audit subject kinds (graph labels).
const (
	subjectMemory      = "Memory"
	subjectVersion     = "Version"
	subjectGateRequest = "GateRequest"
	subjectIngest      = "IngestRequest"
	subjectPolicy      = "Policy"
)

// queuedWrite is the payload of a GateRequest: the request as stated (scope
// resolved) and who asked, so approval replays it through the pipeline
// minus the gate.
type queuedWrite struct {
	Request   IngestRequest   `json:"request"`
	Principal graph.Principal `json:"principal"`
}

// approveAudit is the event written with an approved memory or version.
func approveAudit(pl *plan, action, actor string, now time.Time) graph.AuditEvent {
	outcome := "approved"
	switch pl.act {
	case actSupersede:
		outcome = "approved: supersedes " + pl.targetID()
	case actVersion:
		outcome = "approved: new version of " + pl.targetID()
	}
	ev := graph.AuditEvent{
		ID: graph.NewID(), Scope: pl.in.Memory.Scope, Action: action, SubjectKind: subjectMemory,
		ActorID: actor, Rule: pl.rule, Outcome: outcome, Reason: pl.reason, CreatedAt: now,
	}
	if action == AuditGateApproveVersion {
		ev.SubjectKind, ev.SubjectID = subjectVersion, pl.in.Version.ID
	}
	return ev
}

// contradictionAudits are the events that flag the possible contradictions
// of a new memory, written in its transaction.
func contradictionAudits(pl *plan, actor string, now time.Time) []graph.AuditEvent {
	var out []graph.AuditEvent
	for _, c := range pl.contradicts {
		out = append(out, graph.AuditEvent{
			ID: graph.NewID(), Scope: pl.in.Memory.Scope, Action: AuditPossibleContradiction, SubjectKind: subjectMemory,
			ActorID: actor, Rule: "integrity:canonical-key", Outcome: "kept both: may contradict " + c.id,
			Reason: fmt.Sprintf("memory %s holds key %s: %s", c.id, c.key, c.reason), CreatedAt: now,
		})
	}
	return out
}

// rejectAudit is the event of a rejected write; its subject is the
// request, identified by pl.auditID (returned to the caller).
func rejectAudit(pl *plan, now time.Time) graph.AuditEvent {
	action := AuditGateReject
	if pl.conflict {
		action = AuditIntegrityReject
	}
	pl.auditID = graph.NewID()
	return graph.AuditEvent{
		ID: graph.NewID(), Scope: pl.in.Memory.Scope, Action: action, SubjectKind: subjectIngest,
		SubjectID: pl.auditID, ActorID: pl.principal.ID, Rule: pl.rule, Outcome: "rejected",
		Reason: truncate(pl.reason+"; fix: "+pl.fix, graph.MaxTitleLen), CreatedAt: now,
	}
}

// gateRequest builds the queued write and its audit event.
func gateRequest(pl *plan, now time.Time) (graph.GateRequest, graph.AuditEvent, error) {
	payload, err := json.Marshal(queuedWrite{Request: pl.req, Principal: pl.principal})
	if err != nil {
		return graph.GateRequest{}, graph.AuditEvent{}, fmt.Errorf("encode queued write: %w", err)
	}
	g := graph.GateRequest{
		ID: graph.NewID(), Scope: pl.in.Memory.Scope, Title: truncate(pl.in.Memory.Title, graph.MaxTitleLen),
		Status: graph.GatePending, Rule: pl.rule, Reason: pl.reason, Payload: payload,
		RequestedBy: pl.principal.ID, CreatedAt: now,
	}
	ev := graph.AuditEvent{
		ID: graph.NewID(), Scope: g.Scope, Action: AuditGateQueue, SubjectKind: subjectGateRequest,
		SubjectID: g.ID, ActorID: pl.principal.ID, Rule: pl.rule, Outcome: "queued", Reason: pl.reason, CreatedAt: now,
	}
	return g, ev, nil
}

// truncate cuts s to at most n bytes on a rune boundary.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !isRuneStart(s[n]) {
		n--
	}
	return s[:n]
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }
