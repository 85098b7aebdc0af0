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
// inferred from the Go types (jsonschema tags describe the fields), and
// the SDK validates both on every call; a tool that only reads says so with readOnlyHint. Reads still
// reinforce what they return (access counts) and read_context stores a
// receipt for verify_citations: bookkeeping, not a change a user asked for.
func (s *Server) addTools() error {
	return errors.Join(add(s, "remember", "Remember",
		"Store one memory (a fact, decision, note, task, document ...) through mnemo's write path: "+
			"extraction, canonical key (reinforce, supersede or keep both and flag a contradiction) and "+
			"the policy gate. A write the gate queues answers status pending with a request_id; a refused "+
			"write is a tool error whose text says why, with the result (rule, fix) as structured content.",
		writes, s.remember, refusal),
		add(s, "recall", "Recall",
			"Search memories: graph, keyword and vector signals fused, with the effective view applied "+
				"(edits, validity, supersession), contradictions flagged, neighbours appended and citations.",
			reads, s.recall, nil),
		add(s, "get", "Get a memory",
			"Fetch one memory by id with its current version.", reads, s.get, nil),
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
			"Reject a pending write with a reason the author reads.", writes, s.librarianReject, nil))
}

var (
	no     = false
	reads  = &sdk.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: &no}
	writes = &sdk.ToolAnnotations{DestructiveHint: &no, OpenWorldHint: &no} // additive: versions and decisions are appended
)

// add registers one tool whose handler calls the engine as the caller's
// principal. An error becomes a tool error with the HTTP API's message;
// refused, when set, turns an output that reports a refusal into a tool
// error that still carries the output as structured content.
func add[In, Out any](s *Server, name, title, desc string, ann *sdk.ToolAnnotations,
	call func(context.Context, graph.Principal, In) (Out, error), refused func(Out) string) error {
	in, err := jsonschema.For[In](schemaOptions)
	if err != nil {
		return fmt.Errorf("tool %s: input schema: %w", name, err)
	}
	out, err := jsonschema.For[Out](schemaOptions)
	if err != nil {
		return fmt.Errorf("tool %s: output schema: %w", name, err)
	}
	a := *ann
	a.Title = title
	t := &sdk.Tool{Name: name, Title: title, Description: desc, Annotations: &a, InputSchema: in, OutputSchema: out}
	sdk.AddTool(s.sdk, t, func(ctx context.Context, req *sdk.CallToolRequest, in In) (*sdk.CallToolResult, Out, error) {
		var zero Out
		p, err := s.principal(req)
		if err != nil {
			return nil, zero, err
		}
		out, err := call(ctx, p, in)
		if err != nil {
			return nil, zero, s.toolError(name, err)
		}
		if refused != nil {
			if msg := refused(out); msg != "" {
				return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: msg}}}, out, nil
			}
		}
		return nil, out, nil
	})
	return nil
}

// schemaOptions infer the schemas: a json.RawMessage (a queued write's
// payload) is any JSON value, not the byte slice it is in Go.
var schemaOptions = &jsonschema.ForOptions{TypeSchemas: map[reflect.Type]*jsonschema.Schema{
	reflect.TypeFor[json.RawMessage](): {},
}}
