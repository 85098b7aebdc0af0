package engine_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mnemo-dev/mnemo/engine"
	"github.com/mnemo-dev/mnemo/graph"
)

// TestIngestCanonicalKey holds the write path to "a canonical key
// identifies one fact": statements that share a key but tell different
// facts apart (numbers, ids) are both kept; a restatement that differs in
// case and punctuation reinforces; an unsure pair is kept and flagged, with
// an audit event, never hidden.
func TestIngestCanonicalKey(t *testing.T) {
	f := newIngFixture(t, ingOpts{})
	ctx := ingCtx(t)
	w := f.as("librarian")
	note := func(content string) engine.IngestRequest { return engine.IngestRequest{Type: "note", Content: content} }
	ingest := func(t *testing.T, content string) engine.IngestResult {
		t.Helper()
		r, err := f.eng.Ingest(ctx, w, note(content))
		require.NoError(t, err)
		return r
	}

	t.Run("numbered observations are different facts", func(t *testing.T) {
		a := ingest(t, "Orca seed observation number 1")
		b := ingest(t, "Orca seed observation number 2")
		require.Equal(t, engine.StatusApproved, a.Status, "%+v", a)
		assert.Equal(t, engine.StatusApproved, b.Status, "%+v", b)
		assert.Empty(t, b.Supersedes)
		assert.NotEqual(t, a.CanonicalKey, b.CanonicalKey, "the second takes a key of its own")
		assert.Equal(t, graph.StatusActive, f.memory(t, a.ID).Status)
		again := ingest(t, "orca seed observation number 2")
		assert.Equal(t, engine.StatusReinforced, again.Status, "%+v", again)
		assert.Equal(t, b.ID, again.ID, "the restatement finds the second under its own key")
	})

	t.Run("four side notes all stay", func(t *testing.T) {
		var ids []string
		for i := 1; i <= 4; i++ {
			r := ingest(t, fmt.Sprintf("Sharedx side note %d about hydrophone %d%d", i, i, i))
			require.Equal(t, engine.StatusApproved, r.Status, "note %d: %+v", i, r)
			ids = append(ids, r.ID)
		}
		for i, id := range ids {
			assert.Equal(t, graph.StatusActive, f.memory(t, id).Status, "note %d", i+1)
		}
	})

	t.Run("one batch keeps different facts and reinforces restatements", func(t *testing.T) {
		var rs []engine.IngestRequest
		for i := 1; i <= 4; i++ {
			rs = append(rs, note(fmt.Sprintf("Batchy side note %d about buoy %d%d", i, i, i)))
		}
		rs = append(rs, note("batchy side note 2 about buoy 22"), note("Batchy side note 3 about buoy 33."))
		res, err := f.eng.IngestBatch(ctx, w, rs)
		require.NoError(t, err)
		keys := map[string]bool{}
		for i, r := range res[:4] {
			require.Equal(t, engine.StatusApproved, r.Status, "item %d: %+v", i, r)
			keys[r.CanonicalKey] = true
		}
		assert.Len(t, keys, 4, "four facts, four keys")
		assert.Equal(t, engine.StatusReinforced, res[4].Status, "%+v", res[4])
		assert.Equal(t, res[1].ID, res[4].ID)
		assert.Equal(t, engine.StatusReinforced, res[5].Status, "%+v", res[5])
		assert.Equal(t, res[2].ID, res[5].ID)
		assert.Equal(t, int64(2), f.memory(t, res[1].ID).AccessCount)
	})

	t.Run("lower-case restatement reinforces", func(t *testing.T) {
		a := ingest(t, "The quokka habitat survey found marmalade traces.")
		b := ingest(t, "the quokka habitat survey found marmalade traces")
		assert.Equal(t, engine.StatusReinforced, b.Status, "%+v", b)
		assert.Equal(t, a.ID, b.ID)
		assert.Equal(t, int64(2), f.memory(t, a.ID).AccessCount)
	})

	t.Run("same slot, new value supersedes", func(t *testing.T) {
		a := ingest(t, "The cache timeout is 30 seconds.")
		b := ingest(t, "The cache timeout is 90 seconds.")
		assert.Equal(t, engine.StatusSuperseded, b.Status, "%+v", b)
		assert.Equal(t, a.ID, b.Supersedes)
		assert.NotEmpty(t, b.Integrity)
	})

	t.Run("unsure pairs are kept and flagged", func(t *testing.T) {
		// A past event on another date may be another event.
		a := ingest(t, "Jonas called the bank on Monday.")
		b := ingest(t, "Jonas called the bank on Thursday.")
		ka, kb := strings.SplitN(a.CanonicalKey, "-", 3), strings.SplitN(b.CanonicalKey, "-", 3)
		require.Equal(t, ka[:2], kb[:2], "precondition: one subject and aspect")
		assert.NotEqual(t, a.CanonicalKey, b.CanonicalKey, "the kept memory takes a key of its own")
		assert.Equal(t, engine.StatusApproved, b.Status, "%+v", b)
		require.Len(t, b.Contradicts, 1)
		assert.Equal(t, a.ID, b.Contradicts[0].ID)
		assert.Equal(t, graph.StatusActive, f.memory(t, a.ID).Status)
		var flagged []graph.AuditEvent
		for _, ev := range f.audits(t, engine.AuditPossibleContradiction) {
			if ev.SubjectID == b.ID {
				flagged = append(flagged, ev)
			}
		}
		require.Len(t, flagged, 1)
		assert.Contains(t, flagged[0].Reason, a.ID)
	})
}

