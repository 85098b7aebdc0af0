package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/mnemo-dev/mnemo/config"
	"github.com/mnemo-dev/mnemo/engine"
	"github.com/mnemo-dev/mnemo/graph"
	"github.com/mnemo-dev/mnemo/graph/neo4j"
	"github.com/mnemo-dev/mnemo/graph/sqlite"
	"github.com/mnemo-dev/mnemo/policy"
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
// place a graph backend is chosen.
func openStore(ctx context.Context, c config.Config) (graph.Store, error) {
	switch c.Store {
	case "neo4j":
		return neo4j.Open(ctx, neo4j.Config{
			URI: c.Neo4j.URI, Username: c.Neo4j.Username, Password: c.Neo4j.Password, Database: c.Neo4j.Database,
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
			ID: k.Principal, Roles: k.Roles,
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
}

// openApp loads configuration and wires stores, policy and engine.
func openApp(ctx context.Context, name string, args []string, stderr io.Writer) (*app, []string, error) {
	cfg, rest, err := config.Load(name, args, os.Getenv)
	if err != nil {
		return nil, nil, err
	}
	log := newLogger(cfg, stderr)
	pol, err := loadPolicy(cfg)
	if err != nil {
		return nil, nil, err
	}
	holder, err := policy.NewHolder(pol)
	if err != nil {
		return nil, nil, err
	}
	store, err := openStore(ctx, cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("open %s store: %w", cfg.Store, err)
	}
	eng, err := engine.New(engine.Options{Store: store, Policy: holder, Logger: log})
	if err != nil {
		store.Close()
		return nil, nil, err
	}
	return &app{cfg: cfg, log: log, store: store, policy: holder, engine: eng}, rest, nil
}

func (a *app) Close() error { return a.store.Close() }

// describe is a one-line summary of the wiring for the start-up log.
func (a *app) describe() string {
	where := a.cfg.DataDir
	if a.cfg.Store == "neo4j" {
		where = a.cfg.Neo4j.URI
	}
	return strings.Join([]string{"store=" + a.cfg.Store, "at=" + where, "policy=" + a.policy.Current().Name()}, " ")
}
