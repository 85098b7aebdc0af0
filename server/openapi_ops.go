package server

import (
	"net/http"
	"reflect"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/mnemo-dev/mnemo/engine"
	"github.com/mnemo-dev/mnemo/graph"
	"github.com/mnemo-dev/mnemo/policy"
)

// operation documents one method on one path of the API. Adding a route
// to New means adding its operation here (TestOpenAPIRoutes fails until
// both agree): the path in OpenAPI form, with a custom method after a
// colon as the route's handler reads it (/v1/edits/{id}:approve), the Go
// type the handler decodes its body into, and the Go type of each success
// answer. Error answers are the error envelope; errorStatuses lists them.
type operation struct {
	method, path string
	id           string // operationId, unique
	tag          string
	summary, doc string
	public       bool // served without an API key
	query        []queryParam
	idempotent   bool // takes an Idempotency-Key header
	// body is a value of the type the handler decodes its body into; nil
	// when it reads none. Every member is optional but those in required.
	body         any
	bodyOptional bool
	required     []string
	// adjust refines the inferred body schema (enums, bounds).
	adjust func(*jsonschema.Schema)
	// answers maps each success status to the type of its body.
	answers map[int]reflect.Type
	// text is the content type of a 200 that is not JSON (GET /metrics).
	text string
	// errors are statuses beyond those errorStatuses gives every route.
	errors []int
	// links name the operations an answer's identifiers lead to.
	links []link
}

// link passes the value at pointer in a status's answer to the path
// parameter param of each operation in to.
type link struct {
	status         int
	pointer, param string
	to             []string
}

// memoryOps are the operations that take a memory id.
var memoryOps = []string{"getMemory", "listEdits", "proposeEdit", "archiveMemory", "restoreMemory", "eraseMemory"}

var openAPITags = []openAPITag{
	{"memories", "store, read and list memories"},
	{"search", "search, read_context and citation checks"},
	{"curation", "edits: curation overlays on memories"},
	{"librarian", "the policy gate's queue of writes waiting for a librarian"},
	{"forgetting", "archive, restore and erase (docs/forgetting.md)"},
	{"admin", "audit trail, policy reload, metrics"},
	{"meta", "health and this document"},
}

func typeOf[T any]() reflect.Type { return reflect.TypeFor[T]() }

