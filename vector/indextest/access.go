package indextest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mnemo-dev/mnemo/vector"
)

// accessRule checks the user half of the access rule on the users fixture
// drawn in the package comment, through Search, Count, Scan and Score, with
// and without AllUsers, and that narrowing to a user widens nothing.
func (s suite) accessRule(t *testing.T) {
	ctx := context.Background()
	idx := s.open(t, Dim)
	r := rand.New(rand.NewPCG(21, 21))
	fixture := []struct{ id, owner, vis string }{
		{"u1-user", "u1", "user"}, {"u1-sess", "u1", "session"}, {"u1-proj", "u1", "project"},
		{"u2-user", "u2", "user"}, {"u2-glob", "u2", "global"}, {"nobody", "", "user"},
	}
	var every []string
	for _, fx := range fixture {
		p := point(fx.id, "t", randVec(r, Dim))
		p.Payload.OrgID, p.Payload.RepoID = "o1", "r1"
		p.Payload.UserID, p.Payload.Visibility = fx.owner, fx.vis
		s.upsert(t, idx, p)
		every = append(every, fx.id)
	}
	reader := func(user string, edit func(*vector.Filter)) vector.Filter {
		f := vector.Filter{TenantID: "t", OrgID: "o1", RepoID: "r1", ReaderUserID: user}
		if edit != nil {
			edit(&f)
		}
		return f
	}
	tests := []struct {
		name string
		f    vector.Filter
		want []string
	}{
		{"u1", reader("u1", nil), []string{"nobody", "u1-proj", "u1-sess", "u1-user", "u2-glob"}},
		{"u2", reader("u2", nil), []string{"nobody", "u1-proj", "u2-glob", "u2-user"}},
		{"a user owning nothing", reader("u3", nil), []string{"nobody", "u1-proj", "u2-glob"}},
		{"all users", reader("u3", func(f *vector.Filter) { f.AllUsers = true }), sorted(every)},
		{"all users without a user id", reader("", func(f *vector.Filter) { f.AllUsers = true }), sorted(every)},
		{"subscopes do not widen users", reader("u3", func(f *vector.Filter) { f.Subscopes = true }), []string{"nobody", "u1-proj", "u2-glob"}},
		{"u2 narrowing to u1 sees only u1's readable points", reader("u2", func(f *vector.Filter) { f.UserID = "u1" }), []string{"u1-proj"}},
		{"u1 narrowing to itself", reader("u1", func(f *vector.Filter) { f.UserID = "u1" }), []string{"u1-proj", "u1-sess", "u1-user"}},
		{"another org sees none of it", reader("u1", func(f *vector.Filter) { f.OrgID, f.RepoID = "o2", "" }), []string{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, visible(t, idx, tc.f))
			hits, err := idx.Score(ctx, randVec(r, Dim), tc.f, every)
			require.NoError(t, err)
			assert.Equal(t, tc.want, sorted(ids(hits)), "Score")
		})
	}
}

// privateDoNotCrowdOut puts another user's private points nearest to the
// query: they must not come back, and must not push the reader's own
// results out of the top k (the filter applies inside the search, not to
// its results).
func (s suite) privateDoNotCrowdOut(t *testing.T) {
	ctx := context.Background()
	idx := s.open(t, Dim)
	r := rand.New(rand.NewPCG(22, 22))
	q := randVec(r, Dim)
	var pts []vector.Point
	for i := range 60 {
		v := make([]float32, Dim)
		for j := range v {
			v[j] = q[j] + 0.01*float32(r.NormFloat64())
		}
		p := point(fmt.Sprintf("near-%02d", i), "t", v)
		p.Payload.UserID, p.Payload.Visibility = "u2", "user"
		pts = append(pts, p)
	}
	for i := range 30 {
		p := point(fmt.Sprintf("mine-%02d", i), "t", randVec(r, Dim))
		p.Payload.UserID, p.Payload.Visibility = []string{"u1", "u2"}[i%2], []string{"user", "project"}[i%2]
		pts = append(pts, p)
	}
	s.upsert(t, idx, pts...)
	f := vector.Filter{TenantID: "t", ReaderUserID: "u1"}
	for _, k := range []int{1, 10, 25} {
		got, err := idx.Search(ctx, q, f, k)
		require.NoError(t, err)
		require.Len(t, got, k, "k readable points exist; the nearer private ones must not take their places")
		s.assertSameRanking(t, exactTop(pts, q, f, k), got)
	}
	all := make([]string, len(pts))
	for i, p := range pts {
		all[i] = p.ID
	}
	got, err := idx.Score(ctx, q, f, all)
	require.NoError(t, err)
	s.assertSameRanking(t, exactTop(pts, q, f, len(pts)), got)
	assert.Len(t, got, 30)
	// The owner finds them first.
	got, err = idx.Search(ctx, q, vector.Filter{TenantID: "t", ReaderUserID: "u2"}, 5)
	require.NoError(t, err)
	for _, h := range got {
		assert.Equal(t, "u2", h.Payload.UserID)
		assert.Equal(t, "user", h.Payload.Visibility)
	}
}

