// Package sqlite is the embedded default graph.Store: one SQLite file in a
// data directory, written through the pure-Go modernc.org/sqlite driver.
//
// Durability: the database runs in WAL mode with synchronous=FULL. A kill -9
// would already be safe with NORMAL (a committed transaction is in the WAL
// file, i.e. in the OS page cache, before Commit returns); FULL also fsyncs
// the WAL on every commit, so an acknowledged write — which the gate has
// audited and the vector outbox relies on — survives a power cut too. The
// cost is one fsync per transaction, which batched ingest amortises.
//
// Concurrency: one writer connection serialises every write transaction
// (BEGIN IMMEDIATE, so a write never fails half way on a lock upgrade); a
// pool of read-only connections serves reads concurrently from the WAL
// snapshot.
//
// The graph maps onto tables: memories, versions, chunks and entities are
// rows; MENTIONS (memory and chunk), SUPERSEDES, NEXT (memory_next; between
// chunks, their order), CO_OCCURS and EDITS are link tables or columns. Keyword search is an in-memory BM25 index over each memory's title
// and current version, kept up to date from the versions table (keyword.go).
package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	sqlite "modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/mnemo-dev/mnemo/graph"
	"github.com/mnemo-dev/mnemo/graph/kwindex"
)

// The core contract and every capability (graph/doc.go).
var (
	_ graph.Store     = (*Store)(nil)
	_ graph.Proposals = (*Store)(nil)
	_ graph.Edits     = (*Store)(nil)
	_ graph.Capsules  = (*Store)(nil)
)

// FileName is the database file Open creates inside its directory.
const FileName = "mnemo.db"

// Options tunes a Store. The zero value is ready to use.
type Options struct {
	// Readers is the size of the read connection pool; zero means
	// max(4, GOMAXPROCS).
	Readers int
	// BusyTimeout is how long a connection waits for a lock; zero means 5s.
	BusyTimeout time.Duration
	// Now is the clock used for defaults (created_at); nil means time.Now.
	Now func() time.Time
}

// Store is the SQLite graph.Store. It is safe for concurrent use.
type Store struct {
	dir       string
	w, r      *sql.DB
	now       func() time.Time
	kw        *keywordIndex
	kwPass    *kwindex.PassRates // the keyword filter's pass rates (KeywordSearch)
	stmts     *stmtCache         // on r
	walks     *walkCache
	edits     *editCache
	closeOnce sync.Once
	closeErr  error
}

// uriPath escapes a file path for an SQLite URI filename.
var uriPath = strings.NewReplacer("%", "%25", "?", "%3F", "#", "%23")

// Open opens (creating when missing) the store in dir and applies pending
// schema migrations.
func Open(ctx context.Context, dir string, opts Options) (*Store, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("sqlite open: %w", err)
	}
	if opts.Readers <= 0 {
		opts.Readers = max(4, runtime.GOMAXPROCS(0))
	}
	if opts.BusyTimeout <= 0 {
		opts.BusyTimeout = 5 * time.Second
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	path := filepath.Join(dir, FileName)
	// The DSN is an SQLite URI: '?' and '#' in the path would end it (a
	// directory named "a#1" would open the file "a"), so they are escaped.
	dsn := func(extra ...string) string {
		q := url.Values{}
		q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", opts.BusyTimeout.Milliseconds()))
		q.Add("_pragma", "journal_mode(WAL)")
		q.Add("_pragma", "synchronous(FULL)")
		q.Add("_pragma", "foreign_keys(1)")
		q.Add("_pragma", "temp_store(MEMORY)")
		for i := 0; i+1 < len(extra); i += 2 {
			q.Add(extra[i], extra[i+1])
		}
		return "file:" + uriPath.Replace(path) + "?" + q.Encode()
	}
	// secure_delete: content an erase removes (forget.go) is overwritten in
	// the file, not left in free pages.
	w, err := sql.Open("sqlite", dsn("_txlock", "immediate", "_pragma", "secure_delete(1)", "_pragma", "cache_size(-65536)"))
	if err != nil {
		return nil, fmt.Errorf("sqlite open writer: %w", err)
	}
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	w.SetConnMaxLifetime(0)
	w.SetConnMaxIdleTime(0)
	s := &Store{dir: dir, w: w, now: opts.Now, kw: newKeywordIndex(), kwPass: kwindex.NewPassRates(), walks: newWalkCache(), edits: newEditCache()}
	if err := migrate(ctx, w); err != nil {
		_ = w.Close()
		return nil, err
	}
	// Each reader keeps a 16 MiB page cache (the writer 64 MiB): the
	// file's pages are in the OS's cache as well, and at 1M memories
	// five connections' 64 MiB caches, filled by the keyword catch-up's
	// scan and by searches, were about 200 MiB of the serving RSS
	// (docs/benchmarks.md, "1M memories").
	r, err := sql.Open("sqlite", dsn("_pragma", "query_only(1)", "_pragma", "cache_size(-16384)"))
	if err != nil {
		_ = w.Close()
		return nil, fmt.Errorf("sqlite open readers: %w", err)
	}
	r.SetMaxOpenConns(opts.Readers)
	r.SetMaxIdleConns(opts.Readers)
	r.SetConnMaxIdleTime(0)
	s.r = r
	s.stmts = newStmtCache(r, maxCachedStmts)
	return s, nil
}

