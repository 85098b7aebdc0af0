package engine

import (
	"github.com/mnemo-dev/mnemo/extract"
	"github.com/mnemo-dev/mnemo/graph"
	"github.com/mnemo-dev/mnemo/policy"
)

// action is what the write path does with one item, decided by integrity
// and the gate.
type action int

const (
	actNew       action = iota // a new memory
	actSupersede               // a new memory that supersedes target
	actVersion                 // a new version of target (documents)
	actReinforce               // target exists with the same content: touch it
	actQueue                   // a GateRequest for a librarian
	actReject                  // nothing but the audit event
)

// plan carries one item through the write path.
type plan struct {
	idx       int
	principal graph.Principal
	// reader is what the principal may read (an explicit supersedes must
	// name a memory it can read); actAsUser whether it may supersede
	// another user's memory.
	reader    graph.Reader
	actAsUser bool
	// req is the request as stated, with its scope resolved: the payload of
	// a queued write.
	req IngestRequest
	// in is the write, fully prepared, with preset memory and version ids.
	in       graph.MemoryInput
	doc      bool // identity-keyed: changed content becomes a new version
	dedupe   bool // the type dedupes by canonical key (policy TypeDef.Dedupe)
	entities []string
	gate     policy.GateDecision
	x        *extract.Extractor // the policy's extractor: compares statements, derives keys
	// baseKey is the key the statement was given (SAQ, the caller's or a
	// document's); integrity may write it under a slot or fact key instead.
	baseKey   string
	callerKey bool               // the caller chose the key
	stmt      *extract.Statement // the content analysed, once: see statement
	exclusive bool               // the key is to be exclusive (reset restores it)

	// Integrity and gate outcome.
	act        action
	target     graph.Memory // existing memory reinforced, superseded or versioned
	targetPlan *plan        // in-batch item reinforced, superseded or versioned
	rule       string       // the rule that decided
	reason     string
	fix        string
	conflict   bool
	auditID    string // subject id of a rejection's audit event
	// decision says why integrity reinforced or superseded; contradicts
	// names the active memories the new one may contradict (both kept).
	decision    string
	contradicts []contradiction

	// Write outcome.
	memory    graph.Memory
	version   graph.Version
	requestID string
	written   bool
}

// reset forgets the integrity and write outcome before a re-plan.
func (pl *plan) reset() {
	pl.act, pl.target, pl.targetPlan = actNew, graph.Memory{}, nil
	pl.rule, pl.reason, pl.fix, pl.conflict = "", "", "", false
	pl.memory, pl.version, pl.requestID, pl.written = graph.Memory{}, graph.Version{}, "", false
	pl.in.Memory.AccessCount = 1
	pl.in.Memory.CanonicalKey, pl.in.ExclusiveKey = pl.baseKey, pl.exclusive
	pl.decision, pl.contradicts = "", nil
	pl.in.Supersedes = ""
	pl.in.Audit = nil
}

// namespace is where pl's canonical key must be unique.
// statement is the plan's content analysed for extract.Relate.
func (pl *plan) statement() extract.Statement {
	if pl.stmt == nil {
		st := pl.x.Statement(pl.in.Version.Content)
		pl.stmt = &st
	}
	return *pl.stmt
}

func (pl *plan) namespace() graph.Namespace {
	m := pl.in.Memory
	return graph.Namespace{Scope: m.Scope, UserID: m.UserID, Type: m.Type}
}

// targetID is the memory pl reinforces, supersedes or versions.
func (pl *plan) targetID() string {
	if pl.targetPlan != nil {
		return pl.targetPlan.memoryID()
	}
	return pl.target.ID
}

// memoryID is the memory pl writes or touches.
func (pl *plan) memoryID() string {
	switch pl.act {
	case actNew, actSupersede:
		return pl.in.Memory.ID
	case actVersion, actReinforce:
		return pl.targetID()
	}
	return ""
}

func (pl *plan) result() IngestResult {
	m := pl.in.Memory
	r := IngestResult{
		CanonicalKey: m.CanonicalKey, Type: m.Type, Layer: m.Layer, Sublayer: m.Sublayer,
		Rule: pl.rule, Reason: pl.reason, Fix: pl.fix, Entities: pl.entities, Conflict: pl.conflict,
		Integrity: pl.decision,
	}
	if pl.act == actNew || pl.act == actSupersede || pl.act == actQueue {
		for _, c := range pl.contradicts {
			r.Contradicts = append(r.Contradicts, PossibleContradiction{ID: c.id, Reason: c.reason})
		}
	}
	if r.Entities == nil {
		r.Entities = []string{}
	}
	switch pl.act {
	case actNew:
		r.Status, r.ID, r.VersionID = StatusApproved, pl.memory.ID, pl.version.ID
	case actSupersede:
		r.Status, r.ID, r.VersionID, r.Supersedes = StatusSuperseded, pl.memory.ID, pl.version.ID, pl.targetID()
	case actVersion:
		r.Status, r.ID, r.VersionID = StatusUpdated, pl.targetID(), pl.version.ID
	case actReinforce:
		r.Status, r.ID = StatusReinforced, pl.targetID()
		if pl.targetPlan != nil {
			r.VersionID = pl.targetPlan.version.ID
		} else {
			r.VersionID = pl.target.CurrentVersionID
		}
	case actQueue:
		r.Status, r.RequestID = StatusPending, pl.requestID
	case actReject:
		r.Status, r.RequestID = StatusRejected, pl.auditID
	}
	return r
}

// contradiction is an active memory a new one may contradict: it holds a
// key the new one tried, about the same subject, with no evidence that the
// new statement replaces it.
type contradiction struct {
	id, key, reason string
}
