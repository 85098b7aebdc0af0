package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/mnemo-dev/mnemo/policy"
	"github.com/mnemo-dev/mnemo/server"
	"github.com/mnemo-dev/mnemo/server/a2a"
	"github.com/mnemo-dev/mnemo/server/mcp"
)

// runServe serves the HTTP API until the context ends, then shuts down
// gracefully, letting in-flight requests finish. With --json it prints,
// once listening, one JSON document saying where ({"addr", "metrics_addr",
// "wiring"}): with --listen 127.0.0.1:0 a script learns its port.
func runServe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c := newCmdline("mnemo serve", "mnemo serve [flags]", stdout, stderr).withConfig()
	a, _, err := c.open(ctx, args, 0)
	if err != nil {
		return err
	}
	defer a.Close()
	stopTracing, tracing, err := startTracing(ctx)
	if err != nil {
		return err
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = stopTracing(sctx)
	}()
	if tracing {
		a.log.Info("tracing: exporting ingest and search spans over OTLP/HTTP")
	}
	if len(a.cfg.APIKeys) == 0 {
		return errors.New("no API keys configured: set MNEMO_API_KEYS=key:principal:roles:tenant (or api_keys in the config file)")
	}
	gin.SetMode(gin.ReleaseMode)
	srv, err := server.New(server.Options{
		Engine: a.engine, Keys: principals(a.cfg.APIKeys), Logger: a.log, MaxBodyBytes: a.cfg.MaxBodyBytes,
		RequestTimeout: a.cfg.RequestTimeout,
		Health:         map[string]server.HealthCheck{"graph": a.store.Health},
		PolicyLoader:   func() (*policy.Policy, error) { return loadPolicy(a.cfg) },
		Metrics:        a.metrics,
	})
	if err != nil {
		return err
	}
	m, err := mcp.New(mcp.Options{Engine: a.engine, Version: version, Logger: a.log})
	if err != nil {
		return err
	}
	srv.Mount("/mcp", m.Handler())
	ag, err := a2a.New(a2a.Options{Engine: a.engine, Version: version, Logger: a.log})
	if err != nil {
		return err
	}
	srv.Mount(a2a.Path, ag.Handler())
	srv.MountPublic("/.well-known/agent-card.json", ag.CardHandler())
	// Background jobs: the vector outbox drain, SIGHUP policy reload, and
	// following the reloads of other replicas of the store (the policy
	// mark, docs/scale.md). They stop with bg, before the stores close.
	bg, stopBG := context.WithCancel(ctx)
	var jobs sync.WaitGroup
	defer func() { stopBG(); jobs.Wait() }()
	jobs.Go(func() { _ = a.engine.RunOutbox(bg, 5*time.Second, 256) })
	jobs.Go(func() { reloadOnHangup(bg, a) })
	jobs.Go(func() {
		a.engine.FollowPolicy(bg, 5*time.Second, func() (*policy.Policy, error) { return loadPolicy(a.cfg) })
	})
	if w, ok := a.store.(interface{ WarmKeywordIndex(context.Context) error }); ok {
		jobs.Go(func() {
			start := time.Now()
			if err := w.WarmKeywordIndex(bg); err != nil {
				a.log.Warn("keyword index not warmed; the first keyword search builds it", "err", err)
				return
			}
			a.log.Info("keyword index ready", "took", time.Since(start).Round(time.Millisecond))
		})
	}
	ln, err := net.Listen("tcp", a.cfg.Listen)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	hs := server.NewHTTPServer(srv, server.Timeouts{
		ReadHeader: a.cfg.ReadHeaderTimeout, Read: a.cfg.ReadTimeout, Write: a.cfg.WriteTimeout, Idle: a.cfg.IdleTimeout,
	})
	ms, mln, err := metricsListener(a)
	if err != nil {
		ln.Close()
		return err
	}
	a.log.Info("mnemo serving", "addr", "http://"+ln.Addr().String(), "wiring", a.describe())
	if c.json {
		listening := map[string]string{"addr": "http://" + ln.Addr().String(), "wiring": a.describe()}
		if mln != nil {
			listening["metrics_addr"] = "http://" + mln.Addr().String()
		}
		if err := printJSON(stdout, listening); err != nil {
			ln.Close()
			if mln != nil {
				mln.Close()
			}
			return err
		}
	}
	errc := make(chan error, 2)
	go func() { errc <- hs.Serve(ln) }()
	servers := []*http.Server{hs}
	if ms != nil {
		a.log.Info("metrics serving", "addr", "http://"+mln.Addr().String()+"/metrics", "pprof", a.cfg.Pprof)
		go func() { errc <- ms.Serve(mln) }()
		servers = append(servers, ms)
	}
	var served error
	select {
	case served = <-errc:
	case <-ctx.Done():
	}
	a.log.Info("shutting down")
	shutdown, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	for _, s := range servers {
		if err := s.Shutdown(shutdown); err != nil {
			return fmt.Errorf("shutdown: %w", err)
		}
	}
	pending := len(servers)
	if served != nil {
		pending-- // it ended on its own
	}
	for range pending {
		if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
			return err
		}
	}
	if served != nil && !errors.Is(served, http.ErrServerClosed) {
		return served
	}
	return nil
}

// metricsListener opens the metrics listener when --metrics-addr is set:
// /metrics without an API key, and /debug/pprof with --pprof. Both are
// for a private network; the API listener never serves pprof.
func metricsListener(a *app) (*http.Server, net.Listener, error) {
	if a.cfg.MetricsAddr == "" {
		return nil, nil, nil
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", a.metrics.Handler())
	if a.cfg.Pprof {
		mux.HandleFunc("/debug/pprof/", pprof.Index)
		mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
		mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
		mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
		mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	}
	ln, err := net.Listen("tcp", a.cfg.MetricsAddr)
	if err != nil {
		return nil, nil, fmt.Errorf("listen for metrics: %w", err)
	}
	// A CPU profile or trace runs for its ?seconds= (30 s by default): the
	// write timeout leaves room for it.
	return server.NewHTTPServer(mux, server.Timeouts{Write: 120 * time.Second}), ln, nil
}

// reloadOnHangup reloads the policy file on SIGHUP until ctx ends. A bad
// file is logged with its file:line errors and the running policy stays.
func reloadOnHangup(ctx context.Context, a *app) {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	for {
		select {
		case <-ctx.Done():
			return
		case <-hup:
			if err := a.policy.Reload(func() (*policy.Policy, error) { return loadPolicy(a.cfg) }); err != nil {
				a.log.Error("policy reload refused; the running policy stays", "err", err)
				continue
			}
			a.log.Info("policy reloaded", "policy", a.policy.Current().Name())
			a.engine.CheckCalibration()
		}
	}
}
