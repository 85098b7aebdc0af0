package sqlite_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mnemo-dev/mnemo/graph"
	"github.com/mnemo-dev/mnemo/graph/graphtest"
	"github.com/mnemo-dev/mnemo/graph/sqlite"
)

// crashChildEnv, when set, makes TestCrashSafety the writer child: it writes
// into the directory named by the variable until it is killed.
const crashChildEnv = "MNEMO_SQLITE_CRASH_CHILD"

var crashScope = graph.Scope{TenantID: "crash"}

// TestCrashSafety re-executes the test binary as a child that writes
// memories (single and batched) in a loop and prints each id after its
// commit returns, kills it with SIGKILL mid-stream, then reopens the
// directory: the store must open, pass integrity_check, hold every memory
// the child reported committed, and hold the batch in flight either whole or
// not at all.
func TestCrashSafety(t *testing.T) {
	if dir := os.Getenv(crashChildEnv); dir != "" {
		crashChild(dir)
		return
	}
	if testing.Short() {
		if os.Getenv("CI") != "" {
			t.Fatal("TestCrashSafety must run in CI: drop -short")
		}
		t.Skip("spawns a child process (-short)")
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashSafety$", "-test.count=1")
	cmd.Env = append(os.Environ(), crashChildEnv+"="+dir)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	cmd.Stderr = os.Stderr
	require.NoError(t, cmd.Start())

	var committed []string
	var inFlight []string // ids of the batch begun but not reported committed
	sc := bufio.NewScanner(out)
	deadline := time.Now().Add(60 * time.Second)
	for sc.Scan() && len(committed) < 400 && time.Now().Before(deadline) {
		kind, ids, _ := strings.Cut(sc.Text(), " ")
		switch kind {
		case "begin":
			inFlight = strings.Split(ids, ",")
		case "commit":
			committed = append(committed, inFlight...)
			inFlight = nil
		}
	}
	require.NoError(t, cmd.Process.Kill()) // SIGKILL: no deferred cleanup, no close
	_ = cmd.Wait()
	require.GreaterOrEqual(t, len(committed), 50, "child committed too little before the kill")

	s, err := sqlite.Open(t.Context(), dir, sqlite.Options{})
	require.NoError(t, err, "store opens after kill -9")
	t.Cleanup(func() { _ = s.Close() })
	require.NoError(t, s.IntegrityCheck(t.Context()))
	f := graph.Filter{Scope: crashScope, Reader: graph.System}
	got, err := s.GetMemories(t.Context(), f, committed)
	require.NoError(t, err)
	assert.Len(t, got, len(committed), "every memory reported committed survives")
	if len(inFlight) > 0 {
		partial, err := s.GetMemories(t.Context(), f, inFlight)
		require.NoError(t, err)
		assert.True(t, len(partial) == 0 || len(partial) == len(inFlight),
			"the batch in flight is all or nothing, got %d of %d", len(partial), len(inFlight))
	}
	// Still writable.
	_, err = graphtest.CreateMemory(t.Context(), s, graph.MemoryInput{Memory: graph.Memory{Scope: crashScope, Type: "note", Title: "after"},
		Version: graph.VersionInput{Content: "after the crash"}})
	require.NoError(t, err)
}

// crashChild writes until killed (or for at most a minute).
func crashChild(dir string) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := sqlite.Open(ctx, dir, sqlite.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, "child open:", err)
		os.Exit(2)
	}
	for i := 0; ctx.Err() == nil; i++ {
		n := 1 + i%5 // batches of 1..5
		batch := make([]graph.MemoryInput, n)
		ids := make([]string, n)
		for j := range batch {
			ids[j] = graph.NewID()
			batch[j] = graph.MemoryInput{
				Memory: graph.Memory{ID: ids[j], Scope: crashScope, Type: "note", Title: fmt.Sprintf("crash %d/%d", i, j)},
				Version: graph.VersionInput{Content: strings.Repeat("durable content ", 20),
					Entities: []graph.EntityRef{{Name: fmt.Sprintf("entity %d", i%17)}}, Index: true},
			}
		}
		fmt.Printf("begin %s\n", strings.Join(ids, ","))
		if _, err := s.CreateMemories(ctx, batch); err != nil {
			fmt.Fprintln(os.Stderr, "child write:", err)
			os.Exit(2)
		}
		fmt.Println("commit")
	}
}
