// Package neo4jtest finds or starts a Neo4j for tests and hands each test a
// wiped store.
//
// Where the server comes from, in order:
//  1. NEO4J_URI (with NEO4J_USERNAME / NEO4J_PASSWORD when it needs auth),
//     e.g. the local launcher: testdata/neo4j/neo4j.sh start, then
//     NEO4J_URI=bolt://127.0.0.1:7687;
//  2. the official neo4j:5 image through testcontainers-go, when a Docker
//     engine answers;
//  3. otherwise the test is skipped, unless MNEMO_REQUIRE_NEO4J=1, when it
//     fails.
//
// Neo4j Community has one database, so tests that use this package share
// it: Open wipes it first, and such tests must not run in parallel. Across
// test binaries (go test runs packages in parallel) the first Open takes an
// exclusive lock on a file beside the Neo4j data, held until the process
// exits, so two packages never share the database at once.
package neo4jtest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unicode"

	neo4jdrv "github.com/neo4j/neo4j-go-driver/v5/neo4j"
	"github.com/testcontainers/testcontainers-go"
	"github.com/testcontainers/testcontainers-go/wait"

	"github.com/mnemo-dev/mnemo/graph/neo4j"
)

// Config returns the connection settings of a Neo4j for tests (see the
// package comment), skipping or failing tb when there is none. Its stores
// start no warm-up (WarmUp -1): a test plans the statements it runs, on
// first use, and does not share Neo4j's CPU with a warm-up of the rest
// (graph/neo4j's TestWarm* set WarmUp themselves).
func Config(tb testing.TB) neo4j.Config {
	tb.Helper()
	if uri := os.Getenv("NEO4J_URI"); uri != "" {
		return neo4j.Config{URI: uri, Username: os.Getenv("NEO4J_USERNAME"), Password: os.Getenv("NEO4J_PASSWORD"), WarmUp: -1}
	}
	if err := dockerHealthy(); err != nil {
		unavailable(tb, "NEO4J_URI is not set and no Docker engine answers (%v); "+
			"start one with testdata/neo4j/neo4j.sh start and set NEO4J_URI=bolt://127.0.0.1:7687", err)
	}
	return neo4j.Config{URI: startContainer(tb), WarmUp: -1}
}

