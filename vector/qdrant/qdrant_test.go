package qdrant

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/testcontainers/testcontainers-go"
	"github.com/testcontainers/testcontainers-go/wait"

	qd "github.com/qdrant/go-client/qdrant"

	"github.com/mnemo-dev/mnemo/vector"
	"github.com/mnemo-dev/mnemo/vector/indextest"
)

// qdrantURL finds a Qdrant to test against: QDRANT_URL when set; else the
// official qdrant/qdrant image through testcontainers where a Docker engine
// answers; else the test skips, or fails when MNEMO_REQUIRE_QDRANT=1.
func qdrantURL(t *testing.T) string {
	t.Helper()
	if u := os.Getenv("QDRANT_URL"); u != "" {
		return u
	}
	unavailable := func(format string, args ...any) {
		t.Helper()
		msg := fmt.Sprintf(format, args...)
		if os.Getenv("MNEMO_REQUIRE_QDRANT") == "1" {
			t.Fatalf("MNEMO_REQUIRE_QDRANT=1 but no Qdrant: %s", msg)
		}
		t.Skipf("no Qdrant (set QDRANT_URL=http://host:6334, or run a Docker engine): %s", msg)
	}
	if err := dockerHealthy(); err != nil {
		unavailable("docker: %v", err)
	}
	ctx := context.Background()
	c, err := testcontainers.Run(ctx, "qdrant/qdrant:latest",
		testcontainers.WithExposedPorts("6334/tcp"),
		testcontainers.WithWaitStrategy(wait.ForListeningPort("6334/tcp").WithStartupTimeout(2*time.Minute)),
	)
	testcontainers.CleanupContainer(t, c)
	if err != nil {
		unavailable("start qdrant/qdrant: %v", err)
	}
	ep, err := c.PortEndpoint(ctx, "6334/tcp", "http")
	require.NoError(t, err)
	return ep
}

// dockerHealthy reports whether a Docker engine answers; testcontainers
// panics when none is configured, so that is caught too.
func dockerHealthy() (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%v", r)
		}
	}()
	p, err := testcontainers.ProviderDefault.GetProvider()
	if err != nil {
		return err
	}
	defer p.Close()
	return p.Health(context.Background())
}

func TestConformance(t *testing.T) {
	url := qdrantURL(t)
	var n atomic.Int64
	// Each test gets its own collection, dropped afterwards.
	open := func(t *testing.T, dim int) vector.Index {
		t.Helper()
		name := fmt.Sprintf("mnemo_test_%d_%d", time.Now().UnixNano(), n.Add(1))
		idx, err := Open(context.Background(), Config{URL: url, Collection: name, Dimensions: dim})
		require.NoError(t, err)
		t.Cleanup(func() {
			ctx := context.Background()
			err := idx.DropCollection(ctx)
			if errors.Is(err, vector.ErrClosed) { // the test closed it
				again, oerr := Open(ctx, idx.cfg)
				require.NoError(t, oerr)
				err = again.DropCollection(ctx)
				assert.NoError(t, again.Close())
			}
			assert.NoError(t, err)
			assert.NoError(t, idx.Close())
		})
		return idx
	}
	indextest.Run(t, open, indextest.Config{
		// Closing a client does not touch the server: reopening must
		// find the same collection and data.
		Reopen: func(t *testing.T, idx vector.Index) vector.Index {
			t.Helper()
			q := idx.(*Index)
			again, err := Open(context.Background(), q.cfg)
			require.NoError(t, err)
			t.Cleanup(func() { _ = again.Close() })
			return again
		},
	})
}

func TestPointID(t *testing.T) {
	a, b := PointID("mem-1"), PointID("mem-2")
	assert.Equal(t, a, PointID("mem-1"), "deterministic")
	assert.NotEqual(t, a, b)
	assert.Len(t, a, 36)
	assert.Equal(t, byte('5'), a[14], "UUID version 5")
}

