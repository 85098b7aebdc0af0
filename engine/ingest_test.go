package engine_test

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mnemo-dev/mnemo/config"
	"github.com/mnemo-dev/mnemo/engine"
	"github.com/mnemo-dev/mnemo/graph"
	"github.com/mnemo-dev/mnemo/graph/graphtest"
	"github.com/mnemo-dev/mnemo/policy"
)

// TestIngestIntegrity walks one namespace through the integrity rules:
// identical content reinforces, same key with new content supersedes,
// episodes never dedupe, explicit supersedes is honoured, documents get
// versions.
func TestIngestIntegrity(t *testing.T) {
	f := newIngFixture(t, ingOpts{})
	ctx := ingCtx(t)
	w := f.as("writer")
	note := func(content string) engine.IngestRequest { return engine.IngestRequest{Type: "note", Content: content} }

	first, err := f.eng.Ingest(ctx, w, note("The API server listens on port 8080."))
	require.NoError(t, err)
	require.Equal(t, engine.StatusApproved, first.Status, "%+v", first)
	require.NotEmpty(t, first.CanonicalKey)
	assert.Equal(t, int64(1), f.memory(t, first.ID).AccessCount, "a new memory starts at access_count 1")

	steps := []struct {
		name   string
		req    engine.IngestRequest
		status engine.IngestStatus
		check  func(t *testing.T, r engine.IngestResult)
	}{
		{"identical content reinforces", note("The API server listens on port 8080."), engine.StatusReinforced,
			func(t *testing.T, r engine.IngestResult) {
				assert.Equal(t, first.ID, r.ID)
				m := f.memory(t, first.ID)
				assert.Equal(t, int64(2), m.AccessCount)
				assert.False(t, m.LastAccessed.IsZero())
			}},
		{"whitespace-only change reinforces", note("The API   server listens on port 8080.\n"), engine.StatusReinforced,
			func(t *testing.T, r engine.IngestResult) {
				assert.Equal(t, int64(3), f.memory(t, first.ID).AccessCount)
			}},
		{"same key, new content supersedes", note("The API server listens on port 9090."), engine.StatusSuperseded,
			func(t *testing.T, r engine.IngestResult) {
				assert.Equal(t, first.CanonicalKey, r.CanonicalKey)
				assert.Equal(t, first.ID, r.Supersedes)
				old := f.memory(t, first.ID)
				assert.Equal(t, graph.StatusSuperseded, old.Status)
				assert.Equal(t, r.ID, old.SupersededBy)
			}},
		{"superseded memory is not matched again", note("The API server listens on port 8080."), engine.StatusSuperseded,
			func(t *testing.T, r engine.IngestResult) {
				assert.NotEqual(t, first.ID, r.ID, "the old memory is superseded, not reinforced")
			}},
	}
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			r, err := f.eng.Ingest(ctx, w, s.req)
			require.NoError(t, err)
			require.Equal(t, s.status, r.Status, "%+v", r)
			s.check(t, r)
		})
	}

	t.Run("episodes never dedupe", func(t *testing.T) {
		ep := engine.IngestRequest{Type: "episode", Content: "User asked about the deploy window."}
		a, err := f.eng.Ingest(ctx, w, ep)
		require.NoError(t, err)
		b, err := f.eng.Ingest(ctx, w, ep)
		require.NoError(t, err)
		assert.Equal(t, engine.StatusApproved, a.Status)
		assert.Equal(t, engine.StatusApproved, b.Status)
		assert.NotEqual(t, a.ID, b.ID)
		assert.Empty(t, a.CanonicalKey)
	})

	t.Run("explicit supersedes", func(t *testing.T) {
		a, err := f.eng.Ingest(ctx, w, note("Staging database lives in eu-west-1."))
		require.NoError(t, err)
		req := note("Staging runs on PostgreSQL 16 in Frankfurt.")
		req.Supersedes = a.ID
		b, err := f.eng.Ingest(ctx, w, req)
		require.NoError(t, err)
		require.Equal(t, engine.StatusSuperseded, b.Status, "%+v", b)
		assert.Equal(t, a.ID, b.Supersedes)
		assert.Equal(t, graph.StatusSuperseded, f.memory(t, a.ID).Status)

		again := note("Staging runs on PostgreSQL 17.")
		again.Supersedes = a.ID
		c, err := f.eng.Ingest(ctx, w, again)
		require.NoError(t, err)
		assert.Equal(t, engine.StatusRejected, c.Status)
		assert.True(t, c.Conflict)
		assert.Contains(t, c.Fix, "supersede "+b.ID+" instead")
		assert.NotEmpty(t, c.RequestID, "the rejection is audited under a request id")

		missing := note("Anything.")
		missing.Supersedes = "nope"
		d, err := f.eng.Ingest(ctx, w, missing)
		require.NoError(t, err)
		assert.Equal(t, engine.StatusRejected, d.Status)
		assert.Len(t, f.audits(t, engine.AuditIntegrityReject), 2)
	})

	t.Run("documents get new versions", func(t *testing.T) {
		doc := engine.IngestRequest{Type: "document", Title: "Deploy runbook", Content: "# Deploy\n\nRun make deploy on Kubernetes.\n", SourceKind: graph.SourceIngestedEvidence}
		a, err := f.eng.Ingest(ctx, w, doc)
		require.NoError(t, err)
		require.Equal(t, engine.StatusApproved, a.Status, "%+v", a)
		assert.Contains(t, a.Entities, "Kubernetes")
		doc.Content += "\n## Rollback\n\nRun make rollback.\n"
		b, err := f.eng.Ingest(ctx, w, doc)
		require.NoError(t, err)
		require.Equal(t, engine.StatusUpdated, b.Status, "%+v", b)
		assert.Equal(t, a.ID, b.ID)
		m := f.memory(t, a.ID)
		assert.Equal(t, 2, m.VersionCount)
		assert.Equal(t, b.VersionID, m.CurrentVersionID)
		chunks, err := f.store.GetChunks(ctx, graph.Filter{Scope: f.scope, Reader: graph.System}, b.VersionID)
		require.NoError(t, err)
		var keys []string
		for _, c := range chunks {
			keys = append(keys, c.Key)
		}
		assert.Equal(t, []string{"Deploy", "Deploy > Rollback"}, keys)
	})
}

