package mcp

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/mnemo-dev/mnemo/engine"
	"github.com/mnemo-dev/mnemo/graph"
)

// recall's detail levels. An MCP answer goes into a language model's
// context window, so recall answers compact unless asked for full: the
// HTTP API's answer, byte for byte the same JSON.
const (
	detailCompact = "compact"
	detailFull    = "full"
)

// CompactRecall is recall's compact answer: the search answer with each
// result cut to what an agent needs to use and verify it. Every field it
// keeps sits at the same path, with the same meaning, as in the full
// answer (engine.SearchResponse), so a client reads both the same way.
type CompactRecall struct {
	engine.SearchResponse
	Results []CompactResult `json:"results"`
}

// CompactResult is one compact result: what the memory is and when it
// holds, its text as the display policy shapes it, its version and
// citation (for read_context, propose and verify_citations), its score and
// flags; neighbours as pointers to follow with get. Left out: the memory's
// bookkeeping (scope, user, importance, access counts, visibility, tags,
// version count ...), why_included, signals and path (how it ranked).
type CompactResult struct {
	Memory        CompactMemory      `json:"memory"`
	VersionID     string             `json:"version_id"`
	VersionNumber int                `json:"version_number"`
	Content       string             `json:"content"`
	Appendix      map[string]string  `json:"appendix,omitempty"`
	Score         float64            `json:"score"`
	Confidence    float64            `json:"confidence"`
	Edits         []string           `json:"edits,omitempty"`
	Flags         []string           `json:"flags,omitempty"`
	Citation      graph.Citation     `json:"citation"`
	Neighbours    []CompactNeighbour `json:"neighbours,omitempty"`
}

// CompactMemory is what a compact result says of its memory: which one,
// what kind, whether it is current, and when it was recorded and holds.
type CompactMemory struct {
	ID           string       `json:"id"`
	Type         string       `json:"type"`
	Title        string       `json:"title"`
	Status       graph.Status `json:"status"`
	CreatedAt    time.Time    `json:"created_at"`
	ValidFrom    time.Time    `json:"valid_from,omitzero"`
	ValidTo      time.Time    `json:"valid_to,omitzero"`
	SupersededBy string       `json:"superseded_by,omitempty"`
}

// CompactNeighbour is a neighbour without its text: the memory to get, its
// type and title, and why it is appended (shared_entities, or the relation
// with its id and direction). Left out: its version, display, content,
// summary and shared entities.
type CompactNeighbour struct {
	ID         string `json:"id"`
	Type       string `json:"type"`
	Title      string `json:"title,omitempty"`
	Reason     string `json:"reason"`
	RelationID string `json:"relation_id,omitempty"`
	Direction  string `json:"direction,omitempty"`
}

// addRecall registers the recall tool answering what search finds, at the
// detail the call asks for (mnemo's search is the engine's; the benchmark's
// answers precomputed results).
func (s *Server) addRecall(search func(context.Context, graph.Principal, RecallInput) (engine.SearchResponse, error)) error {
	out, err := recallSchema()
	if err != nil {
		return fmt.Errorf("tool recall: output schema: %w", err)
	}
	return addWith(s, out, "recall", "Recall",
		"Search memories: graph, keyword and vector signals fused, with the effective view applied "+
			"(edits, validity, supersession), contradictions flagged, neighbours appended and citations. "+
			"A date in the query (\"in August 2023\", \"last week\") ranks memories from then first. "+
			"Compact by default (each result's text, version, score, flags and citation; neighbours as ids "+
			"and titles); detail full answers as the HTTP API does (memory metadata, ranking signals, "+
			"neighbours' text).",
		reads, func(ctx context.Context, p graph.Principal, in RecallInput) (any, error) {
			if in.Detail != "" && in.Detail != detailCompact && in.Detail != detailFull {
				return nil, invalid(fmt.Sprintf("detail must be compact or full, not %q", in.Detail))
			}
			r, err := search(ctx, p, in)
			if err != nil || in.Detail == detailFull {
				return r, err
			}
			return compact(r), nil
		}, nil)
}

// compact is r's compact answer.
func compact(r engine.SearchResponse) CompactRecall {
	c := CompactRecall{SearchResponse: r, Results: make([]CompactResult, len(r.Results))}
	c.SearchResponse.Results = nil
	for i, h := range r.Results {
		m := h.Memory
		c.Results[i] = CompactResult{
			Memory: CompactMemory{ID: m.ID, Type: m.Type, Title: m.Title, Status: m.Status, CreatedAt: m.CreatedAt,
				ValidFrom: m.ValidFrom, ValidTo: m.ValidTo, SupersededBy: m.SupersededBy},
			VersionID: h.VersionID, VersionNumber: h.VersionNumber, Content: h.Content, Appendix: h.Appendix,
			Score: h.Score, Confidence: h.Confidence, Edits: h.Edits, Flags: h.Flags, Citation: h.Citation,
		}
		if len(h.Neighbours) == 0 {
			continue
		}
		ns := make([]CompactNeighbour, len(h.Neighbours))
		for j, n := range h.Neighbours {
			ns[j] = CompactNeighbour{ID: n.ID, Type: n.Type, Title: n.Title, Reason: n.Reason,
				RelationID: n.RelationID, Direction: n.Direction}
		}
		c.Results[i].Neighbours = ns
	}
	return c
}

// recallSchema is recall's output schema: the full answer's, with only
// what both the full and the compact answer always carry required, so
// both conform to it.
func recallSchema() (*jsonschema.Schema, error) {
	full, err := jsonschema.For[engine.SearchResponse](schemaOptions)
	if err != nil {
		return nil, err
	}
	short, err := jsonschema.For[CompactRecall](schemaOptions)
	if err != nil {
		return nil, err
	}
	return full, loosen(full, short, "")
}

// loosen leaves required in full, at every object, only what short
// requires as well. It fails when short has a property full lacks, or
// types one otherwise: short must be a part of full.
func loosen(full, short *jsonschema.Schema, at string) error {
	if full.Type != short.Type || !slices.Equal(full.Types, short.Types) {
		return fmt.Errorf("%s: compact and full answers type it differently", at)
	}
	for name, sp := range short.Properties {
		fp, ok := full.Properties[name]
		if !ok {
			return fmt.Errorf("%s.%s: not in the full answer", at, name)
		}
		if err := loosen(fp, sp, at+"."+name); err != nil {
			return err
		}
	}
	if full.Items != nil && short.Items != nil {
		if err := loosen(full.Items, short.Items, at+"[]"); err != nil {
			return err
		}
	}
	full.Required = slices.DeleteFunc(full.Required, func(name string) bool { return !slices.Contains(short.Required, name) })
	return nil
}
