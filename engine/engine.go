package engine

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/mnemo-dev/mnemo/graph"
	"github.com/mnemo-dev/mnemo/graph/bm25"
	"github.com/mnemo-dev/mnemo/policy"
	"github.com/mnemo-dev/mnemo/vector"
)

// Embedder turns texts into vectors. vector/embed's ONNX embedder
// implements it.
type Embedder interface {
	Embed(ctx context.Context, texts []string) ([][]float32, error)
	Dimensions() int
	ModelID() string
}

// Permission names the engine checks against the policy's roles.
const (
	PermRead            = "read"
	PermWrite           = "write"
	PermApprove         = "approve"
	PermReadQuarantined = "read_quarantined"
	PermAdmin           = "admin"
)

// Options wires an Engine. Store and Policy are required. Index and
// Embedder are optional together: without both, vector rerank and vector
// fallback are off and search uses graph + keyword. A nil Logger discards,
// a nil Now uses time.Now.
type Options struct {
	Store    graph.Store
	Index    vector.Index
	Embedder Embedder
	Policy   *policy.Holder
	Logger   *slog.Logger
	Now      func() time.Time
	// VectorsOff says no process of this deployment keeps a vector index
	// (configuration `vector: off`), so writes enqueue no vector-index
	// work. Otherwise every write enqueues its outbox item in its graph
	// transaction, whether or not this engine holds the index (a command
	// run beside the server that holds it has none), and the engine that
	// holds the index drains the outbox. It cannot be set with Index.
	VectorsOff bool
	// Outbox tunes the retries of failed vector-index writes.
	Outbox OutboxOptions
	// Observer, when set, is told of every ingest, search and embedder
	// call (metrics); nil tells no one.
	Observer Observer
}

// Engine runs mnemo's use cases. It is safe for concurrent use and holds no
// state of its own beyond its wiring: every piece of state lives in the
// stores, so several replicas can serve one graph.
type Engine struct {
	store    graph.Store
	caps     capabilities // the store's optional interfaces, see capabilities.go
	index    vector.Index // nil when vectors are off
	embedder Embedder     // nil when vectors are off
	policy   *policy.Holder
	log      *slog.Logger
	now      func() time.Time
	enqueue  bool          // writes enqueue vector-index outbox items
	outbox   OutboxOptions // retries of failed outbox deliveries
	xc       extractors    // write-path extractor cache, see ingest_extract.go
	stmts    statements    // stored versions' statements, see ingest_statements.go
	keys     keyLocks      // per-key write serialisation, see ingest_lock.go
	stems    bm25.Stems    // stems of the results' words, for relevance's coverage
	obs      Observer      // nil: no one is told, see observe.go
}

// New builds an Engine from its options.
func New(o Options) (*Engine, error) {
	if o.Store == nil {
		return nil, errors.New("engine: a graph store is required")
	}
	if o.Policy == nil {
		return nil, errors.New("engine: a policy is required")
	}
	if (o.Index == nil) != (o.Embedder == nil) {
		return nil, errors.New("engine: a vector index and an embedder go together")
	}
	if o.VectorsOff && o.Index != nil {
		return nil, errors.New("engine: vectors are off, yet a vector index is given")
	}
	if o.Index != nil && o.Index.Dimensions() != o.Embedder.Dimensions() {
		return nil, errors.New("engine: the vector index and the embedder disagree on dimensions")
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Observer != nil && o.Embedder != nil {
		o.Embedder = observedEmbedder{Embedder: o.Embedder, obs: o.Observer}
	}
	e := &Engine{
		store: o.Store, caps: capabilitiesOf(o.Store), index: o.Index, embedder: o.Embedder, policy: o.Policy,
		log: o.Logger, now: o.Now, enqueue: !o.VectorsOff, outbox: o.Outbox.withDefaults(), obs: o.Observer,
	}
	e.CheckCalibration()
	return e, nil
}

// calibratedModel is the embedding model the policy's default relevance
// calibration was fitted on (policy.DefaultCosineMid, DefaultCosineWidth).
const calibratedModel = "BAAI/bge-small-en-v1.5"

// CheckCalibration logs a warning when the embedder is not the model the
// default relevance calibration was fitted on and the running policy keeps
// that calibration: abstention and the vector floor judge cosines on its
// scale, and another model's run higher or lower (docs/policy.md). New runs
// it, and so does every reload through the engine; a caller that reloads
// the policy holder itself (mnemo serve on SIGHUP) calls it after.
func (e *Engine) CheckCalibration() {
	if e.embedder == nil || e.policy == nil {
		return
	}
	model := e.embedder.ModelID()
	rel := e.policy.Current().Retrieval.Relevance
	if strings.HasPrefix(model, calibratedModel) || rel.CosineMid != policy.DefaultCosineMid || rel.CosineWidth != policy.DefaultCosineWidth {
		return
	}
	e.log.Warn("the policy's relevance calibration is the default, fitted on "+calibratedModel+
		"; calibrate retrieval.relevance for this model (mnemo bench abstain -policy FILE): abstention and the vector floor judge cosines on that model's scale",
		"model", model, "cosine_mid", rel.CosineMid, "cosine_width", rel.CosineWidth)
}

// vectorsOn reports whether vector rerank and fallback are available.
func (e *Engine) vectorsOn() bool { return e.index != nil }