// operations is every route the server serves, in the order New registers
// them.
func operations() []operation {
	limit := queryParam{name: "limit", doc: "page size", kind: "integer", min: 1, max: 1000}
	cursor := queryParam{name: "cursor", doc: "next_cursor of the previous page"}
	reason := "an optional body {\"reason\": \"...\"} recorded in the audit event"
	return []operation{
		{method: http.MethodGet, path: "/healthz", id: "healthz", tag: "meta", public: true,
			summary: "health of the server and its dependencies",
			doc:     "Every check at once, each within 3 s; any check down answers 503 with the same body.",
			answers: map[int]reflect.Type{200: typeOf[health](), 503: typeOf[health]()}},
		{method: http.MethodGet, path: "/openapi.json", id: "openapi", tag: "meta", public: true,
			summary: "this document (OpenAPI 3.1), readable without a key",
			answers: map[int]reflect.Type{200: typeOf[openAPIObject]()}},
		{method: http.MethodGet, path: "/metrics", id: "metrics", tag: "admin",
			summary: "Prometheus metrics (admin permission; served when the server has metrics)",
			text:    "text/plain"},
		{method: http.MethodPost, path: "/v1/memories", id: "createMemory", tag: "memories",
			summary: "store one memory through the write path (ingest)",
			doc: "201 a new memory (approved or superseded); 200 reinforced or updated; 202 queued for a librarian " +
				"(request_id); 422 refused by the policy gate and 409 refused because of the stored state, each " +
				"with the result (reason, rule, fix) and an error object.",
			body: engine.IngestRequest{}, required: []string{"content"}, adjust: ingestSchema,
			answers: map[int]reflect.Type{200: typeOf[engine.IngestResult](), 201: typeOf[engine.IngestResult](),
				202: typeOf[engine.IngestResult](), 409: typeOf[rejection](), 422: typeOf[rejection]()},
			links: []link{{200, "/id", "id", memoryOps}, {201, "/id", "id", memoryOps},
				{202, "/request_id", "id", []string{"getGateRequest", "approveGateRequest", "rejectGateRequest"}}}},
		{method: http.MethodPost, path: "/v1/memories:batch", id: "createMemories", tag: "memories",
			summary: "store up to 1000 memories together",
			doc:     "Each item's result, in order; bad input in any item is a 400 naming items[i].field and nothing is written.",
			body:    batchRequest{}, required: []string{"items"}, adjust: batchSchema,
			answers: map[int]reflect.Type{200: typeOf[batchResponse]()}},
		{method: http.MethodGet, path: "/v1/librarian/requests", id: "listGateRequests", tag: "librarian",
			summary: "list queued writes (approve permission)",
			query: []queryParam{{name: "status", doc: "pending (default), approved or rejected",
				enum: statuses(graph.GatePending, graph.GateApproved, graph.GateRejected)}, limit, cursor},
			answers: map[int]reflect.Type{200: typeOf[gatePage]()}},
		{method: http.MethodGet, path: "/v1/librarian/requests/{id}", id: "getGateRequest", tag: "librarian",
			summary: "one queued write, with the request as its author stated it",
			answers: map[int]reflect.Type{200: typeOf[engine.GateRequestView]()}},
		{method: http.MethodPost, path: "/v1/librarian/requests/{id}:approve", id: "approveGateRequest", tag: "librarian",
			summary: "approve a queued write: it is written now (approve permission)", doc: reason + "; 409 when not pending",
			body: decisionRequest{}, bodyOptional: true, errors: []int{http.StatusConflict, http.StatusUnprocessableEntity},
			answers: map[int]reflect.Type{200: typeOf[engine.Decision]()}},
		{method: http.MethodPost, path: "/v1/librarian/requests/{id}:reject", id: "rejectGateRequest", tag: "librarian",
			summary: "reject a queued write (approve permission)", doc: reason + "; 409 when not pending",
			body: decisionRequest{}, bodyOptional: true, errors: []int{http.StatusConflict},
			answers: map[int]reflect.Type{200: typeOf[engine.Decision]()}},
		{method: http.MethodPost, path: "/v1/admin/policy/reload", id: "reloadPolicy", tag: "admin",
			summary: "reload the policy file (policy_reload permission)",
			doc:     "A bad file is refused with 400 and its file:line errors; the running policy stays. 501 when the server has no policy file.",
			errors:  []int{http.StatusNotImplemented},
			answers: map[int]reflect.Type{200: typeOf[reloaded]()}},
		{method: http.MethodGet, path: "/v1/memories", id: "listMemories", tag: "memories",
			summary: "list memories, newest first, with filters",
			query: []queryParam{
				{name: "type", doc: "memory types, ORed (repeated or comma-separated)", kind: "list"},
				{name: "user_id", doc: "one user's memories"},
				{name: "tag", doc: "tags, ANDed (repeated or comma-separated)", kind: "list"},
				{name: "after", doc: "created at or after (RFC 3339 or YYYY-MM-DD)", kind: "time"},
				{name: "before", doc: "created before (RFC 3339 or YYYY-MM-DD)", kind: "time"},
				{name: "days_back", doc: "created in the last N days", kind: "integer", min: 1},
				{name: "status", doc: "statuses, ORed (active by default)", kind: "list",
					enum: statuses(graph.StatusActive, graph.StatusSuperseded, graph.StatusArchived, graph.StatusRetracted, graph.StatusErased)},
				{name: "org_id", doc: "scope: organisation"}, {name: "repo_id", doc: "scope: repository"},
				limit, cursor},
			answers: map[int]reflect.Type{200: typeOf[graph.Listing]()}},
		{method: http.MethodGet, path: "/v1/memories/{id}", id: "getMemory", tag: "memories",
			summary: "one memory's effective view (approved edits applied)",
			query: []queryParam{{name: "channel", doc: "apply the blocks of this channel"},
				{name: "include_quarantined", doc: "show a quarantined memory", kind: "boolean"},
				{name: "as_of", doc: "valid time: the memory as valid at this instant (RFC 3339 or YYYY-MM-DD)", kind: "time"},
				{name: "known_at", doc: "transaction time: the memory as mnemo knew it then (RFC 3339 or YYYY-MM-DD)", kind: "time"}},
			answers: map[int]reflect.Type{200: typeOf[engine.MemoryView]()}},
		{method: http.MethodPost, path: "/v1/memories/{id}/edits", id: "proposeEdit", tag: "curation",
			summary: "propose an edit to a memory (pending, or approved when the policy auto-approves it)",
			body:    editRequest{}, required: []string{"kind"}, errors: []int{http.StatusConflict},
			answers: map[int]reflect.Type{201: typeOf[engine.EditResult]()},
			links:   []link{{201, "/edit/id", "id", []string{"approveEdit", "rejectEdit"}}}},
		{method: http.MethodGet, path: "/v1/memories/{id}/edits", id: "listEdits", tag: "curation",
			summary: "a memory's edits",
			query: []queryParam{{name: "status", doc: "pending, approved or rejected; any when absent",
				enum: statuses(graph.EditPending, graph.EditApproved, graph.EditRejected)}},
			answers: map[int]reflect.Type{200: typeOf[editList]()}},
		{method: http.MethodPost, path: "/v1/edits/{id}:approve", id: "approveEdit", tag: "curation",
			summary: "approve a pending edit", doc: reason + "; 409 when not pending",
			body: decisionRequest{}, bodyOptional: true, errors: []int{http.StatusConflict},
			answers: map[int]reflect.Type{200: typeOf[engine.EditResult]()}},
		{method: http.MethodPost, path: "/v1/edits/{id}:reject", id: "rejectEdit", tag: "curation",
			summary: "reject a pending edit", doc: reason + "; 409 when not pending",
			body: decisionRequest{}, bodyOptional: true, errors: []int{http.StatusConflict},
			answers: map[int]reflect.Type{200: typeOf[engine.EditResult]()}},
		{method: http.MethodGet, path: "/v1/audit", id: "listAudit", tag: "admin",
			summary: "the audit trail, oldest first (audit_read permission)",
			query: []queryParam{{name: "memory_id", doc: "one memory's trail"}, {name: "actor", doc: "events by this principal"},
				{name: "action", doc: "events of this action"},
				{name: "from", doc: "at or after (RFC 3339 or YYYY-MM-DD)", kind: "time"},
				{name: "to", doc: "before (RFC 3339 or YYYY-MM-DD)", kind: "time"}, limit, cursor},
			answers: map[int]reflect.Type{200: typeOf[auditPage]()}},
		{method: http.MethodDelete, path: "/v1/memories/{id}", id: "archiveMemory", tag: "forgetting",
			summary: "archive a memory (restorable with :restore)", doc: reason,
			body: forgetRequest{}, bodyOptional: true, errors: []int{http.StatusConflict},
			answers: map[int]reflect.Type{200: typeOf[engine.Forgotten]()}},
		{method: http.MethodPost, path: "/v1/memories/{id}:restore", id: "restoreMemory", tag: "forgetting",
			summary: "restore an archived memory", doc: reason,
			body: forgetRequest{}, bodyOptional: true, errors: []int{http.StatusConflict},
			answers: map[int]reflect.Type{200: typeOf[engine.Forgotten]()}},
		{method: http.MethodPost, path: "/v1/memories/{id}:erase", id: "eraseMemory", tag: "forgetting",
			summary: "erase a memory's content for good", doc: reason + " (it must not quote the memory)",
			body: forgetRequest{}, bodyOptional: true, errors: []int{http.StatusConflict},
			answers: map[int]reflect.Type{200: typeOf[engine.EraseResult]()}},
		{method: http.MethodPost, path: "/v1/users/{user}:erase", id: "eraseUser", tag: "forgetting",
			summary: "erase every memory of a user that the key reaches", doc: reason,
			body: forgetRequest{}, bodyOptional: true, errors: []int{http.StatusConflict},
			answers: map[int]reflect.Type{200: typeOf[engine.EraseResult]()}},
		{method: http.MethodPost, path: "/v1/search", id: "search", tag: "search",
			summary: "search memories (graph, vector, keyword or hybrid)",
			doc:     "Results with signals, ranks, scores, confidence, neighbours, contradictions and budget. Times are RFC 3339 or YYYY-MM-DD (UTC).",
			body:    searchRequest{}, required: []string{"query"}, adjust: searchSchema,
			answers: map[int]reflect.Type{200: typeOf[engine.SearchResponse]()}},
		{method: http.MethodPost, path: "/v1/context", id: "readContext", tag: "search",
			summary: "read_context: a cited context for a question or an element",
			body:    contextRequest{}, adjust: contextSchema,
			answers: map[int]reflect.Type{200: typeOf[engine.ContextResponse]()}},
		{method: http.MethodPost, path: "/v1/relations", id: "createRelation", tag: "curation",
			summary: "relate two memories (RELATES_TO, DEPENDS_ON, CONTRADICTS, DERIVED_FROM); 200 when it existed",
			body:    relationRequest{}, required: []string{"from", "to", "type"},
			answers: map[int]reflect.Type{201: typeOf[engine.RelationResult](), 200: typeOf[engine.RelationResult]()},
			links:   []link{{201, "/relation/id", "id", []string{"deleteRelation"}}}},
		{method: http.MethodDelete, path: "/v1/relations/{id}", id: "deleteRelation", tag: "curation",
			summary: "remove a relation", doc: reason,
			body: forgetRequest{}, bodyOptional: true,
			answers: map[int]reflect.Type{200: typeOf[relationAnswer]()}},
		{method: http.MethodGet, path: "/v1/memories/{id}/relations", id: "listRelations", tag: "curation",
			summary: "a memory's relations, either way",
			query:   []queryParam{{name: "limit", doc: "at most this many", kind: "integer", min: 1, max: 1000}},
			answers: map[int]reflect.Type{200: typeOf[relationList]()}},
		{method: http.MethodPost, path: "/v1/capsules", id: "createCapsule", tag: "curation",
			summary: "a capsule of memories, versions and decisions for an audience of agents (TTL 7 days by default)",
			body:    capsuleRequest{}, idempotent: true, errors: []int{http.StatusConflict},
			answers: map[int]reflect.Type{201: typeOf[graph.Capsule]()},
			links:   []link{{201, "/id", "id", []string{"getCapsule", "revokeCapsule"}}}},
		{method: http.MethodGet, path: "/v1/capsules", id: "listCapsules", tag: "curation",
			summary: "live capsules addressed to the caller (or sent by it with sent=true)",
			query: []queryParam{{name: "sent", doc: "the capsules the caller created", kind: "boolean"},
				{name: "limit", doc: "at most this many", kind: "integer", min: 1, max: engine.MaxCapsulePage}, cursor},
			answers: map[int]reflect.Type{200: typeOf[capsuleList]()}},
		{method: http.MethodGet, path: "/v1/capsules/{id}", id: "getCapsule", tag: "curation",
			summary: "one live capsule, for its creator or audience",
			answers: map[int]reflect.Type{200: typeOf[engine.CapsuleView]()}},
		{method: http.MethodPost, path: "/v1/capsules/{id}:revoke", id: "revokeCapsule", tag: "curation",
			summary: "revoke a capsule (its creator only)", doc: reason,
			body: forgetRequest{}, bodyOptional: true,
			answers: map[int]reflect.Type{200: typeOf[graph.Capsule]()}},
		{method: http.MethodPost, path: "/v1/context/bundle", id: "contextBundle", tag: "search",
			summary: "an agent's context bundle: decisions, capsules, tasks and session memories within a token budget",
			body:    bundleRequest{}, bodyOptional: true,
			answers: map[int]reflect.Type{200: typeOf[engine.BundleResponse]()}},
		{method: http.MethodPost, path: "/v1/proposals", id: "createProposal", tag: "curation",
			summary: "propose new text for a memory, pinned to the version it was written against (permission propose)",
			body:    proposalRequest{}, errors: []int{http.StatusConflict},
			answers: map[int]reflect.Type{201: typeOf[proposalAnswer]()},
			links:   []link{{201, "/proposal/id", "id", []string{"getProposal", "acceptProposal", "rejectProposal", "rebaseProposal"}}}},
		{method: http.MethodGet, path: "/v1/proposals", id: "listProposals", tag: "curation",
			summary: "proposals, newest first",
			query: []queryParam{{name: "memory_id", doc: "one memory's proposals"},
				{name: "status", doc: "open, accepted, rejected or rebased",
					enum: statuses(graph.ProposalOpen, graph.ProposalAccepted, graph.ProposalRejected, graph.ProposalRebased)},
				{name: "limit", doc: "at most this many", kind: "integer", min: 1, max: graph.MaxListLimit}},
			answers: map[int]reflect.Type{200: typeOf[proposalList]()}},
		{method: http.MethodGet, path: "/v1/proposals/{id}", id: "getProposal", tag: "curation",
			summary: "one proposal",
			answers: map[int]reflect.Type{200: typeOf[proposalAnswer]()}},
		{method: http.MethodPost, path: "/v1/proposals/{id}:accept", id: "acceptProposal", tag: "curation",
			summary: "accept an open proposal: its text becomes the memory's next version (permission curate); 409 while its version is not current: rebase it",
			body:    proposalStepRequest{}, bodyOptional: true, errors: []int{http.StatusConflict},
			answers: map[int]reflect.Type{200: typeOf[engine.ProposalResult]()}},
		{method: http.MethodPost, path: "/v1/proposals/{id}:reject", id: "rejectProposal", tag: "curation",
			summary: "reject an open proposal with a reason, recorded as a decision (permission curate)",
			body:    proposalStepRequest{}, bodyOptional: true, errors: []int{http.StatusConflict},
			answers: map[int]reflect.Type{200: typeOf[engine.ProposalResult]()}},
		{method: http.MethodPost, path: "/v1/proposals/{id}:rebase", id: "rebaseProposal", tag: "curation",
			summary: "rebase a stale proposal onto the memory's current version (a new proposal linked REBASED_TO)",
			body:    proposalStepRequest{}, bodyOptional: true, errors: []int{http.StatusConflict},
			answers: map[int]reflect.Type{201: typeOf[engine.ProposalResult]()}},
		{method: http.MethodPost, path: "/v1/baselines:promote", id: "promoteBaseline", tag: "curation",
			summary: "publish a repository's baseline: its current versions, or an older baseline again (permission promote)",
			body:    engine.PromoteRequest{}, bodyOptional: true, idempotent: true,
			answers: map[int]reflect.Type{201: typeOf[baselineAnswer]()}, errors: []int{http.StatusConflict}},
		{method: http.MethodGet, path: "/v1/baselines", id: "listBaselines", tag: "curation",
			summary: "baselines, newest first",
			query: []queryParam{{name: "org_id", doc: "scope: organisation"}, {name: "repo_id", doc: "scope: repository"},
				{name: "limit", doc: "at most this many", kind: "integer", min: 1, max: graph.MaxListLimit}},
			answers: map[int]reflect.Type{200: typeOf[baselineList]()}},
		{method: http.MethodPost, path: "/v1/citations/verify", id: "verifyCitations", tag: "search",
			summary: "report every citation that did not come from the named context",
			body:    verifyRequest{}, required: []string{"context_id"},
			answers: map[int]reflect.Type{200: typeOf[engine.VerifyResponse]()}},
	}
}