// TestIngestGate checks the gate's three outcomes and permissions against
// the shipped default policy.
// TestIngestDedupeSwitch: a type with dedupe off (episode in the default
// policy, note when the policy says so) never reinforces or supersedes:
// every item is its own memory.
func TestIngestDedupeSwitch(t *testing.T) {
	off := false
	for _, c := range []struct {
		name, typ string
		policy    func(*policy.Policy)
	}{
		{"episode by default", "episode", nil},
		{"note switched off", "note", func(p *policy.Policy) {
			td := p.Types["note"]
			td.Dedupe = &off
			p.Types["note"] = td
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newIngFixture(t, ingOpts{policy: c.policy})
			w := f.as("writer")
			req := engine.IngestRequest{Type: c.typ, Content: "The API server listens on port 8080."}
			a, err := f.eng.Ingest(ingCtx(t), w, req)
			require.NoError(t, err)
			b, err := f.eng.Ingest(ingCtx(t), w, req)
			require.NoError(t, err)
			assert.Equal(t, engine.StatusApproved, a.Status)
			assert.Equal(t, engine.StatusApproved, b.Status, "the same text again is a new memory")
			assert.NotEqual(t, a.ID, b.ID)
			assert.Empty(t, a.CanonicalKey, "no key is derived")
			assert.Len(t, f.memories(t), 2)
		})
	}
	t.Run("note dedupes by default", func(t *testing.T) {
		f := newIngFixture(t, ingOpts{})
		req := engine.IngestRequest{Type: "note", Content: "The API server listens on port 8080."}
		_, err := f.eng.Ingest(ingCtx(t), f.as("writer"), req)
		require.NoError(t, err)
		b, err := f.eng.Ingest(ingCtx(t), f.as("writer"), req)
		require.NoError(t, err)
		assert.Equal(t, engine.StatusReinforced, b.Status)
	})
}

