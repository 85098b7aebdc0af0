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
	p := vector.Payload{TenantID: "t", OrgID: "o", RepoID: "r", Type: "note", CreatedAt: at}
	tests := []struct {
		name string
		f    vector.Filter
		p    vector.Payload
		want bool
	}{
		{"same tenant", vector.Filter{TenantID: "t"}, p, true},
		{"other tenant", vector.Filter{TenantID: "u"}, p, false},
		{"no tenant never matches", vector.Filter{}, p, false},
		{"org equal", vector.Filter{TenantID: "t", OrgID: "o"}, p, true},
		{"org differs", vector.Filter{TenantID: "t", OrgID: "x"}, p, false},
		{"org-wide point seen from a repo", vector.Filter{TenantID: "t", OrgID: "o", RepoID: "r"}, vector.Payload{TenantID: "t", OrgID: "o"}, true},
		{"tenant-wide point seen from an org", vector.Filter{TenantID: "t", OrgID: "x", RepoID: "y"}, vector.Payload{TenantID: "t"}, true},
		{"repo differs", vector.Filter{TenantID: "t", OrgID: "o", RepoID: "x"}, p, false},
		{"type listed", vector.Filter{TenantID: "t", Types: []string{"task", "note"}}, p, true},
		{"type not listed", vector.Filter{TenantID: "t", Types: []string{"task"}}, p, false},
		{"after inclusive", vector.Filter{TenantID: "t", CreatedAfter: at}, p, true},
		{"before exclusive", vector.Filter{TenantID: "t", CreatedBefore: at}, p, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, tc.f.Match(tc.p))
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
