package neo4j

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	neo4jdrv "github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/mnemo-dev/mnemo/graph"
	"github.com/mnemo-dev/mnemo/graph/bm25"
)

// The core contract and every capability (graph/doc.go).
var (
	_ graph.Store         = (*Store)(nil)
	_ graph.Proposals     = (*Store)(nil)
	_ graph.Edits         = (*Store)(nil)
	_ graph.Capsules      = (*Store)(nil)
	_ graph.KeywordRanker = (*Store)(nil)
)

// Config says where the Neo4j server is and how to log in.
type Config struct {
	// URI is the Bolt or Neo4j URI, e.g. bolt://127.0.0.1:7687 or
	// neo4j+s://xxxx.databases.neo4j.io. Required.
	URI string
	// Username and Password authenticate with basic auth; an empty Username
	// connects without authentication.
	Username string
	Password string
	// Database is the database name; empty means the server's default.
	Database string
	// WarmUp bounds the warm-up Open starts in the background (Warm: it
	// plans the read statements, so that the first search after a Neo4j
	// restart does not); zero means DefaultWarmUp, a negative value none.
	WarmUp time.Duration
	// Logger receives the warm-up's log line; nil means slog.Default().
	Logger *slog.Logger
	// IndexMemories bounds the memories the process's keyword and mention
	// indexes hold across tenants (about 1.3 KiB each; a tenant counts as its
	// postings over termsPerMemory when that is more than its memories, as
	// a tenant of long documents holds more a memory): past it, the least
	// recently searched tenants are dropped whole, to be read again on
	// their next search. Zero means DefaultIndexMemories, a negative value
	// no bound.
	IndexMemories int
}

// DefaultIndexMemories is Config.IndexMemories' default: about 1.3 GiB of
// the process's memory (docs/scale.md).
const DefaultIndexMemories = 1_000_000

// Store is a graph.Store on Neo4j. It is safe for concurrent use.
type Store struct {
	driver   neo4jdrv.DriverWithContext
	database string
	now      func() time.Time
	stems    bm25.Stems // the keyword terms' stems, for every write
	kw       *keywords  // the keyword index (keyword.go)
	log      *slog.Logger
	// cypherFilter makes Walk and Neighbours filter in Neo4j even when the
	// process could (tests compare the two paths: export_test.go).
	cypherFilter atomic.Bool
	warmStop     context.CancelFunc // cancels the background warm-up, if any
	warmDone     chan struct{}      // closed when it has returned
	closeOnce    sync.Once
	closeErr     error
}

// Open connects to Neo4j, checks connectivity, creates the schema
// (constraints and indexes, idempotently) and starts the warm-up in the
// background (Config.WarmUp).
func Open(ctx context.Context, cfg Config) (*Store, error) {
	if cfg.URI == "" {
		return nil, &graph.FieldError{Field: "uri", Message: "required"}
	}
	auth := neo4jdrv.NoAuth()
	if cfg.Username != "" {
		auth = neo4jdrv.BasicAuth(cfg.Username, cfg.Password, "")
	}
	driver, err := neo4jdrv.NewDriverWithContext(cfg.URI, auth)
	if err != nil {
		return nil, fmt.Errorf("neo4j: open %s: %w", cfg.URI, err)
	}
	s := &Store{driver: driver, database: cfg.Database, now: time.Now, log: cfg.Logger, kw: newKeywords(cmp.Or(cfg.IndexMemories, DefaultIndexMemories))}
	if s.log == nil {
		s.log = slog.Default()
	}
	if err := driver.VerifyConnectivity(ctx); err != nil {
		_ = driver.Close(ctx)
		return nil, fmt.Errorf("neo4j: connect %s: %w", cfg.URI, err)
	}
	if err := s.ensureSchema(ctx); err != nil {
		_ = driver.Close(ctx)
		return nil, err
	}
	if err := s.backfillKeywords(ctx); err != nil {
		_ = driver.Close(ctx)
		return nil, err
	}
	switch {
	case cfg.WarmUp == 0:
		s.warmInBackground(DefaultWarmUp)
	case cfg.WarmUp > 0:
		s.warmInBackground(cfg.WarmUp)
	}
	return s, nil
}

// Health reports whether the server answers a query.
func (s *Store) Health(ctx context.Context) error {
	_, err := read(ctx, s, func(tx txn) (struct{}, error) {
		_, err := collect(ctx, tx, "RETURN 1", nil)
		return struct{}{}, err
	})
	if err != nil {
		return fmt.Errorf("neo4j: health: %w", err)
	}
	return nil
}

// Close stops the warm-up, if it still runs, and closes the driver and its
// connections. Closing twice is a no-op.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		if s.warmStop != nil {
			s.warmStop()
			<-s.warmDone
		}
		if err := s.driver.Close(context.Background()); err != nil {
			s.closeErr = fmt.Errorf("neo4j: close: %w", err)
		}
	})
	return s.closeErr
}