// Dir is the data directory the store was opened in.
func (s *Store) Dir() string { return s.dir }

// Close closes both connection pools. It is idempotent.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		s.closeErr = errors.Join(s.stmts.close(), s.r.Close(), s.w.Close())
	})
	return s.closeErr
}

// Health pings both pools.
func (s *Store) Health(ctx context.Context) error {
	if err := s.w.PingContext(ctx); err != nil {
		return fmt.Errorf("sqlite health writer: %w", err)
	}
	if err := s.r.PingContext(ctx); err != nil {
		return fmt.Errorf("sqlite health reader: %w", err)
	}
	return nil
}

// Entities whose maintained posting-list size is wrong. Relies on the
// mentions primary key.
const badMentionCounts = `SELECT count(*) FROM entities e
WHERE e.mention_count <> (SELECT count(*) FROM mentions x WHERE x.entity_rid = e.rid)`

// IntegrityCheck runs PRAGMA integrity_check and checks the store's own
// derived data (posting-list sizes); it reports anything amiss.
func (s *Store) IntegrityCheck(ctx context.Context) error {
	var res string
	if err := s.r.QueryRowContext(ctx, "PRAGMA integrity_check").Scan(&res); err != nil {
		return fmt.Errorf("integrity check: %w", err)
	}
	if res != "ok" {
		return fmt.Errorf("integrity check: %s", res)
	}
	var bad int
	if err := s.r.QueryRowContext(ctx, badMentionCounts).Scan(&bad); err != nil {
		return fmt.Errorf("integrity check: %w", err)
	}
	if bad > 0 {
		return fmt.Errorf("integrity check: %d entities with a wrong mention_count", bad)
	}
	return nil
}

// tx is one write transaction with a cache of statements prepared on it, so
// a batch parses each statement once.
//
// Statements run under context.Background: the driver watches a cancellable
// context with one goroutine per statement, which costs more than the
// statement itself in batched ingest. Write loops check the caller's context
// between items instead (t.err), and the transaction rolls back on
// cancellation.
type tx struct {
	*sql.Tx
	caller   context.Context
	ctx      context.Context
	stmts    map[string]*sql.Stmt
	now      time.Time
	entities map[entityKey]*entityState // resolved in this transaction
	mentions map[int64]int64            // entity rid -> change of its mention_count
	cooccur  map[[2]int64]int64         // (a, b) entity rids -> change of their CO_OCCURS count
}

const addMentionCount = `UPDATE entities SET mention_count = mention_count + ? WHERE rid = ?`

// flushMentionCounts writes the accumulated posting-list size changes.
func (t *tx) flushMentionCounts() error {
	for rid, d := range t.mentions {
		if d == 0 {
			continue
		}
		if _, err := t.exec(addMentionCount, d, rid); err != nil {
			return err
		}
	}
	return nil
}

// err reports the caller's cancellation.
func (t *tx) err() error { return t.caller.Err() }

func (t *tx) stmt(query string) (*sql.Stmt, error) {
	if st, ok := t.stmts[query]; ok {
		return st, nil
	}
	st, err := t.PrepareContext(t.ctx, query)
	if err != nil {
		return nil, err
	}
	t.stmts[query] = st
	return st, nil
}

func (t *tx) exec(query string, args ...any) (sql.Result, error) {
	st, err := t.stmt(query)
	if err != nil {
		return nil, err
	}
	return st.ExecContext(t.ctx, args...)
}

func (t *tx) queryRow(query string, args ...any) *sql.Row {
	st, err := t.stmt(query)
	if err != nil {
		// Surface the prepare error through Scan.
		return t.QueryRowContext(t.ctx, query, args...)
	}
	return st.QueryRowContext(t.ctx, args...)
}

// What a write transaction may change, for the read caches that key their
// entries by a tenant's sequence (seqmap.go): each kind bumps its own
// counter, so a write leaves the caches that cannot hold what it changed
// as they are. A write that names the tenants it writes in (writeIn)
// bumps their counters (table tenant_seq); one that names none bumps the
// file's (table write_seq), which every tenant's sequence includes.
type writeKind int

