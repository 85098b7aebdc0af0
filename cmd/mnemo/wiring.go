package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/mnemo-dev/mnemo/config"
	"github.com/mnemo-dev/mnemo/engine"
	"github.com/mnemo-dev/mnemo/graph"
	"github.com/mnemo-dev/mnemo/graph/neo4j"
	"github.com/mnemo-dev/mnemo/graph/sqlite"
	"github.com/mnemo-dev/mnemo/policy"
	servermetrics "github.com/mnemo-dev/mnemo/server/metrics"
	"github.com/mnemo-dev/mnemo/vector"
	"github.com/mnemo-dev/mnemo/vector/embed"
	"github.com/mnemo-dev/mnemo/vector/local"
	vecneo4j "github.com/mnemo-dev/mnemo/vector/neo4j"
	"github.com/mnemo-dev/mnemo/vector/qdrant"
)

// newLogger builds the one structured logger the process passes around.
func newLogger(c config.Config, w io.Writer) *slog.Logger {
	var level slog.Level
	_ = level.UnmarshalText([]byte(c.LogLevel)) // validated by config
	opts := &slog.HandlerOptions{Level: level}
	if c.LogFormat == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

// openStore opens the configured graph backend. This switch is the one
// place a graph backend is chosen. A server (serve) warms Neo4j's plan
// cache in the background; a one-shot command does not wait for it, so it
// does not start it.
func openStore(ctx context.Context, c config.Config, log *slog.Logger, serve bool) (graph.Store, error) {
	switch c.Store {
	case "neo4j":
		warm := time.Duration(-1)
		if serve {
			warm = 0 // neo4j.DefaultWarmUp
		}
		return neo4j.Open(ctx, neo4j.Config{
			URI: c.Neo4j.URI, Username: c.Neo4j.Username, Password: c.Neo4j.Password, Database: c.Neo4j.Database,
			WarmUp: warm, Logger: log, IndexMemories: int(c.Neo4j.IndexMemories),
		})
	case "sqlite":
		if err := os.MkdirAll(c.DataDir, 0o750); err != nil {
			return nil, fmt.Errorf("data directory: %w", err)
		}
		return sqlite.Open(ctx, filepath.Join(c.DataDir, "graph"), sqlite.Options{})
	}
	return nil, fmt.Errorf("unknown store %q", c.Store)
}

// loadPolicy reads the policy file, or the embedded default when none is
// configured.
func loadPolicy(c config.Config) (*policy.Policy, error) {
	if c.PolicyFile != "" {
		return policy.LoadFile(c.PolicyFile)
	}
	return policy.Parse("default_policy.yaml", config.DefaultPolicy())
}

// principals turns the configured API keys into the server's key map.
func principals(keys []config.APIKey) map[string]graph.Principal {
	out := make(map[string]graph.Principal, len(keys))
	for _, k := range keys {
		out[k.Key] = graph.Principal{
			ID: k.Principal, UserID: k.User, Roles: k.Roles,
			Scope: graph.Scope{TenantID: k.Tenant, OrgID: k.Org, RepoID: k.Repo},
		}
	}
	return out
}

// app is everything a command needs, opened once and closed once.
type app struct {
	cfg    config.Config
	log    *slog.Logger
	store  graph.Store
	policy *policy.Holder
	engine *engine.Engine

	index    vector.Index           // nil when vectors are off
	embedder *embed.ONNX            // nil when vectors are off
	metrics  *servermetrics.Metrics // set for mnemo serve only
}

// openApp wires stores, policy and engine on cfg for the command name.
func openApp(ctx context.Context, name string, cfg config.Config, stderr io.Writer) (*app, error) {
	log := newLogger(cfg, stderr)
	pol, err := loadPolicy(cfg)
	if err != nil {
		return nil, err
	}
	holder, err := policy.NewHolder(pol)
	if err != nil {
		return nil, err
	}
	store, err := openStore(ctx, cfg, log, name == "mnemo serve")
	if err != nil {
		return nil, fmt.Errorf("open %s store: %w", cfg.Store, err)
	}
	a := &app{cfg: cfg, log: log, store: store, policy: holder}
	if err := a.openVectors(ctx, name == "mnemo serve", name == "mnemo reindex"); err != nil {
		a.Close()
		return nil, err
	}
	opts := engine.Options{Store: store, Policy: holder, Logger: log,
		VectorsOff: cfg.Vector.Backend == "off", Outbox: engine.OutboxOptions{MaxAttempts: int(cfg.OutboxMaxAttempts)}}
	if a.index != nil {
		opts.Index, opts.Embedder = a.index, a.embedder
	}
	if name == "mnemo serve" {
		a.metrics = servermetrics.New(servermetrics.Options{Stats: func(ctx context.Context) (engine.Stats, error) { return a.engine.Stats(ctx) }})
		opts.Observer = a.metrics
	}
	if a.engine, err = engine.New(opts); err != nil {
		a.Close()
		return nil, err
	}
	return a, nil
}

// openVectors opens the embedder and the configured vector index. A missing
// model is not an error: mnemo runs on graph + keyword and says once, in
// one line, how to turn vectors on. This switch is the one place a vector
// backend is chosen.
// Only the server insists on its index: a command run beside a running
// server (whose embedded index is locked to it) goes on without vectors;
// its writes enqueue their vector-index items all the same (only `vector:
// off` stops that), and the server drains them.
// An embedded index written by another model than the embedder's is refused
// (checkVectorModel), and so is an index in an older format
// (vector.ErrOldFormat: points without the access fields), except by `mnemo
// reindex`, which rebuilds it (an old-format index is emptied first).
func (a *app) openVectors(ctx context.Context, required, reindexing bool) error {
	if a.cfg.Vector.Backend == "off" {
		a.log.Info("vector rerank is off (--vector off)")
		return nil
	}
	emb, err := embed.OpenONNX(embed.Config{LibraryPath: a.cfg.Embed.ORTLib, ModelDir: a.cfg.Embed.ModelDir})
	if err != nil {
		a.log.Warn("vector rerank is off: no embedding model; run `make model` (or set MNEMO_ORT_LIB and MNEMO_MODEL_DIR)", "err", err)
		return nil
	}
	var idx vector.Index
	switch a.cfg.Vector.Backend {
	case "qdrant":
		idx, err = qdrant.Open(ctx, qdrant.Config{URL: a.cfg.Vector.QdrantURL, Dimensions: emb.Dimensions(), DiscardOldFormat: reindexing})
		err = explainVectorFormat(err, "the Qdrant collection")
	case "neo4j":
		n := a.cfg.Neo4j
		warm := time.Duration(-1) // a server warms the search statements; a command does not wait for it
		if required {
			warm = 0 // vecneo4j.DefaultWarmUp
		}
		idx, err = vecneo4j.Open(ctx, vecneo4j.Config{URI: n.URI, Username: n.Username, Password: n.Password, Database: n.Database,
			Dimensions: emb.Dimensions(), WarmUp: warm, Logger: a.log})
	default:
		var li *local.Index
		dir := filepath.Join(a.cfg.DataDir, "vectors")
		li, err = local.Open(dir, local.Options{Dimensions: emb.Dimensions(), Logger: a.log, DiscardOldFormat: reindexing})
		err = explainVectorFormat(err, dir)
		if err == nil {
			idx = li
			if err = checkVectorModel(a.cfg.DataDir, li, emb.ModelID(), reindexing); err != nil {
				li.Close()
				emb.Close()
				return err
			}
		}
	}
	if err != nil {
		emb.Close()
		if !required {
			a.log.Warn("vectors are off for this command; the outbox keeps vector writes for the server", "err", err)
			return nil
		}
		return fmt.Errorf("open %s vector index: %w", a.cfg.Vector.Backend, err)
	}
	a.embedder, a.index = emb, idx
	return nil
}

// Close releases everything openApp opened.
func (a *app) Close() error {
	err := a.store.Close()
	if a.index != nil {
		err = errors.Join(err, a.index.Close(), a.embedder.Close())
	}
	return err
}

// describe is a one-line summary of the wiring for the start-up log.
func (a *app) describe() string {
	where := a.cfg.DataDir
	if a.cfg.Store == "neo4j" {
		where = a.cfg.Neo4j.URI
	}
	vectors := "off"
	if a.index != nil {
		vectors = a.cfg.Vector.Backend + "/" + a.embedder.ModelID()
	}
	return strings.Join([]string{"store=" + a.cfg.Store, "at=" + where, "vectors=" + vectors, "policy=" + a.policy.Current().Name()}, " ")
}
