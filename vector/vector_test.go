package vector_test

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/mnemo-dev/mnemo/vector"
)

func TestFilterMatch(t *testing.T) {
	at := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	p := vector.Payload{TenantID: "t", OrgID: "o", RepoID: "r", Type: "note", CreatedAt: at,
		UserID: "u1", Visibility: "project", Tags: []string{"db", "ops"},
		SubjectType: "team", SubjectID: "platform", ProjectID: "p1", SessionID: "s1"}
	// all reads everything of tenant t; u1 and u2 are plain readers in
	// scope t/o/r.
	all := vector.Filter{TenantID: "t", AllUsers: true, Subscopes: true}
	u1 := vector.Filter{TenantID: "t", OrgID: "o", RepoID: "r", ReaderUserID: "u1"}
	u2 := vector.Filter{TenantID: "t", OrgID: "o", RepoID: "r", ReaderUserID: "u2"}
	with := func(f vector.Filter, edit func(*vector.Filter)) vector.Filter { edit(&f); return f }
	pay := func(edit func(*vector.Payload)) vector.Payload { q := p; edit(&q); return q }
	private := pay(func(q *vector.Payload) { q.Visibility = "user" })
	tests := []struct {
		name string
		f    vector.Filter
		p    vector.Payload
		want bool
	}{
		{"same tenant", all, p, true},
		{"other tenant", with(all, func(f *vector.Filter) { f.TenantID = "u" }), p, false},
		{"no tenant never matches", vector.Filter{AllUsers: true}, p, false},

		// Scope without subscopes: own scope and above.
		{"own scope", u1, p, true},
		{"org-wide point seen from a repo", u1, pay(func(q *vector.Payload) { q.RepoID = "" }), true},
		{"tenant-wide point seen from a repo", u1, pay(func(q *vector.Payload) { q.OrgID, q.RepoID = "", "" }), true},
		{"repo point hidden from its org", with(u1, func(f *vector.Filter) { f.RepoID = "" }), p, false},
		{"repo point hidden from the tenant", with(u1, func(f *vector.Filter) { f.OrgID, f.RepoID = "", "" }), p, false},
		{"org point hidden from the tenant", with(u1, func(f *vector.Filter) { f.OrgID, f.RepoID = "", "" }), pay(func(q *vector.Payload) { q.RepoID = "" }), false},
		{"other org", with(u1, func(f *vector.Filter) { f.OrgID = "x" }), p, false},
		{"other repo", with(u1, func(f *vector.Filter) { f.RepoID = "x" }), p, false},
		{"same repo name in another org", with(u1, func(f *vector.Filter) { f.OrgID = "x" }), pay(func(q *vector.Payload) { q.OrgID = "" }), false},

		// Scope with subscopes: empty means any.
		{"subscopes: tenant reads a repo point", with(u1, func(f *vector.Filter) { f.OrgID, f.RepoID, f.Subscopes = "", "", true }), p, true},
		{"subscopes: org reads a repo point", with(u1, func(f *vector.Filter) { f.RepoID, f.Subscopes = "", true }), p, true},
		{"subscopes: still not another org", with(u1, func(f *vector.Filter) { f.OrgID, f.RepoID, f.Subscopes = "x", "", true }), p, false},

		// Users.
		{"own private point", u1, private, true},
		{"another user's private point", u2, private, false},
		{"another user's session point", u2, pay(func(q *vector.Payload) { q.Visibility = "session" }), false},
		{"another user's private point with all users", with(u2, func(f *vector.Filter) { f.AllUsers = true }), private, true},
		{"private point without owner", u2, pay(func(q *vector.Payload) { q.Visibility, q.UserID = "user", "" }), true},
		{"another user's project point", u2, p, true},
		{"another user's global point", u2, pay(func(q *vector.Payload) { q.Visibility = "global" }), true},
		{"all users without a user id", with(u2, func(f *vector.Filter) { f.ReaderUserID, f.AllUsers = "", true }), private, true},

		// Narrowing.
		{"user narrows", with(all, func(f *vector.Filter) { f.UserID = "u1" }), p, true},
		{"user narrows out", with(all, func(f *vector.Filter) { f.UserID = "u2" }), p, false},
		{"narrowing to a user widens nothing", with(u2, func(f *vector.Filter) { f.UserID = "u1" }), private, false},
		{"type listed", with(all, func(f *vector.Filter) { f.Types = []string{"task", "note"} }), p, true},
		{"type not listed", with(all, func(f *vector.Filter) { f.Types = []string{"task"} }), p, false},
		{"every tag present", with(all, func(f *vector.Filter) { f.Tags = []string{"ops", "db"} }), p, true},
		{"one tag missing", with(all, func(f *vector.Filter) { f.Tags = []string{"db", "k8s"} }), p, false},
		{"visibility listed", with(all, func(f *vector.Filter) { f.Visibility = []string{"user", "project"} }), p, true},
		{"visibility not listed", with(all, func(f *vector.Filter) { f.Visibility = []string{"user"} }), p, false},
		{"subject", with(all, func(f *vector.Filter) { f.SubjectType, f.SubjectID = "team", "platform" }), p, true},
		{"subject type differs", with(all, func(f *vector.Filter) { f.SubjectType = "person" }), p, false},
		{"subject id differs", with(all, func(f *vector.Filter) { f.SubjectID = "infra" }), p, false},
		{"project", with(all, func(f *vector.Filter) { f.ProjectID = "p1" }), p, true},
		{"project differs", with(all, func(f *vector.Filter) { f.ProjectID = "p2" }), p, false},
		{"session", with(all, func(f *vector.Filter) { f.SessionID = "s1" }), p, true},
		{"session differs", with(all, func(f *vector.Filter) { f.SessionID = "s2" }), p, false},
		{"after inclusive", with(all, func(f *vector.Filter) { f.CreatedAfter = at }), p, true},
		{"before exclusive", with(all, func(f *vector.Filter) { f.CreatedBefore = at }), p, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, tc.f.Match(tc.p))
		})
	}
}

