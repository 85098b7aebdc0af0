package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/mnemo-dev/mnemo/graph"
)

// CreateRequest is a memory as a caller states it.
type CreateRequest struct {
	Scope                                                 *graph.Scope
	Type                                                  string
	Title                                                 string
	Content                                               string
	Summary                                               string
	UserID                                                string
	Tags                                                  []string
	Entities                                              []string
	Importance                                            *float64
	ValidFrom                                             time.Time
	ValidTo                                               time.Time
	Visibility                                            graph.Visibility
	SubjectType, SubjectID, ProjectID, SessionID, Channel string
	Provenance                                            graph.Provenance
}

// Create writes a memory as stated, without extraction or gate.
func (e *Engine) Create(ctx context.Context, p graph.Principal, r CreateRequest) (graph.Created, error) {
	if err := e.authorize(p, PermWrite); err != nil {
		return graph.Created{}, err
	}
	s, err := scopeFor(p, r.Scope)
	if err != nil {
		return graph.Created{}, err
	}
	importance := 0.5
	if r.Importance != nil {
		importance = *r.Importance
	}
	refs := make([]graph.EntityRef, 0, len(r.Entities))
	for _, name := range r.Entities {
		refs = append(refs, graph.EntityRef{Name: name})
	}
	in := graph.MemoryInput{
		Memory: graph.Memory{
			Scope: s, UserID: r.UserID, Type: r.Type, Title: r.Title, Tags: r.Tags,
			Importance: importance, ValidFrom: r.ValidFrom, ValidTo: r.ValidTo, Visibility: r.Visibility,
			SubjectType: r.SubjectType, SubjectID: r.SubjectID, ProjectID: r.ProjectID,
			SessionID: r.SessionID, Channel: r.Channel, CreatedAt: e.now().UTC(),
		},
		Version: graph.VersionInput{Content: r.Content, Summary: r.Summary, Entities: refs, Provenance: r.Provenance},
	}
	if in.Memory.UserID == "" {
		in.Memory.UserID = p.ID
	}
	c, err := e.store.CreateMemory(ctx, in)
	if err != nil {
		return graph.Created{}, fmt.Errorf("create memory: %w", err)
	}
	return c, nil
}
