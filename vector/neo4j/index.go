package neo4j

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"strings"
	"sync/atomic"
	"time"

	neo4jdrv "github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/mnemo-dev/mnemo/vector"
)

// DefaultLabel is the label of point nodes when Config.Label is empty.
const DefaultLabel = "MnemoVector"

// Defaults of the search strategy (see the package comment).
const (
	DefaultExactThreshold = 256
	DefaultOverfetch      = 10
	minFetch              = 100
	// maxFetch caps the candidates asked of the vector index when a
	// selective filter leaves too few (the widened retry).
	maxFetch = 4096
)

// Config locates the server and says how the index lives in it.
type Config struct {
	// URI is the Bolt or Neo4j URI, e.g. bolt://127.0.0.1:7687. Required.
	URI string
	// Username and Password authenticate with basic auth; an empty Username
	// connects without authentication.
	Username string
	Password string
	// Database is the database name; empty means the server's default.
	Database string
	// Dimensions is the vector length; required. An existing vector index
	// with other dimensions is refused.
	Dimensions int
	// Label is the label of point nodes, a Cypher identifier (letters,
	// digits, underscore); empty means DefaultLabel. Schema names derive
	// from it, so two labels are two independent indexes.
	Label string
	// ExactThreshold is the tenant size up to which Search scans exactly;
	// 0 means DefaultExactThreshold, negative means never (always the
	// vector index first).
	ExactThreshold int
	// Overfetch multiplies k for the vector index's candidates before the
	// filter; 0 means DefaultOverfetch.
	Overfetch int
	// WarmUp bounds the warm-up Open starts in the background (Warm: it
	// plans the search statements, so the first search after a restart
	// does not); zero means DefaultWarmUp, a negative value none.
	WarmUp time.Duration
	// Logger receives the warm-up's outcome; nil means slog.Default().
	Logger *slog.Logger
}

// Index is a vector.Index on Neo4j. Safe for concurrent use.
type Index struct {
	driver neo4jdrv.DriverWithContext
	cfg    Config
	names  schemaNames
	q      queries
	closed atomic.Bool
	log    *slog.Logger

	warmStop context.CancelFunc // cancels the background warm-up; nil if none
	warmDone chan struct{}      // closed when it has ended
}

var _ vector.Index = (*Index)(nil)