// TestIngestCandidates: a statement whose key misses the memory it restates
// or updates (the key embeds the value, or a paraphrase changes it) finds
// that memory by content, within one namespace only; within a batch, a
// later item meets the memory an earlier one wrote or superseded.
func TestIngestCandidates(t *testing.T) {
	f := newIngFixture(t, ingOpts{})
	ctx := ingCtx(t)
	w := f.as("librarian")
	note := func(content string) engine.IngestRequest { return engine.IngestRequest{Type: "note", Content: content} }
	ingest := func(t *testing.T, p graph.Principal, content string) engine.IngestResult {
		t.Helper()
		r, err := f.eng.Ingest(ctx, p, note(content))
		require.NoError(t, err)
		return r
	}

	t.Run("a new value under another key supersedes", func(t *testing.T) {
		a := ingest(t, w, "Our plumber is Tomasz Nowak.")
		b := ingest(t, w, "Our plumber is Dmitri Volkov.")
		require.Equal(t, engine.StatusApproved, a.Status, "%+v", a)
		require.NotEqual(t, a.CanonicalKey, b.CanonicalKey, "precondition: the keys embed the values")
		assert.Equal(t, engine.StatusSuperseded, b.Status, "%+v", b)
		assert.Equal(t, a.ID, b.Supersedes)
		assert.Equal(t, graph.StatusSuperseded, f.memory(t, a.ID).Status)
	})

	t.Run("a paraphrase under another key reinforces", func(t *testing.T) {
		a := ingest(t, w, "The budget for the garden party is 800 euros.")
		b := ingest(t, w, "The garden party budget is 800 euros.")
		require.Equal(t, engine.StatusApproved, a.Status, "%+v", a)
		require.NotEqual(t, a.CanonicalKey, b.CanonicalKey, "precondition: the keys differ")
		assert.Equal(t, engine.StatusReinforced, b.Status, "%+v", b)
		assert.Equal(t, a.ID, b.ID)
	})

	t.Run("another user's memory is no candidate", func(t *testing.T) {
		a := ingest(t, w, "My dentist is Dr. Haddad.")
		other := w
		other.ID, other.UserID = "someone-else", "someone-else"
		b := ingest(t, other, "My dentist is Dr. Brennan.")
		require.Equal(t, engine.StatusApproved, a.Status, "%+v", a)
		assert.Equal(t, engine.StatusApproved, b.Status, "%+v", b)
		assert.Empty(t, b.Contradicts)
		assert.Equal(t, graph.StatusActive, f.memory(t, a.ID).Status)
	})

	t.Run("different facts are not candidates of each other", func(t *testing.T) {
		a := ingest(t, w, "The staging cluster has 12 nodes.")
		b := ingest(t, w, "The staging cluster was upgraded last Tuesday.")
		require.Equal(t, engine.StatusApproved, a.Status, "%+v", a)
		assert.Equal(t, engine.StatusApproved, b.Status, "%+v", b)
		assert.Equal(t, graph.StatusActive, f.memory(t, a.ID).Status)
	})

	t.Run("one batch: an update, then a restatement of the update", func(t *testing.T) {
		stored := ingest(t, w, "Our landlord is Mr. Fischer.")
		require.Equal(t, engine.StatusApproved, stored.Status, "%+v", stored)
		res, err := f.eng.IngestBatch(ctx, w, []engine.IngestRequest{
			note("Our landlord is Mrs. Albrecht."),
			note("our landlord is Mrs. Albrecht"),
			note("The boiler in the cellar gets serviced in May."),
			note("The cellar boiler gets serviced in May."),
		})
		require.NoError(t, err)
		require.Len(t, res, 4)
		assert.Equal(t, engine.StatusSuperseded, res[0].Status, "%+v", res[0])
		assert.Equal(t, stored.ID, res[0].Supersedes)
		assert.Equal(t, engine.StatusReinforced, res[1].Status, "%+v", res[1])
		assert.Equal(t, res[0].ID, res[1].ID, "the restatement meets the new memory, not the superseded one")
		require.Equal(t, engine.StatusApproved, res[2].Status, "%+v", res[2])
		assert.Equal(t, engine.StatusReinforced, res[3].Status, "%+v", res[3])
		assert.Equal(t, res[2].ID, res[3].ID, "an earlier item of the batch is a candidate")
		assert.Equal(t, graph.StatusSuperseded, f.memory(t, stored.ID).Status)
	})
}

