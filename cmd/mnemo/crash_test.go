package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The kill -9 harness (`make crash`). TestCrash builds the binary, serves
// the embedded default (SQLite graph store, embedded vector index, the real
// model) from a fresh data directory, and for each round runs concurrent
// single and batch writers over HTTP, kills the server with SIGKILL at a
// random moment, restarts it and checks that every write it acknowledged
// is readable (GET) and searchable (keyword search by the write's unique
// token). After the last round it waits for the outbox to drain and
// requires `mnemo doctor` to find the graph and the vector index in
// agreement.
//
// It runs only when MNEMO_CRASH_ROUNDS is set (the number of kills);
// MNEMO_CRASH_WRITERS ("singles,batches", default "2,1") and
// MNEMO_CRASH_BATCH (items per batch, default 4) size the load, and
// MNEMO_CRASH_MAX_DELAY (a duration, default 3s) bounds how long after a
// round's first acknowledged write the kill comes.
const (
	crashRoundsEnv  = "MNEMO_CRASH_ROUNDS"
	crashWritersEnv = "MNEMO_CRASH_WRITERS"
	crashBatchEnv   = "MNEMO_CRASH_BATCH"
	crashDelayEnv   = "MNEMO_CRASH_MAX_DELAY"
	crashKey        = "crash-key-0001"
	crashTenant     = "crash"
)

// crashAck is a write the server acknowledged.
type crashAck struct {
	id, token string
	batch     bool
}

func TestCrash(t *testing.T) {
	rounds, _ := strconv.Atoi(os.Getenv(crashRoundsEnv))
	if rounds <= 0 {
		t.Skipf("set %s to the number of kills to run the kill -9 harness (make crash)", crashRoundsEnv)
	}
	requireModel(t)
	singles, batches := 2, 1
	if w := os.Getenv(crashWritersEnv); w != "" {
		_, err := fmt.Sscanf(w, "%d,%d", &singles, &batches)
		require.NoError(t, err, "%s=%q: want singles,batches", crashWritersEnv, w)
	}
	batchSize := 4
	if b := os.Getenv(crashBatchEnv); b != "" {
		var err error
		batchSize, err = strconv.Atoi(b)
		require.NoError(t, err)
	}

	maxDelay := 3 * time.Second
	if d := os.Getenv(crashDelayEnv); d != "" {
		var err error
		maxDelay, err = time.ParseDuration(d)
		require.NoError(t, err)
		require.Positive(t, maxDelay)
	}

	work := t.TempDir()
	bin := filepath.Join(work, "mnemo")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Stderr = os.Stderr
	require.NoError(t, build.Run(), "build mnemo")
	h := &crashHarness{t: t, bin: bin, data: filepath.Join(work, "data"), log: filepath.Join(work, "serve.log"),
		client: &http.Client{Timeout: 30 * time.Second}, maxDelay: maxDelay}
	t.Cleanup(h.stop)

	start := time.Now()
	var (
		all       []crashAck
		attempted int
	)
	for round := 1; round <= rounds; round++ {
		h.start()
		if round > 1 {
			// The acknowledged writes of the previous round, after the
			// kill and a restart.
			h.verify(all[len(all)-h.lastRound:])
		}
		acks, tried := h.writeUntilKilled(round, singles, batches, batchSize)
		all, attempted = append(all, acks...), attempted+tried
		h.lastRound = len(acks)
		t.Logf("round %d: %d writes acknowledged of %d tried, then kill -9", round, len(acks), tried)
	}
	h.start()
	h.verify(all) // every acknowledged write of every round
	h.waitOutboxEmpty()
	h.stopGracefully()
	out, err := h.cli("doctor", "--tenant", crashTenant)
	require.NoError(t, err, "mnemo doctor after the outbox drained:\n%s", out)
	var batched int
	for _, a := range all {
		if a.batch {
			batched++
		}
	}
	t.Logf("crash: %d kills, %d writes acknowledged (%d single, %d in batches) of %d tried; all readable and searchable; doctor: %s; took %s",
		rounds, len(all), len(all)-batched, batched, attempted, strings.TrimSpace(strings.SplitN(out, "\n", 2)[0]),
		time.Since(start).Round(time.Second))
}

// requireModel skips (or fails, with MNEMO_REQUIRE_MODEL=1) without the
// embedding model (MNEMO_ORT_LIB and MNEMO_MODEL_DIR).
func requireModel(t *testing.T) {
	t.Helper()
	for _, env := range []string{"MNEMO_ORT_LIB", "MNEMO_MODEL_DIR"} {
		if p := os.Getenv(env); p == "" || !exists(p) {
			msg := fmt.Sprintf("this test needs the embedding model: %s=%q (make model)", env, p)
			if os.Getenv("MNEMO_REQUIRE_MODEL") == "1" {
				t.Fatal(msg)
			}
			t.Skip(msg)
		}
	}
}