// narrowing checks each narrowing field of a filter (user, tags,
// visibility, subject, project, session) alone and combined.
func (s suite) narrowing(t *testing.T) {
	ctx := context.Background()
	idx := s.open(t, Dim)
	r := rand.New(rand.NewPCG(23, 23))
	base := vector.Payload{TenantID: "t", Type: "note", CreatedAt: t0, UserID: "u1", Visibility: "project",
		Tags: []string{"db"}, SubjectType: "team", SubjectID: "platform", ProjectID: "p1", SessionID: "s1"}
	fixture := []struct {
		id   string
		edit func(*vector.Payload)
	}{
		{"base", nil},
		{"tags2", func(p *vector.Payload) { p.Tags = []string{"db", "ops"} }},
		{"notags", func(p *vector.Payload) { p.Tags = nil }},
		{"u2", func(p *vector.Payload) { p.UserID = "u2" }},
		{"global", func(p *vector.Payload) { p.Visibility = "global" }},
		{"subj", func(p *vector.Payload) { p.SubjectType, p.SubjectID = "person", "ann" }},
		{"proj2", func(p *vector.Payload) { p.ProjectID = "p2" }},
		{"sess2", func(p *vector.Payload) { p.SessionID = "s2" }},
	}
	var pts []vector.Point
	for _, fx := range fixture {
		p := point(fx.id, "t", randVec(r, Dim))
		p.Payload = base
		p.Payload.VersionID = fx.id + "-v1"
		if fx.edit != nil {
			fx.edit(&p.Payload)
		}
		pts = append(pts, p)
	}
	s.upsert(t, idx, pts...)

	everyone := []string{"base", "global", "notags", "proj2", "sess2", "subj", "tags2", "u2"}
	tests := []struct {
		name string
		f    vector.Filter
		want []string
	}{
		{"nothing", vector.Filter{}, everyone},
		{"user u1", vector.Filter{UserID: "u1"}, []string{"base", "global", "notags", "proj2", "sess2", "subj", "tags2"}},
		{"user u2", vector.Filter{UserID: "u2"}, []string{"u2"}},
		{"tag db", vector.Filter{Tags: []string{"db"}}, []string{"base", "global", "proj2", "sess2", "subj", "tags2", "u2"}},
		{"tags db and ops", vector.Filter{Tags: []string{"db", "ops"}}, []string{"tags2"}},
		{"tags in another order", vector.Filter{Tags: []string{"ops", "db"}}, []string{"tags2"}},
		{"unknown tag", vector.Filter{Tags: []string{"k8s"}}, []string{}},
		{"visibility global", vector.Filter{Visibility: []string{"global"}}, []string{"global"}},
		{"visibility project or global", vector.Filter{Visibility: []string{"project", "global"}}, everyone},
		{"visibility user", vector.Filter{Visibility: []string{"user"}}, []string{}},
		{"subject type", vector.Filter{SubjectType: "person"}, []string{"subj"}},
		{"subject id", vector.Filter{SubjectID: "ann"}, []string{"subj"}},
		{"subject type and id", vector.Filter{SubjectType: "team", SubjectID: "platform"}, []string{"base", "global", "notags", "proj2", "sess2", "tags2", "u2"}},
		{"subject type and id that do not meet", vector.Filter{SubjectType: "team", SubjectID: "ann"}, []string{}},
		{"project", vector.Filter{ProjectID: "p2"}, []string{"proj2"}},
		{"session", vector.Filter{SessionID: "s2"}, []string{"sess2"}},
		{"combined", vector.Filter{UserID: "u1", Tags: []string{"db"}, ProjectID: "p1", SessionID: "s1", Visibility: []string{"project"}},
			[]string{"base", "subj", "tags2"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.f.TenantID, tc.f.ReaderUserID = "t", "u3"
			var byMatch []string
			for _, p := range pts {
				if tc.f.Match(p.Payload) {
					byMatch = append(byMatch, p.ID)
				}
			}
			require.Equal(t, tc.want, sorted(byMatch), "the table agrees with Filter.Match")
			assert.Equal(t, tc.want, visible(t, idx, tc.f))
			hits, err := idx.Score(ctx, randVec(r, Dim), tc.f, everyone)
			require.NoError(t, err)
			assert.Equal(t, tc.want, sorted(ids(hits)), "Score")
		})
	}
}

