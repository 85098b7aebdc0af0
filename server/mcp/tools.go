package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mnemo-dev/mnemo/graph"
)

// addTools registers every tool. The input and output schemas are
// inferred from the Go types (jsonschema tags describe the fields); a tool that only reads says so with readOnlyHint. Reads still
// reinforce what they return (access counts) and read_context stores a
// receipt for verify_citations: bookkeeping, not a change a user asked for.
func (s *Server) addTools() error {
	return errors.Join(add(s, "remember", "Remember",
		"Store one memory (a fact, decision, note, task, document ...) through mnemo's write path: "+
			"extraction, canonical key (reinforce, supersede or keep both and flag a contradiction) and "+
			"the policy gate. A write the gate queues answers status pending with a request_id; a refused "+
			"write is a tool error whose text says why, with the result (rule, fix) as structured content.",
		writes, s.remember, refusal),
		s.addRecall(s.search),
		add(s, "get", "Get a memory",
			"Fetch one memory by id with its current version; as_of and known_at read it as of a past time.", reads, s.get, nil),
		add(s, "list", "List memories",
			"List memories by type, tag, status, user and creation time, newest first, a page at a time.",
			reads, s.list, nil),
		add(s, "read_context", "Read context",
			"Version-pinned context for a query or one element: items with citations and a context_id to "+
				"verify them later with verify_citations.", reads, s.readContext, nil),
		add(s, "verify_citations", "Verify citations",
			"Check that citations came from the read_context call context_id; lists every one that did not.",
			reads, s.verifyCitations, nil),
		add(s, "librarian_list", "List queued writes",
			"List writes the policy gate queued for a librarian (pending by default); needs the approve permission.",
			reads, s.librarianList, nil),
		add(s, "librarian_get", "Show a queued write",
			"Show one queued write with the request as its author stated it; needs the approve permission.",
			reads, s.librarianGet, nil),
		add(s, "librarian_approve", "Approve a queued write",
			"Approve a pending write: it runs through the write path and the result says what it became.",
			writes, s.librarianApprove, nil),
		add(s, "librarian_reject", "Reject a queued write",
			"Reject a pending write with a reason the author reads.", writes, s.librarianReject, nil),
		add(s, "edit_propose", "Propose an edit",
			"Propose an edit of a memory: retract (hide everywhere), amend (new text or importance), quarantine, "+
				"attenuate (lower importance) or block (hide on a channel), with a reason. The policy says who may "+
				"propose and whose edits apply at once; the answer previews the memory before and after.",
			writes, s.editPropose, nil),
		add(s, "edit_list", "List a memory's edits",
			"List the edits of one memory, oldest first, optionally by status.", reads, s.editList, nil),
		add(s, "edit_approve", "Approve an edit",
			"Approve a pending edit (the policy's approvers only).", writes, s.editApprove, nil),
		add(s, "edit_reject", "Reject an edit",
			"Reject a pending edit with a reason.", writes, s.editReject, nil),
		add(s, "relate", "Relate two memories",
			"Relate memory from to memory to with a typed, directed relation: RELATES_TO, DEPENDS_ON, CONTRADICTS "+
				"or DERIVED_FROM. Both must be memories you read and may write. Relating the same pair with the same "+
				"type again returns the first relation (created false). Related memories are appended to each "+
				"other's search results and carry the graph signal.",
			writes, s.relate, nil),
		add(s, "unrelate", "Delete a relation",
			"Delete a relation by id, with an optional reason for the audit trail.", forgets, s.unrelate, nil),
		add(s, "relations", "List a memory's relations",
			"List the relations of one memory that you can see, newest first.", reads, s.relations, nil),
		add(s, "propose", "Propose a change",
			"Propose new text for a memory, pinned to the version it was written against (the version_id "+
				"read_context returned). A curator accepts or rejects it; a proposal whose version is no longer "+
				"the current one must be rebased (POST /v1/proposals/{id}:rebase) before it can be accepted.",
			writes, s.propose, nil),
		add(s, "proposal_accept", "Accept a proposal",
			"Accept an open proposal (permission curate): its text becomes the memory's next version. Refused "+
				"while the version it is pinned to is no longer the current one: rebase it first.",
			writes, s.proposalAccept, nil),
		add(s, "proposal_reject", "Reject a proposal",
			"Reject an open proposal with a reason (permission curate), recorded as a decision.",
			writes, s.proposalReject, nil),
		add(s, "forget", "Forget a memory",
			"Archive a memory (hidden from reads that do not ask for archived memories; restore brings it back) "+
				"or, with mode erase, remove its content for good (the erase permission, or the memory is your own).",
			forgets, s.forget, nil),
		add(s, "restore", "Restore a memory",
			"Make an archived memory active again.", writes, s.restore, nil),
		add(s, "capsule_create", "Hand memories to other agents",
			"Create a capsule: memories, versions and decisions you can read, for the agents you name, for a while "+
				"(7 days unless ttl_seconds says otherwise, at most 30). Only they and you read it; you may revoke it.",
			writes, s.capsuleCreate, nil),
		add(s, "capsule_list", "List capsules",
			"List the live capsules addressed to you (or those you created, sent), newest first, with their items "+
				"as they read now: edits applied; archived, retracted or erased items left out.",
			reads, s.capsuleList, nil),
		add(s, "audit", "Read the audit trail",
			"Audit events, oldest first, by memory, actor, action and time; needs the audit_read permission.",
			reads, s.audit, nil))
}

