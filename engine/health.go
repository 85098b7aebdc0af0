package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/mnemo-dev/mnemo/graph"
)

// embedProbeTimeout bounds the embedder probe.
const embedProbeTimeout = 2 * time.Second

// Probes returns cheap checks of the engine's vector dependencies, by name,
// for /healthz: "vector_index" counts the points of one tenant, and
// "embedder" embeds a short text within embedProbeTimeout. There are none
// when this engine has no vector index.
func (e *Engine) Probes() map[string]func(context.Context) error {
	if e.index == nil {
		return nil
	}
	return map[string]func(context.Context) error{
		"vector_index": func(ctx context.Context) error {
			if _, err := e.index.Count(ctx, maintenanceFilter(graph.Scope{TenantID: "healthz"})); err != nil {
				return fmt.Errorf("count points: %w", err)
			}
			return nil
		},
		"embedder": func(ctx context.Context) error {
			ctx, cancel := context.WithTimeout(ctx, embedProbeTimeout)
			defer cancel()
			vecs, err := e.embedder.Embed(ctx, []string{"health check"})
			if err != nil {
				return fmt.Errorf("embed: %w", err)
			}
			if len(vecs) != 1 || len(vecs[0]) != e.embedder.Dimensions() {
				return fmt.Errorf("embed: got %d vectors, want one of %d dimensions", len(vecs), e.embedder.Dimensions())
			}
			return ctx.Err()
		},
	}
}