// closed checks that every call on a closed index fails with ErrClosed,
// and that closing twice is harmless.
func (s suite) closed(t *testing.T) {
	ctx := context.Background()
	idx := s.open(t, Dim)
	r := rand.New(rand.NewPCG(24, 24))
	p := point("a", "t", randVec(r, Dim))
	s.upsert(t, idx, p)
	require.NoError(t, idx.Close())
	assert.NoError(t, idx.Close(), "closing twice")

	f := all("t")
	_, err := idx.Search(ctx, p.Vector, f, 1)
	assert.ErrorIs(t, err, vector.ErrClosed, "Search")
	_, err = idx.Score(ctx, p.Vector, f, []string{"a"})
	assert.ErrorIs(t, err, vector.ErrClosed, "Score")
	_, err = idx.Count(ctx, f)
	assert.ErrorIs(t, err, vector.ErrClosed, "Count")
	assert.ErrorIs(t, idx.Scan(ctx, f, func(vector.Payload) error { return nil }), vector.ErrClosed, "Scan")
	assert.ErrorIs(t, idx.Upsert(ctx, []vector.Point{point("b", "t", randVec(r, Dim))}), vector.ErrClosed, "Upsert")
	assert.ErrorIs(t, idx.Delete(ctx, []string{"a"}), vector.ErrClosed, "Delete")
}

// cancellation checks that a cancelled context stops every call with
// ctx.Err(), writes nothing, and stops a Scan between two payloads.
func (s suite) cancellation(t *testing.T) {
	idx := s.open(t, Dim)
	r := rand.New(rand.NewPCG(25, 25))
	var pts []vector.Point
	for i := range 10 {
		pts = append(pts, point(fmt.Sprintf("p%d", i), "t", randVec(r, Dim)))
	}
	s.upsert(t, idx, pts...)
	f := all("t")

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := idx.Search(ctx, pts[0].Vector, f, 1)
	assert.ErrorIs(t, err, context.Canceled, "Search")
	_, err = idx.Score(ctx, pts[0].Vector, f, []string{"p0"})
	assert.ErrorIs(t, err, context.Canceled, "Score")
	_, err = idx.Count(ctx, f)
	assert.ErrorIs(t, err, context.Canceled, "Count")
	assert.ErrorIs(t, idx.Scan(ctx, f, func(vector.Payload) error { return nil }), context.Canceled, "Scan")
	assert.ErrorIs(t, idx.Upsert(ctx, []vector.Point{point("late", "t", randVec(r, Dim))}), context.Canceled, "Upsert")
	assert.ErrorIs(t, idx.Delete(ctx, []string{"p0"}), context.Canceled, "Delete")
	assert.Len(t, visible(t, idx, f), 10, "a cancelled call changes nothing")

	// Cancelled while scanning: Scan returns ctx.Err() before the next
	// payload reaches fn.
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	calls := 0
	err = idx.Scan(ctx, f, func(vector.Payload) error {
		calls++
		cancel()
		return nil
	})
	assert.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, 1, calls)

	// A deadline that passed is ctx.Err() too.
	ctx, cancel = context.WithTimeout(context.Background(), -1)
	defer cancel()
	_, err = idx.Search(ctx, pts[0].Vector, f, 1)
	assert.True(t, errors.Is(err, context.DeadlineExceeded), "Search past its deadline: %v", err)
}