// requireLong skips a test that builds and runs the binary under -short,
// and fails instead when CI or MNEMO_REQUIRE_BINARY=1 is set (.ci/run sets
// both), so CI cannot skip it without saying so.
func requireLong(t *testing.T) {
	t.Helper()
	if !testing.Short() {
		return
	}
	if os.Getenv("CI") != "" || os.Getenv("MNEMO_REQUIRE_BINARY") == "1" {
		t.Fatalf("%s builds and runs the binary and must run here: drop -short", t.Name())
	}
	t.Skip("builds the binary (-short)")
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// crashHarness runs and kills one `mnemo serve` at a time.
type crashHarness struct {
	t         *testing.T
	bin       string
	data      string
	log       string
	client    *http.Client
	base      string
	serve     *exec.Cmd
	lastRound int
	maxDelay  time.Duration // the kill comes up to this long after the first acknowledged write
}

func (h *crashHarness) env() []string {
	return append(os.Environ(), "MNEMO_API_KEYS="+crashKey+":crasher:writer|reader|admin:"+crashTenant,
		"MNEMO_DATA_DIR="+h.data, "MNEMO_LOG_LEVEL=warn")
}

// start serves on a free port and waits until /healthz answers 200.
func (h *crashHarness) start() {
	t := h.t
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	logf, err := os.OpenFile(h.log, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	require.NoError(t, err)
	defer logf.Close()
	h.serve = exec.Command(h.bin, "serve", "--listen", addr)
	h.serve.Env, h.serve.Stdout, h.serve.Stderr = h.env(), logf, logf
	require.NoError(t, h.serve.Start())
	h.base = "http://" + addr
	deadline := time.Now().Add(2 * time.Minute)
	for {
		resp, err := h.client.Get(h.base + "/healthz")
		if err == nil {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("healthz after restart: %d %s", resp.StatusCode, body)
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("mnemo serve did not come up (log %s): %v", h.log, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// kill sends SIGKILL and reaps the process.
func (h *crashHarness) kill() {
	if h.serve == nil {
		return
	}
	_ = h.serve.Process.Kill()
	_ = h.serve.Wait()
	h.serve = nil
}

// stopGracefully sends SIGTERM and waits for the exit.
func (h *crashHarness) stopGracefully() {
	require.NoError(h.t, h.serve.Process.Signal(syscall.SIGTERM))
	require.NoError(h.t, h.serve.Wait(), "mnemo serve exits cleanly on SIGTERM")
	h.serve = nil
}

func (h *crashHarness) stop() { h.kill() }

// writeUntilKilled runs the writers until a random moment, kills the
// server and returns what it acknowledged before dying.
func (h *crashHarness) writeUntilKilled(round, singles, batches, batchSize int) ([]crashAck, int) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var (
		mu      sync.Mutex
		acks    []crashAck
		tried   int
		wg      sync.WaitGroup
		killing atomic.Bool
		first   = make(chan struct{})
		once    sync.Once
	)
	record := func(a []crashAck, n int) {
		mu.Lock()
		acks, tried = append(acks, a...), tried+n
		mu.Unlock()
		if len(a) > 0 {
			once.Do(func() { close(first) })
		}
	}
	for w := range singles + batches {
		size := 1
		if w >= singles {
			size = batchSize
		}
		wg.Go(func() {
			for step := 0; ctx.Err() == nil; step++ {
				a, err := h.write(ctx, round, w, step, size)
				record(a, size)
				if err != nil {
					if killing.Load() {
						return // the kill cut this write off: not acknowledged
					}
					h.t.Errorf("round %d writer %d: %v", round, w, err)
					return
				}
			}
		})
	}
	// The kill comes at a random moment once writes flow (a kill while
	// the server starts tests nothing the next round does not).
	select {
	case <-first:
	case <-time.After(2 * time.Minute):
		h.t.Errorf("round %d: no write acknowledged within 2 minutes", round)
	}
	time.Sleep(time.Duration(rand.Int64N(int64(h.maxDelay))))
	killing.Store(true)
	h.kill()
	cancel()
	wg.Wait()
	return acks, tried
}

// write sends one write (size 1) or one batch and returns the acknowledged
// items. An error after the kill is expected: the write was not
// acknowledged.
func (h *crashHarness) write(ctx context.Context, round, writer, step, size int) ([]crashAck, error) {
	items := make([]map[string]any, size)
	tokens := make([]string, size)
	for i := range items {
		tokens[i] = crashToken()
		items[i] = map[string]any{
			"type":  "note",
			"title": "Probe " + tokens[i],
			"content": fmt.Sprintf("Probe %s was written by writer %d in round %d at step %d, item %d.",
				tokens[i], writer, round, step, i),
		}
	}
	if size == 1 {
		var res struct {
			Status string `json:"status"`
			ID     string `json:"id"`
		}
		code, err := h.do(ctx, http.MethodPost, "/v1/memories", items[0], &res)
		if err != nil {
			return nil, err
		}
		if code != http.StatusCreated || res.Status != "approved" {
			return nil, fmt.Errorf("single write answered %d %q", code, res.Status)
		}
		return []crashAck{{id: res.ID, token: tokens[0]}}, nil
	}
	var res struct {
		Results []struct {
			Status string `json:"status"`
			ID     string `json:"id"`
		} `json:"results"`
	}
	code, err := h.do(ctx, http.MethodPost, "/v1/memories:batch", map[string]any{"items": items}, &res)
	if err != nil {
		return nil, err
	}
	if code != http.StatusOK || len(res.Results) != size {
		return nil, fmt.Errorf("batch write answered %d with %d results", code, len(res.Results))
	}
	out := make([]crashAck, size)
	for i, r := range res.Results {
		if r.Status != "approved" {
			return nil, fmt.Errorf("batch item %d answered %q", i, r.Status)
		}
		out[i] = crashAck{id: r.ID, token: tokens[i], batch: true}
	}
	return out, nil
}

// crashToken is a word no other write holds and the keyword index keeps
// whole: lower-case consonants without s, which no stemming rule shortens.
func crashToken() string {
	const letters = "bcdfghjklmnpqrtvwxz"
	b := []byte("zq")
	for range 10 {
		b = append(b, letters[rand.IntN(len(letters))])
	}
	return string(b)
}

// verify checks that every acknowledged write is readable and found by a
// keyword search for its token.
func (h *crashHarness) verify(acks []crashAck) {
	t := h.t
	t.Helper()
	ctx := t.Context()
	for _, a := range acks {
		var view struct {
			Memory struct {
				Status string `json:"status"`
			} `json:"memory"`
			Version struct {
				Content string `json:"content"`
			} `json:"version"`
		}
		code, err := h.do(ctx, http.MethodGet, "/v1/memories/"+a.id, nil, &view)
		require.NoError(t, err)
		if !assert.Equal(t, http.StatusOK, code, "acknowledged write %s (%s) is readable", a.id, a.token) {
			continue
		}
		assert.Equal(t, "active", view.Memory.Status, "acknowledged write %s", a.id)
		assert.Contains(t, view.Version.Content, a.token, "acknowledged write %s holds its content", a.id)
		var res struct {
			Results []struct {
				Memory struct {
					ID string `json:"id"`
				} `json:"memory"`
			} `json:"results"`
		}
		code, err = h.do(ctx, http.MethodPost, "/v1/search", map[string]any{"query": a.token, "mode": "keyword", "limit": 5}, &res)
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, code)
		var found bool
		for _, r := range res.Results {
			found = found || r.Memory.ID == a.id
		}
		assert.True(t, found, "acknowledged write %s is found by a keyword search for %s", a.id, a.token)
	}
}

// waitOutboxEmpty polls `mnemo outbox status` (beside the running server)
// until the server has drained every vector-index write.
func (h *crashHarness) waitOutboxEmpty() {
	t := h.t
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		out, err := h.cli("outbox", "status")
		require.NoError(t, err, out)
		if strings.Contains(out, "outbox empty") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the outbox did not drain: %s", out)
		}
		time.Sleep(time.Second)
	}
}

// cli runs a mnemo command on the harness's data directory.
func (h *crashHarness) cli(args ...string) (string, error) {
	cmd := exec.Command(h.bin, args...)
	cmd.Env = h.env()
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// do sends a JSON request with the harness's key and decodes the answer.
func (h *crashHarness) do(ctx context.Context, method, path string, body, out any) (int, error) {
	var rd io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			return 0, err
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(ctx, method, h.base+path, rd)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Authorization", "Bearer "+crashKey)
	req.Header.Set("Content-Type", "application/json")
	resp, err := h.client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, err
	}
	if resp.StatusCode < 300 {
		if err := json.Unmarshal(raw, out); err != nil {
			return resp.StatusCode, fmt.Errorf("decode %s %s: %w: %s", method, path, err, raw)
		}
	}
	return resp.StatusCode, nil
}
