package local

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"

	"github.com/mnemo-dev/mnemo/vector"
)

// Defaults for the zero values of Options.
const (
	// DefaultExactThreshold is the number of points matching a filter at or
	// below which a search scans them exactly instead of walking the graph;
	// the graph is built once the index holds more live points than this.
	// Measured on a 2-core machine with 384-d vectors (see the package
	// comment): below it exact search is as fast as HNSW and always exact.
	DefaultExactThreshold = 5000
	// DefaultM is the number of graph links per node (twice that on the
	// bottom layer).
	DefaultM = 16
	// DefaultEfConstruction is the beam width used while linking a node.
	DefaultEfConstruction = 100
	// DefaultEfSearch is the minimum beam width of a graph search.
	DefaultEfSearch = 96
	// DefaultCompactBytes is the log size that triggers a snapshot.
	DefaultCompactBytes = 64 << 20
)

// The checkpoint rule (see the package comment): a snapshot is also due when
// the graph nodes it does not hold (the graph backlog: what the next open
// would link again, about 1 ms each at 384 dimensions) reach
// checkpointFloor and 1/checkpointRatio of the graph. The ratio bounds the
// rewriting as the index grows, as levels do in an LSM tree: each snapshot
// is at most checkpointRatio times the points added since the last, so the
// snapshots written as the index grows total at most checkpointRatio times
// its final size (the 64 MiB rule already rewrites a 1M index every ~40k
// points, 1/25 of it). The floor keeps a small index from being rewritten
// for a replay of about a second.
const (
	checkpointFloor = 1024
	checkpointRatio = 16
)

// checkpointDue reports whether a graph backlog of backlog nodes, in a
// graph of nodes nodes, calls for a snapshot.
func checkpointDue(backlog, nodes int) bool {
	return backlog >= checkpointFloor && backlog*checkpointRatio >= nodes
}

// graphSeed makes the graph's random levels reproducible run to run.
const graphSeed = 0x6d6e656d6f

// Options configures Open. Zero values take the defaults above.
type Options struct {
	// Dimensions is the length of every vector; required. Opening an
	// existing index with other dimensions fails.
	Dimensions int
	// ExactThreshold: see DefaultExactThreshold.
	ExactThreshold int
	// M: see DefaultM.
	M int
	// EfConstruction: see DefaultEfConstruction.
	EfConstruction int
	// EfSearch: see DefaultEfSearch. Larger is slower and more exact.
	EfSearch int
	// CompactBytes: see DefaultCompactBytes.
	CompactBytes int64
	// Logger receives warnings (a torn log tail, a failed compaction); nil
	// discards them.
	Logger *slog.Logger
	// DiscardOldFormat opens an index written in an older format
	// (vector.ErrOldFormat) empty, removing its files, instead of refusing
	// it. Only a rebuild from the graph (`mnemo reindex`) sets it.
	DiscardOldFormat bool
}