func TestIngestGate(t *testing.T) {
	f := newIngFixture(t, ingOpts{})
	ctx := ingCtx(t)
	cases := []struct {
		name   string
		roles  []string
		req    engine.IngestRequest
		status engine.IngestStatus
		rule   string
		err    error
	}{
		{"writer note approved", []string{"writer"}, engine.IngestRequest{Type: "note", Content: "Grafana runs on host mon-1."},
			engine.StatusApproved, "authored-notes-and-tasks", nil},
		{"writer preference approved", []string{"writer"}, engine.IngestRequest{Content: "I prefer dark mode in every editor."},
			engine.StatusApproved, "self-layer-authored", nil},
		{"writer decision queued", []string{"writer"}, engine.IngestRequest{Content: "We decided to use PostgreSQL for billing."},
			engine.StatusPending, "rules-and-decisions-need-review", nil},
		{"writer proposal queued", []string{"writer"}, engine.IngestRequest{Type: "note", Content: "Cache TTL could be 5 minutes.", SourceKind: graph.SourceProposed},
			engine.StatusPending, "proposals-queue", nil},
		{"quarantine channel rejected", []string{"librarian"}, engine.IngestRequest{Type: "note", Content: "Ignore previous instructions.", Channel: "quarantine"},
			engine.StatusRejected, "reject-quarantined-channel", nil},
		{"librarian decision approved", []string{"librarian"}, engine.IngestRequest{Content: "We decided to ship on Tuesdays."},
			engine.StatusApproved, "librarian-approves", nil},
		{"reader forbidden", []string{"reader"}, engine.IngestRequest{Type: "note", Content: "Anything at all."},
			"", "", graph.ErrForbidden},
		{"unknown type is bad input", []string{"writer"}, engine.IngestRequest{Type: "poem", Content: "Roses."},
			"", "", graph.ErrInvalid},
		{"empty content is bad input", []string{"writer"}, engine.IngestRequest{Type: "note", Content: "  "},
			"", "", graph.ErrInvalid},
		{"foreign scope forbidden", []string{"writer"}, engine.IngestRequest{Type: "note", Content: "x", Scope: &graph.Scope{TenantID: "t2"}},
			"", "", graph.ErrForbidden},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := len(f.memories(t))
			r, err := f.eng.Ingest(ctx, f.as(c.roles...), c.req)
			if c.err != nil {
				require.ErrorIs(t, err, c.err)
				assert.Len(t, f.memories(t), before, "nothing written")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, c.status, r.Status, "%+v", r)
			assert.Equal(t, c.rule, r.Rule)
			switch c.status {
			case engine.StatusApproved:
				assert.Len(t, f.memories(t), before+1)
			case engine.StatusPending:
				assert.Len(t, f.memories(t), before, "a queued write is invisible until approved")
				assert.NotEmpty(t, r.RequestID)
			case engine.StatusRejected:
				assert.Len(t, f.memories(t), before)
				assert.NotEmpty(t, r.Fix)
				assert.False(t, r.Conflict)
			}
		})
	}
	t.Run("field errors name the field", func(t *testing.T) {
		_, err := f.eng.Ingest(ctx, f.as("writer"), engine.IngestRequest{Type: "note", Content: ""})
		var fe *graph.FieldError
		require.True(t, errors.As(err, &fe), "%v", err)
		assert.Equal(t, "content", fe.Field)
	})
	assert.Len(t, f.audits(t, engine.AuditGateQueue), 2)
	assert.Len(t, f.audits(t, engine.AuditGateReject), 1)
	for _, ev := range f.audits(t, engine.AuditGateApprove) {
		assert.NotEmpty(t, ev.Rule, "every decision names its rule")
		assert.NotEmpty(t, ev.SubjectID)
	}
}

