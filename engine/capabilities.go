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
	relations graph.Relations
	// warmer warms the walk while a hybrid search waits for its vector
	// seeds (retrieveHybrid).
	warmer graph.WalkWarmer
	// ranker names graph mode's keyword seeds before the keyword hits
	// load, so that the walk need not wait for them (graphSignal).
	ranker graph.KeywordRanker
}

func capabilitiesOf(s graph.Store) capabilities {
	var c capabilities
	c.proposals, _ = s.(graph.Proposals)
	c.edits, _ = s.(graph.Edits)
	c.capsules, _ = s.(graph.Capsules)
	c.relations, _ = s.(graph.Relations)
	c.warmer, _ = s.(graph.WalkWarmer)
	c.ranker, _ = s.(graph.KeywordRanker)
	return c
}

// capability returns c, the store's implementation of a capability, or
// graph.ErrUnsupported naming it when the store lacks it (c is nil). A use
// case that needs a capability starts with it:
//
//	es, err := capability(e.caps.edits, "edits")
func capability[C any](c C, name string) (C, error) {
	if any(c) == nil {
		return c, fmt.Errorf("the graph store has no %s: %w", name, graph.ErrUnsupported)
	}
	return c, nil
}

// proposals returns the store's graph.Proposals, or ErrUnsupported.
func (e *Engine) proposals() (graph.Proposals, error) {
	return capability(e.caps.proposals, "proposals")
}

// capsules returns the store's graph.Capsules, or ErrUnsupported.
func (e *Engine) capsules() (graph.Capsules, error) {
	return capability(e.caps.capsules, "capsules")
}

// relations returns the store's graph.Relations, or ErrUnsupported.
func (e *Engine) relations() (graph.Relations, error) {
	return capability(e.caps.relations, "relations")
}
