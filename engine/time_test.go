package engine_test

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mnemo-dev/mnemo/engine"
	"github.com/mnemo-dev/mnemo/graph"
	"github.com/mnemo-dev/mnemo/policy"
)

// TestTimeTravel reads get, search and read_context as known at instants
// between the steps of a history (on the store MNEMO_TEST_STORE names):
//
//	k1  price ("ten euros") and notice written
//	    a late correction ("twelve euros") supersedes price
//	k2  an amend edit on notice proposed and approved; notice's secret twin erased
//
// and as of a valid time at the edge of a validity window.
func TestTimeTravel(t *testing.T) {
	f := newIngFixture(t, ingOpts{vectors: true})
	ctx := ingCtx(t)
	alice := who("alice", "", t1, "writer")
	admin := who("admin-1", "", t1, "admin")
	mark := func() time.Time {
		time.Sleep(3 * time.Millisecond)
		at := time.Now().UTC()
		time.Sleep(3 * time.Millisecond)
		return at
	}
	ingest := func(r engine.IngestRequest) string {
		t.Helper()
		res, err := f.eng.Ingest(ctx, alice, r)
		require.NoError(t, err)
		require.NotEmpty(t, res.ID, "%+v", res)
		return res.ID
	}
	k0 := mark()
	price := ingest(engine.IngestRequest{Type: "note", Title: "zorblat price", Content: "The zorblat gadget costs ten euros."})
	notice := ingest(engine.IngestRequest{Type: "note", Title: "zorblat notice", Content: "The zorblat shop opens at nine."})
	secret := ingest(engine.IngestRequest{Type: "note", Title: "zorblat secret", Content: "The zorblat vault code is quokka."})
	windowEnd := time.Now().UTC().Add(time.Hour).Truncate(time.Second)
	window := ingest(engine.IngestRequest{Type: "note", Title: "zorblat sale", Content: "The zorblat sale runs this week.",
		ValidTo: windowEnd})
	k1 := mark()
	correction := ingest(engine.IngestRequest{Type: "note", Title: "zorblat price", Content: "The zorblat gadget costs twelve euros.",
		Supersedes: price})
	k2 := mark()
	ed, err := f.eng.ProposeEdit(ctx, admin, notice, engine.EditRequest{Kind: graph.EditAmend,
		Content: "The zorblat shop opens at ten.", Reason: "hours changed"})
	require.NoError(t, err)
	if !ed.AutoApproved {
		_, err = f.eng.DecideEdit(ctx, admin, ed.Edit.ID, true, "fine")
		require.NoError(t, err)
	}
	_, err = f.eng.Erase(ctx, admin, secret, "erasure request")
	require.NoError(t, err)
	_, err = f.eng.DrainOutbox(ctx, 100)
	require.NoError(t, err)

	t.Run("Get", func(t *testing.T) {
		for _, c := range []struct {
			name    string
			id      string
			tt      engine.TimeTravel
			status  graph.Status // "" = not found
			content string
			head    string
		}{
			{"NotWrittenYet", price, engine.TimeTravel{KnownAt: k0}, "", "", ""},
			{"BeforeTheCorrection", price, engine.TimeTravel{KnownAt: k1}, graph.StatusActive, "ten euros", ""},
			{"CorrectionNotWrittenYet", correction, engine.TimeTravel{KnownAt: k1}, "", "", ""},
			{"AfterTheCorrection", price, engine.TimeTravel{KnownAt: k2}, graph.StatusSuperseded, "ten euros", correction},
			{"Now", price, engine.TimeTravel{}, graph.StatusSuperseded, "ten euros", correction},
			{"EditNotApprovedYet", notice, engine.TimeTravel{KnownAt: k2}, graph.StatusActive, "opens at nine", ""},
			{"EditApproved", notice, engine.TimeTravel{}, graph.StatusActive, "opens at ten", ""},
			{"ErasureIsNeverUndone", secret, engine.TimeTravel{KnownAt: k1}, "", "", ""},
			{"ValidBeforeItsEnd", window, engine.TimeTravel{AsOf: windowEnd.Add(-time.Second)}, graph.StatusActive, "sale", ""},
			{"ValidToIsExclusive", window, engine.TimeTravel{AsOf: windowEnd}, "", "", ""},
			{"ValidAndKnown", window, engine.TimeTravel{AsOf: windowEnd.Add(-time.Second), KnownAt: k1}, graph.StatusActive, "sale", ""},
		} {
			t.Run(c.name, func(t *testing.T) {
				v, err := f.eng.GetWith(ctx, admin, c.id, engine.GetOptions{TimeTravel: c.tt})
				if c.status == "" {
					assert.ErrorIs(t, err, graph.ErrNotFound)
					return
				}
				require.NoError(t, err)
				assert.Equal(t, c.status, v.Memory.Status)
				assert.Contains(t, v.Content, c.content)
				assert.Equal(t, c.head, v.HeadID)
			})
		}
	})

	t.Run("Search", func(t *testing.T) {
		for _, c := range []struct {
			name     string
			req      engine.SearchRequest
			want     []string // among the results
			absent   []string // not among them
			contents []string // held by the results' content, together
		}{
			{"BeforeTheCorrection", engine.SearchRequest{Query: "zorblat gadget euros", Mode: policy.ModeKeyword,
				TimeTravel: engine.TimeTravel{KnownAt: k1}}, []string{price}, []string{correction}, []string{"ten euros"}},
			{"AfterTheCorrection", engine.SearchRequest{Query: "zorblat gadget euros", Mode: policy.ModeKeyword,
				TimeTravel: engine.TimeTravel{KnownAt: k2}}, []string{correction}, []string{price}, []string{"twelve euros"}},
			{"SupersededCurrentThen", engine.SearchRequest{Query: "zorblat gadget euros", Mode: policy.ModeHybrid,
				IncludeSuperseded: true, TimeTravel: engine.TimeTravel{KnownAt: k1}}, []string{price}, []string{correction}, []string{"ten euros"}},
			{"EditNotApprovedYet", engine.SearchRequest{Query: "zorblat shop opens", Mode: policy.ModeKeyword,
				TimeTravel: engine.TimeTravel{KnownAt: k2}}, []string{notice}, nil, []string{"opens at nine"}},
			{"EditApprovedNow", engine.SearchRequest{Query: "zorblat shop opens", Mode: policy.ModeKeyword},
				[]string{notice}, nil, []string{"opens at ten"}},
			{"ErasureIsNeverUndone", engine.SearchRequest{Query: "zorblat vault code quokka", Mode: policy.ModeGraph,
				TimeTravel: engine.TimeTravel{KnownAt: k1}}, nil, []string{secret}, nil},
			{"ValidBeforeItsEnd", engine.SearchRequest{Query: "zorblat sale week", Mode: policy.ModeKeyword,
				TimeTravel: engine.TimeTravel{AsOf: windowEnd.Add(-time.Second)}}, []string{window}, nil, nil},
			{"ValidToIsExclusive", engine.SearchRequest{Query: "zorblat sale week", Mode: policy.ModeKeyword,
				TimeTravel: engine.TimeTravel{AsOf: windowEnd}}, nil, []string{window}, nil},
		} {
			t.Run(c.name, func(t *testing.T) {
				resp, err := f.eng.Search(ctx, admin, c.req)
				require.NoError(t, err)
				var ids []string
				var text string
				for _, r := range resp.Results {
					ids = append(ids, r.Memory.ID)
					text += r.Content + "\n"
					assert.Equal(t, graph.StatusActive, r.Memory.Status, "the status as known then")
				}
				for _, id := range c.want {
					assert.Contains(t, ids, id)
				}
				for _, id := range c.absent {
					assert.NotContains(t, ids, id)
				}
				for _, s := range c.contents {
					assert.Contains(t, text, s)
				}
				assert.NotContains(t, text, "quokka", "erased content")
			})
		}
	})

	t.Run("Vectors", func(t *testing.T) {
		for _, c := range []struct {
			name    string
			mode    string
			tt      engine.TimeTravel
			warned  bool
			errWhat string // the field of a refusal
		}{
			{"HybridNowRunsVectors", policy.ModeHybrid, engine.TimeTravel{}, false, ""},
			{"HybridAsOfRunsVectors", policy.ModeHybrid, engine.TimeTravel{AsOf: k2}, false, ""},
			{"HybridKnownAtSkipsVectors", policy.ModeHybrid, engine.TimeTravel{KnownAt: k1}, true, ""},
			{"VectorModeKnownAtRefused", policy.ModeVector, engine.TimeTravel{KnownAt: k1}, false, "known_at"},
			{"FutureKnownAtRefused", policy.ModeKeyword, engine.TimeTravel{KnownAt: time.Now().Add(time.Hour)}, false, "known_at"},
		} {
			t.Run(c.name, func(t *testing.T) {
				resp, err := f.eng.Search(ctx, admin, engine.SearchRequest{Query: "zorblat gadget euros", Mode: c.mode, TimeTravel: c.tt})
				if c.errWhat != "" {
					var fe *graph.FieldError
					require.True(t, errors.As(err, &fe), "%v", err)
					assert.Equal(t, c.errWhat, fe.Field)
					return
				}
				require.NoError(t, err)
				if c.warned {
					assert.Equal(t, []string{engine.WarnKnownAtVectors}, resp.Warnings)
				} else {
					assert.Empty(t, resp.Warnings)
				}
				vec := false
				for _, r := range resp.Results {
					_, ok := r.Signals["vector"]
					vec = vec || ok
				}
				assert.Equal(t, !c.warned, vec, "the vector signal ran")
			})
		}
	})

	t.Run("ReadContext", func(t *testing.T) {
		for _, c := range []struct {
			name    string
			tt      engine.TimeTravel
			want    string
			element string
		}{
			{"BeforeTheCorrection", engine.TimeTravel{KnownAt: k1}, "ten euros", price},
			{"AfterTheCorrection", engine.TimeTravel{KnownAt: k2}, "twelve euros", correction},
		} {
			t.Run(c.name, func(t *testing.T) {
				resp, err := f.eng.ReadContext(ctx, admin, engine.ContextRequest{Query: "zorblat gadget euros", TimeTravel: c.tt})
				require.NoError(t, err)
				require.NotEmpty(t, resp.Items)
				assert.Equal(t, c.element, resp.Items[0].ElementID)
				assert.Contains(t, resp.Items[0].Content, c.want)
				el, err := f.eng.ReadContext(ctx, admin, engine.ContextRequest{ElementID: price, TimeTravel: c.tt})
				require.NoError(t, err)
				require.Len(t, el.Items, 1)
				if c.tt.KnownAt.Equal(k1) {
					assert.Empty(t, el.Items[0].Status, "price was current then")
					assert.Empty(t, el.Items[0].HeadID)
				} else {
					assert.Equal(t, graph.StatusSuperseded, el.Items[0].Status)
					assert.Equal(t, correction, el.Items[0].HeadID)
				}
			})
		}
	})
}