// TestSupersessionChainHead: a superseded memory names the head of its
// chain on GET and in read_context, and a write that names a non-head in
// supersedes is refused with a fix naming the head.
func TestSupersessionChainHead(t *testing.T) {
	f := newIngFixture(t, ingOpts{})
	ctx := ingCtx(t)
	w := f.as("librarian")
	var chain []engine.IngestResult
	for _, port := range []int{8080, 9090, 7070} {
		r, err := f.eng.Ingest(ctx, w, engine.IngestRequest{Type: "note", Content: fmt.Sprintf("The API server listens on port %d.", port)})
		require.NoError(t, err)
		chain = append(chain, r)
	}
	require.Equal(t, engine.StatusSuperseded, chain[1].Status)
	require.Equal(t, engine.StatusSuperseded, chain[2].Status)
	a, b, c := chain[0].ID, chain[1].ID, chain[2].ID

	tests := []struct {
		name, id, head, next string
	}{
		{"two hops from the head", a, c, b},
		{"one hop from the head", b, c, c},
		{"the head itself", c, "", ""},
	}
	for _, tt := range tests {
		t.Run("get "+tt.name, func(t *testing.T) {
			v, err := f.eng.Get(ctx, w, tt.id)
			require.NoError(t, err)
			assert.Equal(t, tt.head, v.HeadID)
			assert.Equal(t, tt.next, v.Memory.SupersededBy)
		})
		t.Run("read_context "+tt.name, func(t *testing.T) {
			resp, err := f.eng.ReadContext(ctx, w, engine.ContextRequest{ElementID: tt.id})
			require.NoError(t, err)
			require.Len(t, resp.Items, 1)
			assert.Equal(t, tt.head, resp.Items[0].HeadID)
			if tt.head != "" {
				assert.Equal(t, graph.StatusSuperseded, resp.Items[0].Status)
			} else {
				assert.Empty(t, resp.Items[0].Status)
			}
		})
	}

	t.Run("supersedes naming a non-head is refused with the head", func(t *testing.T) {
		r, err := f.eng.Ingest(ctx, w, engine.IngestRequest{Type: "note", Content: "The API server listens on port 6060.", Supersedes: a})
		require.NoError(t, err)
		assert.Equal(t, engine.StatusRejected, r.Status)
		assert.True(t, r.Conflict)
		assert.Contains(t, r.Fix, "supersede "+c+" instead")
		assert.NotContains(t, r.Fix, b, "the next hop is itself superseded")
	})
}