func (o Options) withDefaults() Options {
	if o.ExactThreshold <= 0 {
		o.ExactThreshold = DefaultExactThreshold
	}
	if o.M <= 0 {
		o.M = DefaultM
	}
	o.M = min(o.M, 64)
	if o.EfConstruction <= 0 {
		o.EfConstruction = DefaultEfConstruction
	}
	if o.EfSearch <= 0 {
		o.EfSearch = DefaultEfSearch
	}
	if o.CompactBytes <= 0 {
		o.CompactBytes = DefaultCompactBytes
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return o
}

// Index is the embedded vector index: all points in memory, every
// acknowledged batch in an fsynced log, periodic snapshots. It is safe for
// concurrent use: searches run in parallel; writes are serialised and
// briefly exclude searches while they apply.
type Index struct {
	dir  string
	opts Options
	lock *os.File

	writeMu sync.Mutex // serialises Upsert, Delete, Compact and Close
	mu      sync.RWMutex
	st      *state // nil once closed
	wal     *wal

	visits sync.Pool // *visitSet

	// snapNodes is the number of graph nodes the snapshot on disk holds
	// (0 without one or without a graph); replayed counts the points
	// applied from the log by Open. Guarded by writeMu.
	snapNodes, replayed int

	graphSearches, exactSearches, fallbacks atomic.Int64
}

// Stats describes the index for operators and tests.
type Stats struct {
	Points    int  // live points
	DeadSlots int  // deleted or replaced slots awaiting compaction
	Graph     bool // whether the HNSW graph exists
	LogBytes  int64
	// GraphBacklog is the number of graph nodes the snapshot does not
	// hold: what the next Open would link again (the checkpoint rule bounds
	// it). Replayed is the number of points (upserted or deleted) Open
	// applied from the log.
	GraphBacklog, Replayed int
	// Searches by path since Open: graph walks, exact scans chosen up
	// front, and graph walks that fell back to an exact scan.
	GraphSearches, ExactSearches, Fallbacks int64
}

// Stats returns current figures.
func (x *Index) Stats() Stats {
	x.writeMu.Lock()
	defer x.writeMu.Unlock()
	x.mu.RLock()
	defer x.mu.RUnlock()
	s := Stats{
		GraphSearches: x.graphSearches.Load(),
		ExactSearches: x.exactSearches.Load(),
		Fallbacks:     x.fallbacks.Load(),
	}
	if x.st != nil {
		s.Points, s.DeadSlots, s.Graph = x.st.nLive, x.st.nDead, x.st.graph != nil
		s.LogBytes = x.wal.size
		s.GraphBacklog = x.graphBacklog()
	}
	s.Replayed = x.replayed
	return s
}

var _ vector.Index = (*Index)(nil)

// Open opens or creates the index in dir: it loads the snapshot, replays the
// log after it (ignoring a torn tail, which holds only an unacknowledged
// batch) and builds or extends the graph when the index is large enough.
// When that linked checkpointFloor graph nodes or more, Open starts a
// snapshot (a recovery checkpoint) before returning, so the next open reads
// the graph instead of linking it again; searches run meanwhile, and
// writes, Stats and Close wait for it.
func Open(dir string, opts Options) (*Index, error) {
	if opts.Dimensions <= 0 {
		return nil, fmt.Errorf("%w: options: dimensions must be positive", vector.ErrInvalid)
	}
	opts = opts.withDefaults()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create vector dir: %w", err)
	}
	lock, err := lockDir(dir)
	if err != nil {
		return nil, err
	}
	x := &Index{dir: dir, opts: opts, lock: lock}
	x.visits.New = func() any { return &visitSet{} }
	err = x.load()
	if errors.Is(err, vector.ErrOldFormat) && opts.DiscardOldFormat {
		opts.Logger.Warn("vector index in an older format discarded, to be rebuilt from the graph", "dir", dir, "err", err)
		if err = discardFiles(dir); err == nil {
			err = x.load()
		}
	}
	if err != nil {
		lock.Close()
		return nil, fmt.Errorf("vector index %s: %w", dir, err)
	}
	if x.graphBacklog() >= checkpointFloor {
		x.writeMu.Lock()
		go func() {
			defer x.writeMu.Unlock()
			if err := x.compact(); err != nil {
				x.opts.Logger.Warn("vector index recovery checkpoint failed", "dir", x.dir, "err", err)
			}
		}()
	}
	return x, nil
}

// graphBacklog is the number of graph nodes the snapshot on disk does not
// hold. Caller holds writeMu or is Open.
func (x *Index) graphBacklog() int {
	x.mu.RLock()
	defer x.mu.RUnlock()
	if x.st == nil || x.st.graph == nil {
		return 0
	}
	return x.st.graph.len() - x.snapNodes
}

// discardFiles removes the snapshot and logs of the index in dir (not the
// lock, which the caller holds).
func discardFiles(dir string) error {
	logs, err := filepath.Glob(filepath.Join(dir, "wal-*.log"))
	if err != nil {
		return fmt.Errorf("list vector logs: %w", err)
	}
	for _, name := range append(logs, filepath.Join(dir, snapshotName), filepath.Join(dir, snapshotName+".tmp")) {
		if err := os.Remove(name); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("discard old vector index: %w", err)
		}
	}
	return syncDir(dir)
}

