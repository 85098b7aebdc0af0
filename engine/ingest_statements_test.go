package engine_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mnemo-dev/mnemo/engine"
)

// TestIngestStatementCache: an engine that keeps the statements of the
// versions it wrote (ingest_statements.go) decides a later write exactly
// as a new engine on the same store, which must read the stored content
// and analyse it: the same status, decision, target and contradictions.
func TestIngestStatementCache(t *testing.T) {
	warm := newIngFixture(t, ingOpts{})
	coldWriter := newIngFixture(t, ingOpts{})
	ctx := ingCtx(t)
	note := func(content string) engine.IngestRequest { return engine.IngestRequest{Type: "note", Content: content} }
	tests := []struct {
		name   string
		stored []string
		next   []string // one batch
		want   []engine.IngestStatus
	}{
		{"an update supersedes", []string{"Our plumber is Tomasz Nowak."}, []string{"Our plumber is Dmitri Volkov."},
			[]engine.IngestStatus{engine.StatusSuperseded}},
		{"a paraphrase reinforces", []string{"The budget for the garden party is 800 euros."},
			[]string{"The garden party budget is 800 euros."}, []engine.IngestStatus{engine.StatusReinforced}},
		{"another fact of one subject", []string{"The staging cluster has 12 nodes."},
			[]string{"The staging cluster was upgraded last Tuesday."}, []engine.IngestStatus{engine.StatusApproved}},
		{"one of many slots", []string{"Ahmed is allergic to peanuts."},
			[]string{"Ahmed is allergic to penicillin."}, []engine.IngestStatus{engine.StatusApproved}},
		{"candidates and holders in one batch",
			[]string{"Kofi leads the mobile team.", "Our landlord is Mr. Fischer.", "The cellar boiler gets serviced in May."},
			[]string{"Kofi leads the hiring committee.", "Our landlord is Mrs. Albrecht.", "our landlord is Mrs. Albrecht",
				"The boiler in the cellar gets serviced in May."},
			[]engine.IngestStatus{engine.StatusApproved, engine.StatusSuperseded, engine.StatusReinforced, engine.StatusReinforced}},
	}
	// outcome is a result with the ids it names given as indexes into
	// stored (s0, s1, ...) or the batch (b0, b1, ...).
	outcome := func(r engine.IngestResult, stored []string, batch []engine.IngestResult) string {
		name := func(id string) string {
			if i := slices.Index(stored, id); i >= 0 {
				return fmt.Sprintf("s%d", i)
			}
			for i, b := range batch {
				if b.ID == id {
					return fmt.Sprintf("b%d", i)
				}
			}
			return id
		}
		var cs []string
		for _, c := range r.Contradicts {
			cs = append(cs, name(c.ID)+": "+c.Reason)
		}
		return fmt.Sprintf("%s id=%s supersedes=%s integrity=%q contradicts=%q", r.Status, name(r.ID), name(r.Supersedes), r.Integrity, cs)
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Each run writes as its own user: on Neo4j the fixtures share
			// one database.
			run := func(user string, writer, reader *engine.Engine) []string {
				p := warm.as("librarian")
				p.ID, p.UserID = user, user
				var stored []string
				for _, c := range tt.stored {
					r, err := writer.Ingest(ctx, p, note(c))
					require.NoError(t, err)
					require.Equal(t, engine.StatusApproved, r.Status, "precondition: %q is new: %+v", c, r)
					stored = append(stored, r.ID)
				}
				var reqs []engine.IngestRequest
				for _, c := range tt.next {
					reqs = append(reqs, note(c))
				}
				res, err := reader.IngestBatch(ctx, p, reqs)
				require.NoError(t, err)
				var out []string
				for j, r := range res {
					assert.Equal(t, tt.want[j], r.Status, "%q: %+v", tt.next[j], r)
					out = append(out, outcome(r, stored, res))
				}
				return out
			}
			// A new engine on the store coldWriter wrote: nothing cached.
			cold := newIngFixture(t, ingOpts{store: coldWriter.store})
			assert.Equal(t, run(fmt.Sprintf("cold-%d", i), coldWriter.eng, cold.eng), run(fmt.Sprintf("warm-%d", i), warm.eng, warm.eng))
		})
	}
}