var identifier = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_]*$`)

// Open connects, creates the schema when missing (waiting for the vector
// index to come online) and checks the dimensions of an existing index.
func Open(ctx context.Context, cfg Config) (*Index, error) {
	if cfg.URI == "" {
		return nil, fmt.Errorf("%w: neo4j vector config: uri required", vector.ErrInvalid)
	}
	if cfg.Dimensions <= 0 {
		return nil, fmt.Errorf("%w: neo4j vector config: dimensions must be positive", vector.ErrInvalid)
	}
	if cfg.Label == "" {
		cfg.Label = DefaultLabel
	}
	if !identifier.MatchString(cfg.Label) {
		return nil, fmt.Errorf("%w: neo4j vector config: label %q is not an identifier", vector.ErrInvalid, cfg.Label)
	}
	if cfg.ExactThreshold == 0 {
		cfg.ExactThreshold = DefaultExactThreshold
	}
	if cfg.Overfetch <= 0 {
		cfg.Overfetch = DefaultOverfetch
	}
	auth := neo4jdrv.NoAuth()
	if cfg.Username != "" {
		auth = neo4jdrv.BasicAuth(cfg.Username, cfg.Password, "")
	}
	driver, err := neo4jdrv.NewDriverWithContext(cfg.URI, auth)
	if err != nil {
		return nil, fmt.Errorf("neo4j vector: open %s: %w", cfg.URI, err)
	}
	x := &Index{driver: driver, cfg: cfg, names: namesFor(cfg.Label), q: queriesFor(cfg.Label), log: cfg.Logger}
	if x.log == nil {
		x.log = slog.Default()
	}
	if err := driver.VerifyConnectivity(ctx); err != nil {
		_ = driver.Close(ctx)
		return nil, fmt.Errorf("neo4j vector: connect %s: %w", cfg.URI, err)
	}
	if err := x.ensureSchema(ctx); err != nil {
		_ = driver.Close(ctx)
		return nil, err
	}
	switch {
	case cfg.WarmUp == 0:
		x.warmInBackground(DefaultWarmUp)
	case cfg.WarmUp > 0:
		x.warmInBackground(cfg.WarmUp)
	}
	return x, nil
}

// Dimensions implements vector.Index.
func (x *Index) Dimensions() int { return x.cfg.Dimensions }

// Close implements vector.Index: it closes the driver; later calls fail
// with vector.ErrClosed; closing twice is harmless.
func (x *Index) Close() error {
	if x.closed.Swap(true) {
		return nil
	}
	if x.warmStop != nil {
		x.warmStop()
		<-x.warmDone
	}
	return x.driver.Close(context.Background())
}

// begin is the check every call makes first: a cancelled context, then a
// closed index.
func (x *Index) begin(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if x.closed.Load() {
		return vector.ErrClosed
	}
	return nil
}

// fail reports a failed query: ctx.Err() when the context ended (the
// driver does not always wrap it), ErrClosed when the index was closed
// meanwhile, else the error with what was being done.
func (x *Index) fail(ctx context.Context, err error, what string) error {
	if ctxErr := ctx.Err(); ctxErr != nil {
		return ctxErr
	}
	if x.closed.Load() {
		return vector.ErrClosed
	}
	return fmt.Errorf("neo4j vector: %s: %w", what, err)
}

func (x *Index) session(ctx context.Context, mode neo4jdrv.AccessMode) neo4jdrv.SessionWithContext {
	return x.driver.NewSession(ctx, neo4jdrv.SessionConfig{DatabaseName: x.cfg.Database, AccessMode: mode})
}

// read runs a query in a managed read transaction and returns its records.
func (x *Index) read(ctx context.Context, cypher string, params map[string]any) ([]*neo4jdrv.Record, error) {
	sess := x.session(ctx, neo4jdrv.AccessModeRead)
	defer sess.Close(ctx)
	return neo4jdrv.ExecuteRead(ctx, sess, func(tx neo4jdrv.ManagedTransaction) ([]*neo4jdrv.Record, error) {
		res, err := tx.Run(ctx, cypher, params)
		if err != nil {
			return nil, err
		}
		return res.Collect(ctx)
	})
}

// write runs a query in a managed write transaction; it is durable when
// write returns nil.
func (x *Index) write(ctx context.Context, cypher string, params map[string]any) error {
	sess := x.session(ctx, neo4jdrv.AccessModeWrite)
	defer sess.Close(ctx)
	_, err := neo4jdrv.ExecuteWrite(ctx, sess, func(tx neo4jdrv.ManagedTransaction) (struct{}, error) {
		res, err := tx.Run(ctx, cypher, params)
		if err != nil {
			return struct{}{}, err
		}
		_, err = res.Consume(ctx)
		return struct{}{}, err
	})
	return err
}

// Upsert implements vector.Index: the batch is validated whole, then
// written in one transaction.
func (x *Index) Upsert(ctx context.Context, pts []vector.Point) error {
	if err := x.begin(ctx); err != nil {
		return err
	}
	if err := vector.ValidateBatch(pts, x.cfg.Dimensions); err != nil {
		return err
	}
	if len(pts) == 0 {
		return nil
	}
	rows := make([]map[string]any, len(pts))
	for i, p := range pts {
		rows[i] = toRow(p)
	}
	if err := x.write(ctx, x.q.upsert, map[string]any{"rows": rows}); err != nil {
		return x.fail(ctx, err, fmt.Sprintf("upsert %d points", len(pts)))
	}
	return nil
}

// Delete implements vector.Index.
func (x *Index) Delete(ctx context.Context, ids []string) error {
	if err := x.begin(ctx); err != nil {
		return err
	}
	for _, id := range ids {
		if id == "" {
			return fmt.Errorf("%w: delete: empty id", vector.ErrInvalid)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	if err := x.write(ctx, x.q.delete, map[string]any{"ids": ids}); err != nil {
		return x.fail(ctx, err, fmt.Sprintf("delete %d points", len(ids)))
	}
	return nil
}

// Search implements vector.Index (exact or approximate: see the package
// comment).
func (x *Index) Search(ctx context.Context, query []float32, f vector.Filter, k int) ([]vector.Hit, error) {
	if k <= 0 {
		return nil, fmt.Errorf("%w: search: k must be positive, got %d", vector.ErrInvalid, k)
	}
	params, err := x.queryParams(ctx, query, f)
	if err != nil {
		return nil, err
	}
	fetch := x.searchParams(params, k)
	hits, err := x.hits(ctx, x.q.approximate, params, "search")
	if err != nil || len(hits) == k {
		return hits, err
	}
	if n := len(hits); n > 0 && fetch < maxFetch {
		// A large tenant and a selective filter: about n of fetch
		// candidates pass it, so ask for enough to expect 2k allowed.
		params["fetch"] = min(fetch*((2*k+n-1)/n), maxFetch)
		if hits, err = x.hits(ctx, x.q.approximate, params, "search"); err != nil || len(hits) == k {
			return hits, err
		}
	}
	// A tenant under the threshold (no rows), or still fewer than k
	// allowed among the index's candidates: the exact scan never returns
	// fewer than the filter allows.
	return x.hits(ctx, x.q.exact, params, "exact search")
}

// searchParams adds Search's own parameters to params and returns the
// number of candidates asked of the vector index first.
func (x *Index) searchParams(params map[string]any, k int) int {
	fetch := max(k*x.cfg.Overfetch, minFetch)
	params["k"] = k
	params["exact"] = x.cfg.ExactThreshold
	params["index"] = x.names.vector
	params["fetch"] = fetch
	return fetch
}

// Score implements vector.Index.
func (x *Index) Score(ctx context.Context, query []float32, f vector.Filter, ids []string) ([]vector.Hit, error) {
	params, err := x.queryParams(ctx, query, f)
	if err != nil {
		return nil, err
	}
	if len(ids) == 0 {
		return []vector.Hit{}, nil
	}
	seen := make(map[string]bool, len(ids))
	unique := make([]string, 0, len(ids))
	for _, id := range ids {
		if !seen[id] {
			seen[id] = true
			unique = append(unique, id)
		}
	}
	params["ids"] = unique
	return x.hits(ctx, x.q.score, params, "score")
}

// Count implements vector.Index.
func (x *Index) Count(ctx context.Context, f vector.Filter) (int, error) {
	params, err := x.filterParams(ctx, f)
	if err != nil {
		return 0, err
	}
	recs, err := x.read(ctx, x.q.count, params)
	if err != nil {
		return 0, x.fail(ctx, err, "count")
	}
	n, _ := recs[0].Values[0].(int64)
	return int(n), nil
}

// Scan implements vector.Index: one auto-commit query whose records are
// pulled in batches as fn consumes them.
func (x *Index) Scan(ctx context.Context, f vector.Filter, fn func(vector.Payload) error) error {
	params, err := x.filterParams(ctx, f)
	if err != nil {
		return err
	}
	sess := x.session(ctx, neo4jdrv.AccessModeRead)
	defer sess.Close(ctx)
	res, err := sess.Run(ctx, x.q.scan, params)
	if err != nil {
		return x.fail(ctx, err, "scan")
	}
	for res.Next(ctx) {
		if err := ctx.Err(); err != nil {
			return err
		}
		p, err := fromProps(res.Record().Values[0])
		if err != nil {
			return err
		}
		if err := fn(p); err != nil {
			return err
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := res.Err(); err != nil {
		return x.fail(ctx, err, "scan")
	}
	return nil
}

// hits runs a query returning (props, score) rows and converts them.
func (x *Index) hits(ctx context.Context, cypher string, params map[string]any, what string) ([]vector.Hit, error) {
	recs, err := x.read(ctx, cypher, params)
	if err != nil {
		return nil, x.fail(ctx, err, what)
	}
	hits := make([]vector.Hit, 0, len(recs))
	for _, r := range recs {
		p, err := fromProps(r.Values[0])
		if err != nil {
			return nil, err
		}
		s, _ := r.Values[1].(float64)
		hits = append(hits, vector.Hit{ID: p.MemoryID, Score: float32(2*s - 1), Payload: p})
	}
	vector.SortHits(hits)
	return hits, nil
}

// queryParams checks a query vector and a filter and returns the
// parameters of a scoring query.
func (x *Index) queryParams(ctx context.Context, query []float32, f vector.Filter) (map[string]any, error) {
	params, err := x.filterParams(ctx, f)
	if err != nil {
		return nil, err
	}
	if err := vector.CheckVector(query, x.cfg.Dimensions); err != nil {
		return nil, fmt.Errorf("query: %w", err)
	}
	params["q"] = float64s(vector.Normalize(query))
	return params, nil
}

// filterParams checks the call can go ahead and returns the filter's
// parameters.
func (x *Index) filterParams(ctx context.Context, f vector.Filter) (map[string]any, error) {
	if err := x.begin(ctx); err != nil {
		return nil, err
	}
	if err := f.Validate(); err != nil {
		return nil, err
	}
	return filterParams(f), nil
}

// ErrSchema reports an existing schema this index cannot use (a vector
// index of other dimensions or similarity).
var ErrSchema = errors.New("neo4j vector: incompatible schema")

func float64s(v []float32) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = float64(x)
	}
	return out
}

// quote returns s as a backquoted Cypher identifier (s is checked against
// identifier first, so this only guards against misuse).
func quote(s string) string { return "`" + strings.ReplaceAll(s, "`", "``") + "`" }