func (x *Index) load() error {
	seqs, err := logSeqs(x.dir)
	if err != nil {
		return fmt.Errorf("list vector logs: %w", err)
	}
	// Room for every point the logs can hold, so that the slots are
	// allocated once rather than grown (and copied) while replaying.
	var logBytes int64
	for _, s := range seqs {
		if fi, err := os.Stat(filepath.Join(x.dir, walName(s))); err == nil {
			logBytes += fi.Size()
		}
	}
	extra := int(logBytes / int64(minPointBytes(x.opts.Dimensions)))
	st, seq, err := readSnapshot(x.dir, x.opts.Dimensions, graphSeed, extra)
	if err != nil {
		return err
	}
	defer func() {
		if x.st != st && st != nil {
			st.vs.release() // the open failed: no reader ever saw it
		}
	}()
	if st == nil {
		st = newState(x.opts.Dimensions, extra)
	}
	x.snapNodes, x.replayed = 0, 0
	if st.graph != nil {
		x.snapNodes = st.graph.len()
	}
	active, size := seq, int64(0)
	for _, s := range seqs {
		path := filepath.Join(x.dir, walName(s))
		if s < seq { // covered by the snapshot; left by a crash mid-compaction
			if err := os.Remove(path); err != nil {
				return fmt.Errorf("remove old vector log: %w", err)
			}
			continue
		}
		var n int
		if size, n, err = replay(path, st, x.opts.Logger); err != nil {
			return err
		}
		x.replayed += n
		active = s
	}
	x.st = st
	x.ensureGraph(st)
	x.wal, err = openWAL(x.dir, active, size)
	return err
}

// Dimensions implements vector.Index.
func (x *Index) Dimensions() int { return x.opts.Dimensions }

// Upsert implements vector.Index. The batch is one log record, fsynced
// before Upsert returns.
func (x *Index) Upsert(ctx context.Context, pts []vector.Point) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := vector.ValidateBatch(pts, x.opts.Dimensions); err != nil {
		return err
	}
	if len(pts) == 0 {
		return nil
	}
	payloads := make([]vector.Payload, len(pts))
	vecs := make([][]float32, len(pts))
	for i, p := range pts {
		p.Payload.MemoryID = p.ID
		p.Payload.CreatedAt = p.Payload.CreatedAt.UTC()
		payloads[i], vecs[i] = p.Payload, vector.Normalize(p.Vector)
	}
	body := encodeUpsert(payloads, vecs)

	x.writeMu.Lock()
	defer x.writeMu.Unlock()
	if x.wal == nil {
		return vector.ErrClosed
	}
	if err := x.wal.append(body); err != nil {
		return err
	}
	x.mu.Lock()
	for i := range payloads {
		x.st.put(payloads[i], vecs[i])
	}
	x.extendGraph(x.st)
	x.mu.Unlock()
	x.ensureGraph(x.st)
	x.maybeCompact()
	return nil
}

// Delete implements vector.Index.
func (x *Index) Delete(ctx context.Context, ids []string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if len(ids) == 0 {
		return nil
	}
	for _, id := range ids {
		if id == "" {
			return fmt.Errorf("%w: delete: empty id", vector.ErrInvalid)
		}
	}
	body := encodeDelete(ids)
	x.writeMu.Lock()
	defer x.writeMu.Unlock()
	if x.wal == nil {
		return vector.ErrClosed
	}
	if err := x.wal.append(body); err != nil {
		return err
	}
	x.mu.Lock()
	for _, id := range ids {
		x.st.remove(id)
	}
	x.mu.Unlock()
	x.maybeCompact()
	return nil
}

