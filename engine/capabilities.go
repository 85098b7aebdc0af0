package engine

import (
	"fmt"

	"github.com/mnemo-dev/mnemo/graph"
)

// capabilities are the optional graph.Store interfaces the engine found on
// its store when it was built (New type-asserts them once). A nil field is a
// capability the store lacks: the use cases that need it return
// graph.ErrUnsupported (HTTP 501), and the reads that would only consult it
// go on without it (no approved edit to apply, no baseline to pin).
type capabilities struct {
	proposals graph.Proposals
	edits     graph.Edits
	capsules  graph.Capsules
}

func capabilitiesOf(s graph.Store) capabilities {
	var c capabilities
	c.proposals, _ = s.(graph.Proposals)
	c.edits, _ = s.(graph.Edits)
	c.capsules, _ = s.(graph.Capsules)
	return c
}

// unsupported is the error of a use case whose capability the store lacks.
func unsupported(capability string) error {
	return fmt.Errorf("the graph store has no %s: %w", capability, graph.ErrUnsupported)
}

// proposals returns the store's graph.Proposals, or ErrUnsupported.
func (e *Engine) proposals() (graph.Proposals, error) {
	if e.caps.proposals == nil {
		return nil, unsupported("proposals")
	}
	return e.caps.proposals, nil
}

// edits returns the store's graph.Edits, or ErrUnsupported.
func (e *Engine) edits() (graph.Edits, error) {
	if e.caps.edits == nil {
		return nil, unsupported("edits")
	}
	return e.caps.edits, nil
}

// capsules returns the store's graph.Capsules, or ErrUnsupported.
func (e *Engine) capsules() (graph.Capsules, error) {
	if e.caps.capsules == nil {
		return nil, unsupported("capsules")
	}
	return e.caps.capsules, nil
}