// Open opens a store on cfg after wiping the database, and closes it when
// tb ends.
func Open(tb testing.TB, cfg neo4j.Config) *neo4j.Store {
	tb.Helper()
	lockDatabase(tb, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if err := Wipe(ctx, cfg); err != nil {
		tb.Fatalf("neo4jtest: wipe: %v", err)
	}
	s, err := neo4j.Open(ctx, cfg)
	if err != nil {
		tb.Fatalf("neo4jtest: open: %v", err)
	}
	tb.Cleanup(func() { _ = s.Close() })
	return s
}

// wipeCypher deletes every node and relationship, in batches so a large
// graph does not need one huge transaction. The schema stays.
const wipeCypher = `MATCH (n) CALL { WITH n DETACH DELETE n } IN TRANSACTIONS OF 1000 ROWS`

// Wipe deletes all data in the database cfg names.
func Wipe(ctx context.Context, cfg neo4j.Config) error {
	d, err := newDriver(cfg)
	if err != nil {
		return err
	}
	defer d.Close(ctx)
	sess := d.NewSession(ctx, neo4jdrv.SessionConfig{DatabaseName: cfg.Database})
	defer sess.Close(ctx)
	res, err := sess.Run(ctx, wipeCypher, nil) // CALL IN TRANSACTIONS needs an auto-commit transaction
	if err != nil {
		return err
	}
	_, err = res.Consume(ctx)
	return err
}

// newDriver is a driver on the server cfg names, with its credentials.
func newDriver(cfg neo4j.Config) (neo4jdrv.DriverWithContext, error) {
	auth := neo4jdrv.NoAuth()
	if cfg.Username != "" {
		auth = neo4jdrv.BasicAuth(cfg.Username, cfg.Password, "")
	}
	return neo4jdrv.NewDriverWithContext(cfg.URI, auth)
}

// Driver is a driver on the server cfg names, closed when tb ends.
func Driver(tb testing.TB, cfg neo4j.Config) neo4jdrv.DriverWithContext {
	tb.Helper()
	d, err := newDriver(cfg)
	if err != nil {
		tb.Fatalf("neo4jtest: driver: %v", err)
	}
	tb.Cleanup(func() { _ = d.Close(context.Background()) })
	return d
}

// PlanCache clears Neo4j's query caches and returns how many statements
// (text and parameter types) they held: the warm-up tests count the plans
// their reads add. Hold the database first (Open or Lock), so other test
// binaries add none meanwhile.
func PlanCache(tb testing.TB, cfg neo4j.Config) int {
	tb.Helper()
	res, err := neo4jdrv.ExecuteQuery(context.Background(), Driver(tb, cfg), "CALL db.clearQueryCaches()", nil,
		neo4jdrv.EagerResultTransformer, neo4jdrv.ExecuteQueryWithDatabase(cfg.Database))
	if err != nil || len(res.Records) != 1 {
		tb.Fatalf("neo4jtest: db.clearQueryCaches: %v", err)
	}
	msg, _ := res.Records[0].Values[0].(string)
	if msg == "Query cache already empty." {
		return 0
	}
	m := regexp.MustCompile(`cleared of (\d+) quer`).FindStringSubmatch(msg)
	if m == nil {
		tb.Fatalf("neo4jtest: db.clearQueryCaches said %q", msg)
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// Lock blocks until this test process holds the database cfg names, as
// Open does before wiping it, for tests that share the database without a
// graph store (vector/neo4j): another package's Open must not wipe their
// nodes mid-test. The lock is held until the process exits.
func Lock(tb testing.TB, cfg neo4j.Config) {
	tb.Helper()
	lockDatabase(tb, cfg)
}

var (
	lockOnce sync.Once
	lockErr  error
	lockFile *os.File // referenced so no finalizer closes it (and drops the lock)
)

// lockDatabase blocks until this process holds the lock of cfg's database
// (a file in the temp directory named after the URI); the lock is released
// when the process exits.
func lockDatabase(tb testing.TB, cfg neo4j.Config) {
	lockOnce.Do(func() {
		name := strings.Map(func(r rune) rune {
			if unicode.IsLetter(r) || unicode.IsDigit(r) {
				return r
			}
			return '_'
		}, cfg.URI+"_"+cfg.Database)
		lockFile, lockErr = os.OpenFile(filepath.Join(os.TempDir(), "mnemo-neo4jtest-"+name+".lock"), os.O_CREATE|os.O_RDWR, 0o600)
		if lockErr == nil {
			lockErr = syscall.Flock(int(lockFile.Fd()), syscall.LOCK_EX)
		}
	})
	if lockErr != nil {
		tb.Fatalf("neo4jtest: lock the test database: %v", lockErr)
	}
}

func unavailable(tb testing.TB, format string, args ...any) {
	tb.Helper()
	msg := fmt.Sprintf(format, args...)
	if os.Getenv("MNEMO_REQUIRE_NEO4J") == "1" {
		tb.Fatalf("neo4jtest: MNEMO_REQUIRE_NEO4J=1 but no Neo4j: %s", msg)
	}
	tb.Skipf("neo4jtest: skipping, no Neo4j: %s", msg)
}

// dockerHealthy reports whether testcontainers can reach a Docker engine.
func dockerHealthy() (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("docker provider: %v", r)
		}
	}()
	p, err := testcontainers.NewDockerProvider()
	if err != nil {
		return err
	}
	defer p.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return p.Health(ctx)
}

// startContainer runs neo4j:5 with auth off and plans that ignore parameter
// sizes (as testdata/neo4j and docs/scale.md set it) and returns its Bolt
// URI; the container is removed when tb ends.
func startContainer(tb testing.TB) string {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	c, err := testcontainers.Run(ctx, "neo4j:5",
		testcontainers.WithEnv(map[string]string{"NEO4J_AUTH": "none",
			"NEO4J_internal_cypher_use__parameter__size": "false"}),
		testcontainers.WithExposedPorts("7687/tcp"),
		testcontainers.WithWaitStrategy(wait.ForLog("Bolt enabled on").WithStartupTimeout(3*time.Minute)),
	)
	testcontainers.CleanupContainer(tb, c)
	if err != nil {
		unavailable(tb, "start neo4j:5 container: %v", err)
	}
	ep, err := c.PortEndpoint(ctx, "7687/tcp", "bolt")
	if err != nil {
		tb.Fatalf("neo4jtest: container endpoint: %v", err)
	}
	return ep
}

// LogBuffer is a log sink a store's background goroutines (the warm-up) and
// a test share.
type LogBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *LogBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

// Bytes is a copy of what was written.
func (b *LogBuffer) Bytes() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return bytes.Clone(b.b.Bytes())
}

// Reset empties the buffer.
func (b *LogBuffer) Reset() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.b.Reset()
}