var (
	no     = false
	reads  = &sdk.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: &no}
	writes = &sdk.ToolAnnotations{DestructiveHint: &no, OpenWorldHint: &no} // additive: versions and decisions are appended
	// forgets may destroy: an erase cannot be undone.
	forgets = &sdk.ToolAnnotations{OpenWorldHint: &no}
)

// add registers one tool whose handler calls the engine as the caller's
// principal. The arguments are checked against the input schema (unknown
// fields refused, as the HTTP API's strict decoding refuses them); an error
// becomes a tool error with the HTTP API's message; refused, when set,
// turns an output that reports a refusal into a tool error that still
// carries the output as structured content.
//
// The output is marshalled once and sent both as structured content and,
// for clients that read only text, as its JSON text. It is not validated
// against the output schema on every call, as the SDK's typed AddTool
// would: that cost a third of a recall answer's MCP CPU (BenchmarkMCPOverhead);
// the tests check every tool's output against its schema instead.
func add[In, Out any](s *Server, name, title, desc string, ann *sdk.ToolAnnotations,
	call func(context.Context, graph.Principal, In) (Out, error), refused func(Out) string) error {
	out, err := jsonschema.For[Out](schemaOptions)
	if err != nil {
		return fmt.Errorf("tool %s: output schema: %w", name, err)
	}
	return addWith(s, out, name, title, desc, ann, call, refused)
}

// addWith is add with the output schema given rather than inferred from
// Out (recall's answer is one of two shapes, both of which out accepts).
func addWith[In, Out any](s *Server, out *jsonschema.Schema, name, title, desc string, ann *sdk.ToolAnnotations,
	call func(context.Context, graph.Principal, In) (Out, error), refused func(Out) string) error {
	in, err := jsonschema.For[In](schemaOptions)
	if err != nil {
		return fmt.Errorf("tool %s: input schema: %w", name, err)
	}
	resolved, err := in.Resolve(nil)
	if err != nil {
		return fmt.Errorf("tool %s: input schema: %w", name, err)
	}
	a := *ann
	a.Title = title
	t := &sdk.Tool{Name: name, Title: title, Description: desc, Annotations: &a, InputSchema: in, OutputSchema: out}
	s.sdk.AddTool(t, func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		var in In
		if err := decodeArgs(req.Params.Arguments, resolved, &in); err != nil {
			return failure(err.Error()), nil
		}
		p, err := s.principal(ctx)
		if err != nil {
			return failure(err.Error()), nil
		}
		out, err := call(ctx, p, in)
		if err != nil {
			return failure(s.toolError(name, err).Error()), nil
		}
		raw, err := json.Marshal(out)
		if err != nil {
			return nil, fmt.Errorf("tool %s: marshal output: %w", name, err)
		}
		res := &sdk.CallToolResult{StructuredContent: json.RawMessage(raw), Content: []sdk.Content{&sdk.TextContent{Text: string(raw)}}}
		if refused != nil {
			if msg := refused(out); msg != "" {
				res.IsError, res.Content = true, []sdk.Content{&sdk.TextContent{Text: msg}}
			}
		}
		return res, nil
	})
	return nil
}

// decodeArgs checks a call's arguments against the tool's input schema and
// decodes them into in. Absent arguments are the empty object.
func decodeArgs(args json.RawMessage, schema *jsonschema.Resolved, in any) error {
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage("{}")
	}
	var v any
	if err := json.Unmarshal(args, &v); err != nil {
		return fmt.Errorf("arguments: %w", err)
	}
	if err := schema.Validate(v); err != nil {
		return fmt.Errorf("arguments: %w", err)
	}
	if err := json.Unmarshal(args, in); err != nil {
		return fmt.Errorf("arguments: %w", err)
	}
	return nil
}

// failure is a tool error with msg as its text.
func failure(msg string) *sdk.CallToolResult {
	return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: msg}}}
}

// schemaOptions infer the schemas: a json.RawMessage (a queued write's
// payload) is any JSON value, not the byte slice it is in Go.
var schemaOptions = &jsonschema.ForOptions{TypeSchemas: map[reflect.Type]*jsonschema.Schema{
	reflect.TypeFor[json.RawMessage](): {},
}}
