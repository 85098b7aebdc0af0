package storetest

import (
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mnemo-dev/mnemo/graph"
)

// testInvalidInput feeds bad input to the write methods: each must return an
// error wrapping graph.ErrInvalid, never panic, and leave nothing behind.
func testInvalidInput(t *testing.T, x *suite) {
	s := newScope(t)
	f := in(s)
	good := func() graph.MemoryInput { return memIn(s, "marker title", "marker content", "marker-entity") }
	for _, c := range []struct {
		name string
		edit func(in *graph.MemoryInput)
	}{
		{"MissingTenant", func(in *graph.MemoryInput) { in.Memory.Scope.TenantID = "" }},
		{"MissingType", func(in *graph.MemoryInput) { in.Memory.Type = "" }},
		{"IDWithSpace", func(in *graph.MemoryInput) { in.Memory.ID = "bad id" }},
		{"IDWithZeroWidthSpace", func(in *graph.MemoryInput) { in.Memory.ID = "bad\u200bid" }},
		{"UserIDWithBidiOverride", func(in *graph.MemoryInput) { in.Memory.UserID = "alice\u202egnp" }},
		{"ChannelWithBOM", func(in *graph.MemoryInput) { in.Memory.Channel = "\ufeffchat" }},
		{"EmptyContent", func(in *graph.MemoryInput) { in.Version.Content = "  " }},
		{"OversizeContent", func(in *graph.MemoryInput) { in.Version.Content = strings.Repeat("a", graph.MaxContentLen+1) }},
		{"InvalidUTF8Title", func(in *graph.MemoryInput) { in.Memory.Title = "bad \xff title" }},
		{"InvalidUTF8Content", func(in *graph.MemoryInput) { in.Version.Content = "bad \xc3\x28 content" }},
		{"NULInContent", func(in *graph.MemoryInput) { in.Version.Content = "nul \x00 content" }},
		{"UnknownStatus", func(in *graph.MemoryInput) { in.Memory.Status = "zombie" }},
		{"UnknownSourceKind", func(in *graph.MemoryInput) { in.Memory.SourceKind = "RUMOUR" }},
		{"UnknownVisibility", func(in *graph.MemoryInput) { in.Memory.Visibility = "world" }},
		{"ImportanceOutOfRange", func(in *graph.MemoryInput) { in.Memory.Importance = 1.5 }},
		{"ValidToBeforeFrom", func(in *graph.MemoryInput) { in.Memory.ValidFrom, in.Memory.ValidTo = base, base.Add(-1) }},
		{"ChunkPastContent", func(in *graph.MemoryInput) {
			in.Version.Chunks = []graph.ChunkInput{{Key: "k", Start: 0, End: len(in.Version.Content) + 1}}
		}},
		{"ChunkNegativeStart", func(in *graph.MemoryInput) { in.Version.Chunks = []graph.ChunkInput{{Key: "k", Start: -1, End: 2}} }},
		{"DuplicateChunkKey", func(in *graph.MemoryInput) {
			in.Version.Chunks = []graph.ChunkInput{{Key: "k", Start: 0, End: 1}, {Key: "k", Start: 1, End: 2}}
		}},
		{"EntityWithoutName", func(in *graph.MemoryInput) {
			in.Version.Entities = append(in.Version.Entities, graph.EntityRef{Type: "x"})
		}},
		{"EmptyTag", func(in *graph.MemoryInput) { in.Memory.Tags = []string{"ok", ""} }},
		{"SupersedesItself", func(in *graph.MemoryInput) { in.Memory.ID = "self"; in.Supersedes = "self" }},
		{"AuditWithoutAction", func(in *graph.MemoryInput) { in.Audit = []graph.AuditEvent{{Scope: in.Memory.Scope}} }},
	} {
		t.Run(c.name, func(t *testing.T) {
			bad := good()
			c.edit(&bad)
			var err error
			require.NotPanics(t, func() { _, err = x.s.CreateMemory(ctx(t), bad) })
			assert.ErrorIs(t, err, graph.ErrInvalid)
			batch := []graph.MemoryInput{good(), bad, good()}
			require.NotPanics(t, func() { _, err = x.s.CreateMemories(ctx(t), batch) })
			assert.ErrorIs(t, err, graph.ErrInvalid, "a batch with one bad item")
			x.assertEmpty(t, s)
		})
	}

	id := x.create(t, good()).Memory.ID
	for _, c := range []struct {
		name string
		call func() error
	}{
		{"AddVersionOversize", func() error {
			_, err := x.s.AddVersion(ctx(t), s, id, graph.VersionInput{Content: strings.Repeat("b", graph.MaxContentLen+1)})
			return err
		}},
		{"AddVersionChunkOutside", func() error {
			_, err := x.s.AddVersion(ctx(t), s, id, graph.VersionInput{Content: "abc", Chunks: []graph.ChunkInput{{Key: "k", Start: 2, End: 9}}})
			return err
		}},
		{"AddVersionMissingTenant", func() error {
			_, err := x.s.AddVersion(ctx(t), graph.Scope{}, id, graph.VersionInput{Content: "abc"})
			return err
		}},
		{"ReadWithoutTenant", func() error { _, err := x.s.ListMemories(ctx(t), graph.Filter{}, graph.Page{}); return err }},
		{"CandidatesWithoutTenant", func() error { _, err := x.s.Candidates(ctx(t), graph.Filter{}, []string{"x"}, 5); return err }},
		{"UnknownStatusFilter", func() error {
			_, err := x.s.ListMemories(ctx(t), graph.Filter{Scope: s, Reader: graph.System, Statuses: []graph.Status{"zombie"}}, graph.Page{})
			return err
		}},
		{"EmptyMemoryIDGet", func() error { _, err := x.s.GetMemory(ctx(t), f, ""); return err }},
		{"GateWithoutPayload", func() error {
			_, err := x.s.CreateGateRequest(ctx(t), graph.GateRequest{Scope: s, RequestedBy: "a"}, graph.AuditEvent{Scope: s, Action: "gate.queue"})
			return err
		}},
		{"AuditWithoutTenant", func() error { return x.s.AppendAudit(ctx(t), graph.AuditEvent{Action: "x"}) }},
		{"TooManyTypesFilter", func() error {
			_, err := x.s.ListMemories(ctx(t), withLists(f, func(l *graph.Filter) { l.Types = values("t", graph.MaxFilterValues+1) }), graph.Page{})
			return err
		}},
		{"TooManyTagsKeyword", func() error {
			_, err := x.s.KeywordSearch(ctx(t), withLists(f, func(l *graph.Filter) { l.Tags = values("g", graph.MaxFilterValues+1) }), "marker", 5)
			return err
		}},
		{"TooManyEntityTypesCandidates", func() error {
			_, err := x.s.Candidates(ctx(t), withLists(f, func(l *graph.Filter) { l.EntityTypes = values("e", graph.MaxFilterValues+1) }), []string{"x"}, 5)
			return err
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var err error
			require.NotPanics(t, func() { err = c.call() })
			assert.ErrorIs(t, err, graph.ErrInvalid)
		})
	}
	t.Run("FullFilterListsWork", func(t *testing.T) {
		full := withLists(f, func(l *graph.Filter) {
			l.Types, l.Tags, l.EntityTypes = values("t", graph.MaxFilterValues), values("g", graph.MaxFilterValues),
				values("e", graph.MaxFilterValues)
		})
		l, err := x.s.ListMemories(ctx(t), full, graph.Page{})
		require.NoError(t, err)
		assert.Empty(t, l.Memories)
		_, err = x.s.KeywordSearch(ctx(t), full, "marker", 5)
		require.NoError(t, err)
		_, err = x.s.Candidates(ctx(t), full, values("marker-entity", graph.MaxFilterValues), 5)
		require.NoError(t, err)
	})
	t.Run("NothingWrittenByRefusedCalls", func(t *testing.T) {
		vs, err := x.s.ListVersions(ctx(t), f, id)
		require.NoError(t, err)
		assert.Len(t, vs, 1)
		gs, _, err := x.s.ListGateRequests(ctx(t), f, "", graph.Page{})
		require.NoError(t, err)
		assert.Empty(t, gs)
		evs, _, err := x.s.ListAudit(ctx(t), f, graph.AuditQuery{}, graph.Page{})
		require.NoError(t, err)
		assert.Empty(t, evs)
	})
	t.Run("DuplicateID", func(t *testing.T) {
		dup := good()
		dup.Memory.ID = id
		_, err := x.s.CreateMemory(ctx(t), dup)
		assert.ErrorIs(t, err, graph.ErrConflict)
		assert.Len(t, x.listAll(t, f, 10), 1)
	})
	t.Run("ReadWithoutReader", func(t *testing.T) {
		// Every read names the user it is for: a filter with a scope but
		// no reader is refused, not read as "anyone".
		nobody := graph.Filter{Scope: s}
		for _, c := range x.readCalls(id) {
			t.Run(c.name, func(t *testing.T) {
				var err error
				require.NotPanics(t, func() { err = c.call(ctx(t), nobody) })
				require.ErrorIs(t, err, graph.ErrInvalid)
				var fe *graph.FieldError
				require.ErrorAs(t, err, &fe)
				assert.Equal(t, "reader", fe.Field)
			})
		}
	})
}

// assertEmpty checks that nothing of the marker memory reached the store.
func (x *suite) assertEmpty(t *testing.T, s graph.Scope) {
	t.Helper()
	all := in(s)
	all.Statuses = []graph.Status{graph.StatusActive, graph.StatusSuperseded, graph.StatusArchived, graph.StatusRetracted}
	assert.Empty(t, x.listAll(t, all, 100), "no memory written")
	cs, err := x.s.Candidates(ctx(t), all, []string{"marker-entity"}, 10)
	require.NoError(t, err)
	assert.Empty(t, cs, "no MENTIONS written")
	ks, err := x.s.KeywordSearch(ctx(t), all, "marker", 10)
	require.NoError(t, err)
	assert.Empty(t, ks, "nothing indexed")
	evs, _, err := x.s.ListAudit(ctx(t), all, graph.AuditQuery{}, graph.Page{})
	require.NoError(t, err)
	assert.Empty(t, evs, "no audit written")
}

// values returns n distinct values prefix0, prefix1, ...
func values(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = prefix + strconv.Itoa(i)
	}
	return out
}

// withLists returns f with edit applied to a copy.
func withLists(f graph.Filter, edit func(*graph.Filter)) graph.Filter {
	edit(&f)
	return f
}