func TestFilterValidate(t *testing.T) {
	at := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name string
		f    vector.Filter
		ok   bool
	}{
		{"reader", vector.Filter{TenantID: "t", ReaderUserID: "u"}, true},
		{"all users", vector.Filter{TenantID: "t", AllUsers: true}, true},
		{"no reader", vector.Filter{TenantID: "t"}, false},
		{"subscopes is not a reader", vector.Filter{TenantID: "t", Subscopes: true}, false},
		{"no tenant", vector.Filter{ReaderUserID: "u"}, false},
		{"empty window", vector.Filter{TenantID: "t", ReaderUserID: "u", CreatedAfter: at, CreatedBefore: at}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.f.Validate()
			if tc.ok {
				assert.NoError(t, err)
				return
			}
			assert.ErrorIs(t, err, vector.ErrInvalid)
		})
	}
}

func TestCheckVector(t *testing.T) {
	tests := []struct {
		name string
		v    []float32
		want error
	}{
		{"ok", []float32{1, 0, 0}, nil},
		{"short", []float32{1, 0}, vector.ErrDimension},
		{"NaN", []float32{1, float32(math.NaN()), 0}, vector.ErrInvalid},
		{"Inf", []float32{float32(math.Inf(1)), 0, 0}, vector.ErrInvalid},
		{"zero", []float32{0, 0, 0}, vector.ErrInvalid},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := vector.CheckVector(tc.v, 3)
			if tc.want == nil {
				assert.NoError(t, err)
				return
			}
			assert.ErrorIs(t, err, tc.want)
			assert.ErrorIs(t, err, vector.ErrInvalid)
		})
	}
	n := vector.Normalize([]float32{3, 4})
	assert.InDelta(t, 0.6, n[0], 1e-6)
	assert.InDelta(t, 0.8, n[1], 1e-6)
}