// Score implements vector.Index.
func (x *Index) Score(ctx context.Context, query []float32, f vector.Filter, ids []string) ([]vector.Hit, error) {
	q, err := x.checkQuery(ctx, query, f)
	if err != nil {
		return nil, err
	}
	x.mu.RLock()
	defer x.mu.RUnlock()
	st := x.st
	if st == nil {
		return nil, vector.ErrClosed
	}
	hits := make([]vector.Hit, 0, len(ids))
	seen := make(map[int32]struct{}, len(ids))
	for _, id := range ids {
		slot, ok := st.byID[id]
		if !ok || !st.match(&st.meta[slot], &f) {
			continue
		}
		if _, dup := seen[slot]; dup {
			continue
		}
		seen[slot] = struct{}{}
		hits = append(hits, vector.Hit{ID: id, Score: 1 - st.vs.dist(q, slot), Payload: outPayload(st.payload(&st.meta[slot]))})
	}
	vector.SortHits(hits)
	return hits, nil
}

// Scan implements vector.Index. It copies the matching ids under the read
// lock, then hands payloads out in chunks without holding it, so fn may call
// the index; points deleted meanwhile are skipped.
func (x *Index) Scan(ctx context.Context, f vector.Filter, fn func(vector.Payload) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := f.Validate(); err != nil {
		return err
	}
	x.mu.RLock()
	st := x.st
	if st == nil {
		x.mu.RUnlock()
		return vector.ErrClosed
	}
	var ids []string
	for _, slot := range st.tenants[f.TenantID] {
		if m := &st.meta[slot]; st.match(m, &f) {
			ids = append(ids, m.memoryID)
		}
	}
	x.mu.RUnlock()

	const chunk = 512
	batch := make([]vector.Payload, 0, chunk)
	for start := 0; start < len(ids); start += chunk {
		if err := ctx.Err(); err != nil {
			return err
		}
		batch = batch[:0]
		x.mu.RLock()
		if x.st == nil {
			x.mu.RUnlock()
			return vector.ErrClosed
		}
		for _, id := range ids[start:min(start+chunk, len(ids))] {
			if slot, ok := x.st.byID[id]; ok && x.st.match(&x.st.meta[slot], &f) {
				batch = append(batch, outPayload(x.st.payload(&x.st.meta[slot])))
			}
		}
		x.mu.RUnlock()
		for _, p := range batch {
			if err := ctx.Err(); err != nil {
				return err
			}
			if err := fn(p); err != nil {
				return err
			}
		}
	}
	return nil
}

// Count implements vector.Index.
func (x *Index) Count(ctx context.Context, f vector.Filter) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	if err := f.Validate(); err != nil {
		return 0, err
	}
	x.mu.RLock()
	defer x.mu.RUnlock()
	if x.st == nil {
		return 0, vector.ErrClosed
	}
	return x.st.count(f), nil
}

// Compact writes a snapshot now and starts a fresh log, dropping dead slots
// (and rebuilding the graph) when they make up a large share. It runs on its
// own when the log passes Options.CompactBytes; searches continue meanwhile,
// writes wait.
func (x *Index) Compact(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	x.writeMu.Lock()
	defer x.writeMu.Unlock()
	if x.wal == nil {
		return vector.ErrClosed
	}
	return x.compact()
}

// Close releases the index. Every acknowledged write is already durable, so
// Close does not write a snapshot. Closing twice is harmless.
func (x *Index) Close() error {
	x.writeMu.Lock()
	defer x.writeMu.Unlock()
	if x.wal == nil {
		return nil
	}
	x.mu.Lock()
	st := x.st
	x.st = nil
	x.mu.Unlock()
	if st != nil {
		st.vs.release() // no reader holds it: they hold mu and find x.st nil
	}
	err := x.wal.f.Close()
	x.wal = nil
	return errors.Join(err, x.lock.Close())
}

func (x *Index) checkQuery(ctx context.Context, query []float32, f vector.Filter) ([]float32, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := f.Validate(); err != nil {
		return nil, err
	}
	if err := vector.CheckVector(query, x.opts.Dimensions); err != nil {
		return nil, fmt.Errorf("query: %w", err)
	}
	return vector.Normalize(query), nil
}