const (
	// writeGraph may change anything a cache holds: memories, versions,
	// entities, mentions, edges, edits, relations. It bumps its tenants'
	// tenant_seq.w, which every cache's sequence includes.
	writeGraph writeKind = iota
	// writeReadCounts changes only memories' read counters
	// (access_count, last_accessed: Touch, after a read_context or a get).
	// It bumps its tenants' tenant_seq.r, which only the caches of memory
	// rows include: the walk's posting lists and mentions stay warm.
	writeReadCounts
	// writeLog writes only tables no cache reads: context receipts, audit
	// events on their own (a rejected write's), the outbox's claims, acks
	// and failures (a server claims every 5 s, due items or not). It bumps
	// nothing.
	writeLog
)

// tenantBump is the statement each kind of write runs, before it commits,
// for each tenant it names; fileBump the one a write naming none runs.
var tenantBump = [...]string{
	writeGraph:      `INSERT INTO tenant_seq (tenant_id, w, r) VALUES (?, 1, 0) ON CONFLICT (tenant_id) DO UPDATE SET w = w + 1`,
	writeReadCounts: `INSERT INTO tenant_seq (tenant_id, w, r) VALUES (?, 0, 1) ON CONFLICT (tenant_id) DO UPDATE SET r = r + 1`,
}

const fileBump = `UPDATE write_seq SET n = n + 1`

// bumpSeqs names the state the transaction's commit makes, for the read
// caches of every client of the file (seqmap.go): it bumps the counter of
// kind for each of tenants, or the file's when tenants is empty.
func (t *tx) bumpSeqs(kind writeKind, tenants []string) error {
	if kind == writeLog {
		return nil
	}
	if len(tenants) == 0 {
		_, err := t.exec(fileBump)
		return err
	}
	for _, id := range slices.Compact(slices.Sorted(slices.Values(tenants))) {
		if _, err := t.exec(tenantBump[kind], id); err != nil {
			return err
		}
	}
	return nil
}

// readSeqs is the statement a cached read runs first in its transaction,
// with its tenant: the tenant's sequence of the graph (the file's
// write_seq and the tenant's w) and that of memory rows (that and the
// tenant's read counter). Each is a sum of counters that only grow, and
// every commit that may change what it covers bumps one of them, so each
// names one state of the tenant. (Table read_seq, migration 21, was the
// file's read counter before tenants had their own; nothing reads it.)
const readSeqs = `SELECT w.n + COALESCE(t.w, 0), w.n + COALESCE(t.w, 0) + COALESCE(t.r, 0)
FROM write_seq w LEFT JOIN tenant_seq t ON t.tenant_id = ?`

// scanSeqs reads readSeqs' row for tenant.
func scanSeqs(row *sql.Row, tenant string) (graphSeq, rowSeq seq, err error) {
	graphSeq.tenant, rowSeq.tenant = tenant, tenant
	err = row.Scan(&graphSeq.n, &rowSeq.n)
	return graphSeq, rowSeq, err
}

// write runs fn in one write transaction on the single writer connection;
// it may change anything (writeGraph).
func (s *Store) write(ctx context.Context, fn func(t *tx) error) error {
	return s.writeIn(ctx, writeGraph, nil, fn)
}

// writeAs is write for a transaction that changes only what kind says.
func (s *Store) writeAs(ctx context.Context, kind writeKind, fn func(t *tx) error) error {
	return s.writeIn(ctx, kind, nil, fn)
}

// writeIn is writeAs for a transaction that writes only in tenants: rows
// whose tenant_id is one of them, or that hang off such rows. None: it may
// write in any tenant.
func (s *Store) writeIn(ctx context.Context, kind writeKind, tenants []string, fn func(t *tx) error) error {
	sqlTx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin: %w", mapErr(err))
	}
	t := &tx{Tx: sqlTx, caller: ctx, ctx: context.Background(), stmts: map[string]*sql.Stmt{},
		now: s.now().UTC(), entities: map[entityKey]*entityState{}, mentions: map[int64]int64{},
		cooccur: map[[2]int64]int64{}}
	defer func() {
		for _, st := range t.stmts {
			_ = st.Close()
		}
	}()
	err = fn(t)
	if err == nil {
		err = t.flushMentionCounts()
	}
	if err == nil {
		err = t.flushCoOccurs()
	}
	if err == nil {
		err = t.bumpSeqs(kind, tenants)
	}
	if err != nil {
		_ = sqlTx.Rollback()
		return mapErr(err)
	}
	if err := sqlTx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", mapErr(err))
	}
	return nil
}

// mapErr turns constraint violations into graph.ErrConflict.
func mapErr(err error) error {
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() {
		case sqlite3.SQLITE_CONSTRAINT_UNIQUE, sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY:
			return fmt.Errorf("%w: %v", graph.ErrConflict, err)
		}
	}
	return err
}

// nanos stores a time as integer nanoseconds UTC; the zero time is 0.
func nanos(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

// fromNanos is the inverse of nanos.
func fromNanos(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n).UTC()
}
