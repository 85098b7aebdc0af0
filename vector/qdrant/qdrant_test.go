package qdrant

import (
	"context"
	"fmt"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/testcontainers/testcontainers-go"
	"github.com/testcontainers/testcontainers-go/wait"

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
			assert.NoError(t, idx.DropCollection(context.Background()))
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
		{"tenant only", vector.Filter{TenantID: "t"}, 1},
		{"org and repo", vector.Filter{TenantID: "t", OrgID: "o", RepoID: "r"}, 3},
		{"types and window", vector.Filter{TenantID: "t", Types: []string{"note"}, CreatedAfter: at, CreatedBefore: at.Add(time.Hour)}, 3},
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
	p := vector.Payload{VersionID: "v", TenantID: "t", OrgID: "o", Type: "note", CreatedAt: time.Date(2025, 1, 2, 3, 4, 5, 123456789, time.UTC)}
	m := toPayload("id", p)
	_, hasRepo := m[keyRepoID]
	assert.False(t, hasRepo, "empty values are not stored, so is_empty matches them")
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