func TestFilterTranslation(t *testing.T) {
	at := time.Date(2025, 1, 2, 3, 4, 5, 6000, time.UTC)
	tests := []struct {
		name string
		f    vector.Filter
		want int // top-level must conditions
	}{
		{"maintenance", vector.Filter{TenantID: "t", AllUsers: true, Subscopes: true}, 2},
		{"a reader at the tenant", vector.Filter{TenantID: "t", ReaderUserID: "u"}, 5},
		{"org and repo with subscopes", vector.Filter{TenantID: "t", OrgID: "o", RepoID: "r", AllUsers: true, Subscopes: true}, 4},
		{"types and window", vector.Filter{TenantID: "t", Types: []string{"note"}, CreatedAfter: at, CreatedBefore: at.Add(time.Hour), AllUsers: true, Subscopes: true}, 4},
		{"two tags and a user", vector.Filter{TenantID: "t", Tags: []string{"a", "b"}, UserID: "u", AllUsers: true, Subscopes: true}, 5},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := toFilter(tc.f)
			assert.Len(t, got.GetMust(), tc.want)
			assert.Equal(t, "t", got.GetMust()[0].GetField().GetMatch().GetKeyword())
		})
	}
	assert.Equal(t, at.UnixMicro(), ceilMicros(at))
	assert.Equal(t, at.UnixMicro()+1, ceilMicros(at.Add(time.Nanosecond)))
}

func TestPayloadRoundTrip(t *testing.T) {
	p := vector.Payload{VersionID: "v", TenantID: "t", OrgID: "o", Type: "note", CreatedAt: time.Date(2025, 1, 2, 3, 4, 5, 123456789, time.UTC),
		UserID: "u1", Visibility: "user", Tags: []string{"db", "ops"}, SubjectType: "team", SubjectID: "platform", ProjectID: "p1", SessionID: "s1"}
	m := toPayload("id", p)
	_, hasRepo := m[keyRepoID]
	assert.False(t, hasRepo, "empty values are not stored, so is_empty matches them")
	assert.Equal(t, int64(payloadFormat), m[keyFormat].GetIntegerValue())
	got, err := fromPayload(m)
	require.NoError(t, err)
	p.MemoryID = "id"
	assert.Equal(t, p, got)
	_, err = fromPayload(nil)
	assert.ErrorIs(t, err, errPayload)
}

func TestConfig(t *testing.T) {
	tests := []struct {
		url      string
		host     string
		port     int
		tls, bad bool
	}{
		{url: "http://localhost:6334", host: "localhost", port: 6334},
		{url: "https://q.example.com", host: "q.example.com", port: 6334, tls: true},
		{url: "http://10.0.0.1:7000", host: "10.0.0.1", port: 7000},
		{url: "localhost:6334", bad: true},
		{url: "", bad: true},
	}
	for _, tc := range tests {
		t.Run(tc.url, func(t *testing.T) {
			c, err := clientConfig(Config{URL: tc.url})
			if tc.bad {
				assert.ErrorIs(t, err, vector.ErrInvalid)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.host, c.Host)
			assert.Equal(t, tc.port, c.Port)
			assert.Equal(t, tc.tls, c.UseTLS)
		})
	}
}

// TestFilterAgreesWithMatch evaluates toFilter's conditions the way Qdrant
// documents them (must / should / must_not, match on any element of a list,
// is_empty for a missing key) over every combination of scope, owner and
// visibility, and over random narrowing, and checks they select exactly
// what vector.Filter.Match does; a point without mnemo_format never
// matches. It runs without a server; TestConformance checks the real one.
func TestFilterAgreesWithMatch(t *testing.T) {
	orgs, repos := []string{"", "o1", "o2"}, []string{"", "r1", "r2"}
	users, vis := []string{"", "u1", "u2"}, []string{"", "user", "session", "project", "global"}
	var payloads []vector.Payload
	for _, tenant := range []string{"t", "x"} {
		for _, o := range orgs {
			for _, r := range repos {
				for _, u := range users {
					for _, v := range vis {
						payloads = append(payloads, vector.Payload{MemoryID: "m", TenantID: tenant, OrgID: o, RepoID: r, UserID: u, Visibility: v, Type: "note"})
					}
				}
			}
		}
	}
	var filters []vector.Filter
	for _, o := range orgs {
		for _, r := range repos {
			for _, reader := range []string{"", "u1", "u3"} {
				for _, allUsers := range []bool{false, true} {
					for _, sub := range []bool{false, true} {
						if reader == "" && !allUsers {
							continue // refused by Validate
						}
						filters = append(filters, vector.Filter{TenantID: "t", OrgID: o, RepoID: r, ReaderUserID: reader, AllUsers: allUsers, Subscopes: sub})
					}
				}
			}
		}
	}
	check := func(t *testing.T, f vector.Filter, p vector.Payload) {
		t.Helper()
		m := toPayload("m", p)
		got := evalFilter(t, toFilter(f), m)
		if want := f.Match(p); got != want {
			t.Fatalf("filter %+v, payload %+v: qdrant conditions say %v, Match says %v", f, p, got, want)
		}
		delete(m, keyFormat)
		assert.False(t, evalFilter(t, toFilter(f), m), "a point without mnemo_format never matches")
	}
	for _, f := range filters {
		for _, p := range payloads {
			check(t, f, p)
		}
	}

	// Narrowing, at random over a small vocabulary so that matches happen.
	r := rand.New(rand.NewPCG(1, 2))
	pick := func(xs ...string) string { return xs[r.IntN(len(xs))] }
	tagSets := [][]string{nil, {"a"}, {"b"}, {"a", "b"}, {"b", "c"}}
	for range 20000 {
		p := vector.Payload{MemoryID: "m", TenantID: "t", OrgID: pick("", "o1"), UserID: pick("", "u1", "u2"),
			Visibility: pick("user", "project", "global"), Type: pick("note", "task"), Tags: tagSets[r.IntN(len(tagSets))],
			SubjectType: pick("", "team", "person"), SubjectID: pick("", "s1", "s2"), ProjectID: pick("", "p1", "p2"),
			SessionID: pick("", "x1", "x2"), CreatedAt: time.Unix(int64(r.IntN(10)), 0)}
		f := vector.Filter{TenantID: "t", OrgID: "o1", ReaderUserID: pick("u1", "u2"), AllUsers: r.IntN(3) == 0,
			UserID: pick("", "", "u1", "u2"), Tags: tagSets[r.IntN(len(tagSets))], SubjectType: pick("", "", "team"),
			SubjectID: pick("", "", "s1"), ProjectID: pick("", "", "p1"), SessionID: pick("", "", "x1")}
		if r.IntN(3) == 0 {
			f.Visibility = []string{pick("user", "project"), pick("global", "project")}
		}
		if r.IntN(3) == 0 {
			f.Types = []string{pick("note", "task")}
		}
		if r.IntN(3) == 0 {
			f.CreatedAfter = time.Unix(int64(r.IntN(5)), 0)
		}
		if r.IntN(3) == 0 {
			f.CreatedBefore = time.Unix(int64(5+r.IntN(5)), 0)
		}
		check(t, f, p)
	}
}