func (s *Store) session(ctx context.Context, mode neo4jdrv.AccessMode) neo4jdrv.SessionWithContext {
	return s.driver.NewSession(ctx, neo4jdrv.SessionConfig{DatabaseName: s.database, AccessMode: mode})
}

// txn is what a statement runs in: a write's managed transaction, or a
// read's session, where each statement is its own auto-commit transaction.
type txn interface {
	Run(ctx context.Context, cypher string, params map[string]any) (neo4jdrv.ResultWithContext, error)
}

// autoCommit runs each statement of a read as its own transaction.
type autoCommit struct{ sess neo4jdrv.SessionWithContext }

func (a autoCommit) Run(ctx context.Context, cypher string, params map[string]any) (neo4jdrv.ResultWithContext, error) {
	return a.sess.Run(ctx, cypher, params)
}

// readAttempts bounds how often read runs its work when the failure is
// transient (neo4jdrv.IsRetryable: a lost connection, a leader switch).
const readAttempts = 3

// read runs work in a read session whose statements are auto-commit
// transactions: one round trip a statement (RUN and PULL pipelined), where
// a managed transaction adds a BEGIN and a COMMIT, each waited for. Neo4j
// reads at read committed either way, so a read of several statements saw
// no snapshot before; the statements that must agree with each other are
// one statement (keptCypher reads the rows and the keyword sequence
// together). A transient failure runs work again, as ExecuteRead did; work
// must therefore leave nothing half-done behind when it fails, as before.
// Once ctx is done a failure is ctx.Err(), as ExecuteRead's was.
func read[T any](ctx context.Context, s *Store, work func(tx txn) (T, error)) (T, error) {
	for attempt := 1; ; attempt++ {
		sess := s.session(ctx, neo4jdrv.AccessModeRead)
		v, err := work(autoCommit{sess})
		_ = sess.Close(ctx)
		if err != nil && ctx.Err() != nil {
			// The driver's error for a cancelled statement ("Writing to
			// connection has been canceled") does not wrap the context's.
			return v, ctx.Err()
		}
		if err == nil || attempt == readAttempts || !neo4jdrv.IsRetryable(err) {
			return v, mapError(err)
		}
		select {
		case <-ctx.Done():
			return v, ctx.Err()
		case <-time.After(time.Duration(attempt) * 50 * time.Millisecond):
		}
	}
}

// write runs work in one managed write transaction: all of it commits or
// none of it does.
func write[T any](ctx context.Context, s *Store, work func(tx txn) (T, error)) (T, error) {
	sess := s.session(ctx, neo4jdrv.AccessModeWrite)
	defer sess.Close(ctx)
	v, err := neo4jdrv.ExecuteWrite(ctx, sess, func(tx neo4jdrv.ManagedTransaction) (T, error) { return work(tx) })
	return v, mapError(err)
}

// collect runs one query and returns all its records.
func collect(ctx context.Context, tx txn, query string, params map[string]any) ([]*neo4jdrv.Record, error) {
	res, err := tx.Run(ctx, asKnown(query, params), params)
	if err != nil {
		return nil, err
	}
	return res.Collect(ctx)
}

// stream runs query in tx and hands its records to fn n at a time (the
// last batch may be shorter; none when there are no records), so that a
// large result is never held whole. fn must not keep the slice.
func stream(ctx context.Context, tx txn, query string, params map[string]any, n int,
	fn func([]*neo4jdrv.Record)) error {
	res, err := tx.Run(ctx, asKnown(query, params), params)
	if err != nil {
		return err
	}
	batch := make([]*neo4jdrv.Record, 0, n)
	for res.Next(ctx) {
		if batch = append(batch, res.Record()); len(batch) == n {
			fn(batch)
			clear(batch)
			batch = batch[:0]
		}
	}
	if err := res.Err(); err != nil {
		return err
	}
	if len(batch) > 0 {
		fn(batch)
	}
	return nil
}

// mapError turns a uniqueness violation into graph.ErrConflict and leaves
// every other error (including the graph sentinels returned by the work
// functions) as it is.
func mapError(err error) error {
	var ne *neo4jdrv.Neo4jError
	if errors.As(err, &ne) && strings.HasSuffix(ne.Code, "ConstraintValidationFailed") {
		return fmt.Errorf("%w: %s", graph.ErrConflict, ne.Msg)
	}
	return err
}

// notFound wraps graph.ErrNotFound with what was missing.
func notFound(kind, id string) error {
	return fmt.Errorf("%s %q: %w", kind, id, graph.ErrNotFound)
}

// requireIDs refuses empty ids (graph.ErrInvalid) before the store is
// touched; pairs are field name, value.
func requireIDs(pairs ...string) error {
	for i := 0; i+1 < len(pairs); i += 2 {
		if pairs[i+1] == "" {
			return &graph.FieldError{Field: pairs[i], Message: "required"}
		}
	}
	return nil
}
