package mcp

import (
	"context"
	"fmt"

	"github.com/mnemo-dev/mnemo/engine"
	"github.com/mnemo-dev/mnemo/graph"
)

// ForgetInput is the forget tool's input.
type ForgetInput struct {
	ID     string `json:"id" jsonschema:"the memory to forget (required)"`
	Mode   string `json:"mode,omitempty" jsonschema:"archive (default: hidden from reads, restorable) or erase (content removed for good)"`
	Reason string `json:"reason,omitempty" jsonschema:"recorded in the audit trail; for an erase it must not quote the memory (a ticket number, 'user request')"`
}

// ForgetOutput says what became of the memory: Archived for an archive,
// Erased for an erase.
type ForgetOutput struct {
	Archived *engine.Forgotten   `json:"archived,omitempty"`
	Erased   *engine.EraseResult `json:"erased,omitempty"`
}

func (s *Server) forget(ctx context.Context, p graph.Principal, in ForgetInput) (ForgetOutput, error) {
	if err := graph.CheckID("id", in.ID); err != nil {
		return ForgetOutput{}, err
	}
	switch in.Mode {
	case "", "archive":
		f, err := s.engine.Archive(ctx, p, in.ID, in.Reason)
		return ForgetOutput{Archived: &f}, err
	case "erase":
		r, err := s.engine.Erase(ctx, p, in.ID, in.Reason)
		return ForgetOutput{Erased: &r}, err
	}
	return ForgetOutput{}, invalid(fmt.Sprintf("mode must be archive or erase, not %q", in.Mode))
}

// ReasonInput names a memory and says why.
type ReasonInput struct {
	ID     string `json:"id" jsonschema:"the memory (required)"`
	Reason string `json:"reason,omitempty" jsonschema:"recorded in the audit trail"`
}

func (s *Server) restore(ctx context.Context, p graph.Principal, in ReasonInput) (engine.Forgotten, error) {
	if err := graph.CheckID("id", in.ID); err != nil {
		return engine.Forgotten{}, err
	}
	return s.engine.Restore(ctx, p, in.ID, in.Reason)
}