// maybeCompact compacts when the log is large, dead slots outnumber live
// ones, or the checkpoint rule calls for a snapshot (checkpointDue). The
// batch that triggered it is already durable, so a failure is logged, not
// returned; the next write tries again. Caller holds writeMu.
func (x *Index) maybeCompact() {
	x.mu.RLock()
	manyDead := x.st.nDead > 1024 && x.st.nDead > x.st.nLive
	nodes := 0
	if x.st.graph != nil {
		nodes = x.st.graph.len()
	}
	x.mu.RUnlock()
	if x.wal.size < x.opts.CompactBytes && !manyDead && !checkpointDue(nodes-x.snapNodes, nodes) {
		return
	}
	if err := x.compact(); err != nil {
		x.opts.Logger.Warn("vector index compaction failed", "dir", x.dir, "err", err)
	}
}

// compact writes the snapshot covering the current log, then switches to
// the next log. Caller holds writeMu, so the state cannot change underneath;
// readers keep the old state until the switch.
func (x *Index) compact() error {
	x.mu.RLock()
	st := x.st
	next := st
	if st.nDead > 0 && (st.graph == nil || st.nDead > st.nLive/2) {
		next = st.compacted()
		if next.nLive > x.opts.ExactThreshold {
			next.graph = x.buildGraph(next)
		}
	}
	old := x.wal
	err := writeSnapshot(x.dir, next, old.seq+1)
	x.mu.RUnlock()
	var w *wal
	if err == nil {
		w, err = openWAL(x.dir, old.seq+1, 0)
	}
	if err != nil {
		if next != st {
			next.vs.release()
		}
		return err
	}
	x.mu.Lock()
	x.st, x.wal = next, w
	x.snapNodes = 0
	if next.graph != nil {
		x.snapNodes = next.graph.len()
	}
	x.mu.Unlock()
	if next != st {
		// Readers take x.st under mu: the ones that held st are done, and
		// the next ones find next.
		st.vs.release()
	}
	if err := old.f.Close(); err != nil {
		x.opts.Logger.Warn("close old vector log", "err", err)
	}
	seqs, err := logSeqs(x.dir)
	if err != nil {
		return fmt.Errorf("list vector logs: %w", err)
	}
	for _, s := range seqs {
		if s <= old.seq {
			if err := os.Remove(filepath.Join(x.dir, walName(s))); err != nil {
				return fmt.Errorf("remove old vector log: %w", err)
			}
		}
	}
	return syncDir(x.dir)
}

// ensureGraph builds the graph once st holds more live points than the
// exact threshold. It builds under the read lock (searches continue, exact)
// and installs under the write lock. Caller holds writeMu or is Open.
func (x *Index) ensureGraph(st *state) {
	x.mu.RLock()
	need := st.graph == nil && st.nLive > x.opts.ExactThreshold
	x.mu.RUnlock()
	if need {
		x.mu.RLock()
		g := x.buildGraph(st)
		x.mu.RUnlock()
		x.mu.Lock()
		st.graph = g
		x.mu.Unlock()
		return
	}
	x.mu.Lock()
	x.extendGraph(st)
	x.mu.Unlock()
}

func (x *Index) buildGraph(st *state) *hnsw {
	g := newHNSW(x.opts.M, x.opts.EfConstruction, graphSeed)
	visit := x.visits.Get().(*visitSet)
	defer x.visits.Put(visit)
	for slot := range len(st.meta) {
		g.add(&st.vs, int32(slot), visit)
	}
	return g
}

// extendGraph links the slots appended since the graph was last touched.
// Caller holds mu for writing.
func (x *Index) extendGraph(st *state) {
	if st.graph == nil {
		return
	}
	visit := x.visits.Get().(*visitSet)
	defer x.visits.Put(visit)
	for slot := st.graph.len(); slot < len(st.meta); slot++ {
		st.graph.add(&st.vs, int32(slot), visit)
	}
}
