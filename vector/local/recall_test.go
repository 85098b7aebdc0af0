package local_test

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mnemo-dev/mnemo/vector"
	"github.com/mnemo-dev/mnemo/vector/indextest"
	"github.com/mnemo-dev/mnemo/vector/local"
)

// TestRecall checks recall@10 >= 0.95 against exact search at 20k points of
// 384 dimensions, with the graph in use (the default threshold is below
// 20k), for the tenant alone and under selective filters; and that no hit
// ever falls outside the filter.
func TestRecall(t *testing.T) {
	all := func(tenant string) vector.Filter {
		return vector.Filter{TenantID: tenant, AllUsers: true, Subscopes: true}
	}
	if testing.Short() {
		if os.Getenv("CI") != "" {
			t.Fatal("TestRecall must run in CI: drop -short")
		}
		t.Skip("builds a 20k-point graph (-short)")
	}
	d := indextest.NewDataset(20000, 100, 384, 200, 1)
	idx, err := local.Open(t.TempDir(), local.Options{Dimensions: 384})
	require.NoError(t, err)
	defer idx.Close()
	d.Load(t, idx)

	require.True(t, idx.Stats().Graph, "20k points must be past the graph threshold")

	tests := []struct {
		name  string
		f     vector.Filter
		graph bool // whether the graph serves this filter
	}{
		{"tenant (90% of points)", all("acme"), true},
		{"tenant and type note (60%), filter inside the walk", vector.Filter{TenantID: "acme", Types: []string{"note"}, AllUsers: true, Subscopes: true}, true},
		{"tenant and type decision (30%: a walk wide enough costs more than the scan)", vector.Filter{TenantID: "acme", Types: []string{"decision"}, AllUsers: true, Subscopes: true}, false},
		{"tenant and org (org-wide points inherited: 90%)", vector.Filter{TenantID: "acme", OrgID: "eng", AllUsers: true, Subscopes: true}, true},
		{"a user in org eng: the private points of two other users hidden inside the walk (78%)", vector.Filter{TenantID: "acme", OrgID: "eng", ReaderUserID: "u0"}, true},
		{"a user at the tenant: tenant-wide points only, others' private ones hidden (39%: the scan is cheaper)", vector.Filter{TenantID: "acme", ReaderUserID: "u0"}, false},
		{"second tenant (10%, under the threshold: exact)", all("other"), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := idx.Stats()
			r := d.Recall(t, idx, tc.f, 10)
			after := idx.Stats()
			t.Logf("recall@10 = %.4f, stats %+v", r, after)
			assert.GreaterOrEqual(t, r, 0.95)
			assert.Zero(t, after.Fallbacks-before.Fallbacks, "no fallback expected")
			if tc.graph {
				assert.Equal(t, int64(len(d.Queries)), after.GraphSearches-before.GraphSearches)
			} else {
				assert.Equal(t, int64(len(d.Queries)), after.ExactSearches-before.ExactSearches)
			}
		})
	}
}