// openAPIObject is the schema of the document itself: an object.
type openAPIObject map[string]any

// prop returns the schema of s's member name; it panics on a name the
// type does not have, which TestOpenAPIDocument catches.
func prop(s *jsonschema.Schema, name string) *jsonschema.Schema {
	p, ok := s.Properties[name]
	if !ok {
		panic("openapi: no member " + name)
	}
	return p
}

// oneOfStrings closes a nullable string member to vals.
func oneOfStrings(s *jsonschema.Schema, vals ...string) {
	for _, v := range vals {
		s.Enum = append(s.Enum, v)
	}
	nullable(s)
}

func ingestSchema(s *jsonschema.Schema) {
	oneOfStrings(prop(s, "format"), "", "text", engine.FormatMarkdown)
	imp := prop(s, "importance")
	imp.Minimum, imp.Maximum = jsonschema.Ptr(0.0), jsonschema.Ptr(1.0)
}

func batchSchema(s *jsonschema.Schema) {
	items := prop(s, "items")
	items.MaxItems = jsonschema.Ptr(engine.MaxBatch)
	ingestSchema(items.Items)
	mustHave(items.Items, "content")
}

func searchSchema(s *jsonschema.Schema) {
	oneOfStrings(prop(s, "mode"), "", policy.ModeGraph, policy.ModeVector, policy.ModeKeyword, policy.ModeHybrid)
	oneOfStrings(prop(s, "reranker"), "", policy.RerankerRRF, policy.RerankerMMR, policy.RerankerNodeDistance)
	l := prop(s, "limit")
	l.Minimum, l.Maximum = jsonschema.Ptr(0.0), jsonschema.Ptr(float64(engine.MaxSearchLimit))
	prop(s, "token_budget").Minimum = jsonschema.Ptr(0.0)
	prop(s, "days_back").Minimum = jsonschema.Ptr(0.0)
	for _, t := range []string{"created_after", "created_before"} {
		p := prop(s, t)
		p.AnyOf = []*jsonschema.Schema{{Const: jsonschema.Ptr[any]("")}, {Format: "date-time"}, {Format: "date"}}
	}
}

func contextSchema(s *jsonschema.Schema) {
	*prop(s, "selector") = jsonschema.Schema{
		Description: `absent, "published", or {"kind": "published"|"baseline", "baseline_id": "..."}`,
		AnyOf: []*jsonschema.Schema{
			{Type: "null"},
			{Const: jsonschema.Ptr[any](engine.SelectorPublished)},
			{Type: "object", AdditionalProperties: &jsonschema.Schema{Not: &jsonschema.Schema{}},
				Properties: map[string]*jsonschema.Schema{
					"kind":        {Type: "string", Enum: []any{"", engine.SelectorPublished, engine.SelectorBaseline}},
					"baseline_id": {Type: "string"},
				}},
		},
	}
}