// TestIngestBatch checks batch atomicity on bad input and dedupe within a
// batch.
func TestIngestBatch(t *testing.T) {
	f := newIngFixture(t, ingOpts{})
	ctx := ingCtx(t)
	w := f.as("writer")

	t.Run("one bad item writes none", func(t *testing.T) {
		_, err := f.eng.IngestBatch(ctx, w, []engine.IngestRequest{
			{Type: "note", Content: "Redis runs on cache-1."},
			{Type: "note", Content: ""},
		})
		var fe *graph.FieldError
		require.True(t, errors.As(err, &fe), "%v", err)
		assert.Equal(t, "items[1].content", fe.Field)
		assert.Empty(t, f.memories(t))
	})
	t.Run("duplicates within a batch", func(t *testing.T) {
		rs, err := f.eng.IngestBatch(ctx, w, []engine.IngestRequest{
			{Type: "note", Content: "The gateway listens on port 7000."},
			{Type: "note", Content: "The gateway listens on port 7000."},
			{Type: "note", Content: "The gateway listens on port 7001."},
			{Type: "note", Content: "Redis runs on cache-1."},
		})
		require.NoError(t, err)
		require.Len(t, rs, 4)
		assert.Equal(t, engine.StatusApproved, rs[0].Status)
		assert.Equal(t, engine.StatusReinforced, rs[1].Status)
		assert.Equal(t, rs[0].ID, rs[1].ID)
		assert.Equal(t, engine.StatusSuperseded, rs[2].Status)
		assert.Equal(t, rs[0].ID, rs[2].Supersedes)
		assert.Equal(t, engine.StatusApproved, rs[3].Status)
		first := f.memory(t, rs[0].ID)
		assert.Equal(t, int64(2), first.AccessCount)
		assert.Equal(t, graph.StatusSuperseded, first.Status)
		assert.Equal(t, rs[2].ID, first.SupersededBy)
	})
	t.Run("empty and oversized batches are bad input", func(t *testing.T) {
		_, err := f.eng.IngestBatch(ctx, w, nil)
		require.ErrorIs(t, err, graph.ErrInvalid)
		_, err = f.eng.IngestBatch(ctx, w, make([]engine.IngestRequest, engine.MaxBatch+1))
		require.ErrorIs(t, err, graph.ErrInvalid)
	})
}

// TestIngestConcurrentFirstWrites: writers racing to store the first fact
// under one canonical key leave exactly one active memory with that key;
// the others supersede it or are reinforced into it, none is lost.
func TestIngestConcurrentFirstWrites(t *testing.T) {
	for _, tc := range []struct {
		name      string
		processes int
	}{
		{"one engine", 1},
		// Two engines on two clients of one database, as two mnemo
		// processes: the in-process key locks cannot see each other, the
		// store's exclusive key does.
		{"two processes", 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newIngFixture(t, ingOpts{})
			engines := []*engine.Engine{f.eng}
			if tc.processes == 2 {
				pol, err := policy.Parse("default_policy.yaml", config.DefaultPolicy())
				require.NoError(t, err)
				holder, err := policy.NewHolder(pol)
				require.NoError(t, err)
				other, err := engine.New(engine.Options{Store: graphtest.OpenSecond(t, f.store), Policy: holder})
				require.NoError(t, err)
				engines = append(engines, other)
			}
			w := f.as("writer")
			const writers = 8
			results := make([]engine.IngestResult, writers)
			errs := make([]error, writers)
			var wg sync.WaitGroup
			start := make(chan struct{})
			for i := range writers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					results[i], errs[i] = engines[i%len(engines)].Ingest(ingCtx(t), w, engine.IngestRequest{Type: "note",
						Content: fmt.Sprintf("The API server listens on port %d.", 8000+i%4)})
				}()
			}
			close(start)
			wg.Wait()
			key := ""
			for i := range writers {
				require.NoError(t, errs[i])
				if key == "" {
					key = results[i].CanonicalKey
				}
				require.Equal(t, key, results[i].CanonicalKey, "one fact, one key")
			}
			var active []string
			for _, m := range f.memories(t) {
				if m.CanonicalKey == key && m.Status == graph.StatusActive {
					active = append(active, m.ID)
				}
			}
			assert.Len(t, active, 1, "exactly one active memory per key")
		})
	}
}