// evalFilter is Qdrant's filter semantics for the conditions toFilter
// builds; any other condition fails the test.
func evalFilter(t *testing.T, f *qd.Filter, m map[string]*qd.Value) bool {
	t.Helper()
	for _, c := range f.GetMust() {
		if !evalCondition(t, c, m) {
			return false
		}
	}
	for _, c := range f.GetMustNot() {
		if evalCondition(t, c, m) {
			return false
		}
	}
	if len(f.GetShould()) == 0 {
		return true
	}
	for _, c := range f.GetShould() {
		if evalCondition(t, c, m) {
			return true
		}
	}
	return false
}

func evalCondition(t *testing.T, c *qd.Condition, m map[string]*qd.Value) bool {
	t.Helper()
	values := func(key string) []*qd.Value {
		v := m[key]
		if v == nil {
			return nil
		}
		if l := v.GetListValue(); l != nil {
			return l.GetValues()
		}
		return []*qd.Value{v}
	}
	anyValue := func(key string, ok func(*qd.Value) bool) bool {
		return slices.ContainsFunc(values(key), ok)
	}
	switch {
	case c.GetFilter() != nil:
		return evalFilter(t, c.GetFilter(), m)
	case c.GetIsEmpty() != nil:
		return len(values(c.GetIsEmpty().GetKey())) == 0
	case c.GetField() != nil && c.GetField().GetMatch() != nil:
		key := c.GetField().GetKey()
		switch mv := c.GetField().GetMatch().GetMatchValue().(type) {
		case *qd.Match_Keyword:
			return anyValue(key, func(v *qd.Value) bool { return v.GetStringValue() == mv.Keyword })
		case *qd.Match_Keywords:
			return anyValue(key, func(v *qd.Value) bool { return slices.Contains(mv.Keywords.GetStrings(), v.GetStringValue()) })
		case *qd.Match_Integer:
			return anyValue(key, func(v *qd.Value) bool {
				_, isInt := v.GetKind().(*qd.Value_IntegerValue)
				return isInt && v.GetIntegerValue() == mv.Integer
			})
		}
	case c.GetField() != nil && c.GetField().GetRange() != nil:
		rg := c.GetField().GetRange()
		return anyValue(c.GetField().GetKey(), func(v *qd.Value) bool {
			x := float64(v.GetIntegerValue())
			return (rg.Gte == nil || x >= *rg.Gte) && (rg.Lt == nil || x < *rg.Lt) && rg.Gt == nil && rg.Lte == nil
		})
	}
	t.Fatalf("condition toFilter does not build: %v", c)
	return false
}
