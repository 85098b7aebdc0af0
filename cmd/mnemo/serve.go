package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/mnemo-dev/mnemo/policy"
	"github.com/mnemo-dev/mnemo/server"
	"github.com/mnemo-dev/mnemo/server/mcp"
)

// runServe serves the HTTP API until the context ends, then shuts down
// gracefully, letting in-flight requests finish.
func runServe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	a, _, err := openApp(ctx, "mnemo serve", args, stderr)
	if err != nil {
		return err
	}
	defer a.Close()
	if len(a.cfg.APIKeys) == 0 {
		return errors.New("no API keys configured: set MNEMO_API_KEYS=key:principal:roles:tenant (or api_keys in the config file)")
	}
	gin.SetMode(gin.ReleaseMode)
	srv, err := server.New(server.Options{
		Engine: a.engine, Keys: principals(a.cfg.APIKeys), Logger: a.log, MaxBodyBytes: a.cfg.MaxBodyBytes,
		RequestTimeout: a.cfg.RequestTimeout,
		Health:         map[string]server.HealthCheck{"graph": a.store.Health},
		PolicyLoader:   func() (*policy.Policy, error) { return loadPolicy(a.cfg) },
	})
	if err != nil {
		return err
	}
	m, err := mcp.New(mcp.Options{Engine: a.engine, Version: version, Logger: a.log})
	if err != nil {
		return err
	}
	srv.Mount("/mcp", m.Handler(srv))
	// Background jobs: the vector outbox drain and SIGHUP policy reload.
	// They stop with bg, before the stores close.
	bg, stopBG := context.WithCancel(ctx)
	var jobs sync.WaitGroup
	defer func() { stopBG(); jobs.Wait() }()
	jobs.Go(func() { _ = a.engine.RunOutbox(bg, 5*time.Second, 256) })
	jobs.Go(func() { reloadOnHangup(bg, a) })
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
	a.log.Info("mnemo serving", "addr", "http://"+ln.Addr().String(), "wiring", a.describe())
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	a.log.Info("shutting down")
	shutdown, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	if err := hs.Shutdown(shutdown); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
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
		}
	}
}
