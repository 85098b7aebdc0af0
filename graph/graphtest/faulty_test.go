package graphtest_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mnemo-dev/mnemo/graph"
	"github.com/mnemo-dev/mnemo/graph/graphtest"
)

// TestFaulty: each kind of fault fails the call it names and no other, a
// lost acknowledgement leaves the write committed, and Do runs before the
// real call.
func TestFaulty(t *testing.T) {
	ctx := context.Background()
	s := graph.Scope{TenantID: "t1"}
	note := func(content string) graph.MemoryInput {
		return graph.MemoryInput{Memory: graph.Memory{Scope: s, Type: "note", Title: content},
			Version: graph.VersionInput{Content: content}}
	}
	count := func(t *testing.T, st graph.Store) int {
		t.Helper()
		l, err := st.ListMemories(ctx, graph.Filter{Scope: s, Reader: graph.System}, graph.Page{Limit: 100})
		require.NoError(t, err)
		return len(l.Memories)
	}
	tests := []struct {
		name  string
		fault graphtest.Fault
		// fails says which of four writes fail; written how many memories
		// the store holds afterwards.
		fails   [4]bool
		written int
	}{
		{"second call", graphtest.Fault{Method: "CreateMemories", Nth: 2}, [4]bool{false, true, false, false}, 3},
		{"from the third call on", graphtest.Fault{Method: "CreateMemories", Nth: 3, From: true}, [4]bool{false, false, true, true}, 2},
		{"lost acknowledgement", graphtest.Fault{Method: "CreateMemories", Lost: true}, [4]bool{true, false, false, false}, 4},
		{"another method", graphtest.Fault{Method: "AddVersion"}, [4]bool{}, 4},
		{"own error", graphtest.Fault{Method: "CreateMemories", Err: graph.ErrConflict}, [4]bool{true, false, false, false}, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := graphtest.NewFaulty(graphtest.Open(t))
			fs.Arm(tt.fault)
			for i, failed := range tt.fails {
				_, err := graphtest.CreateMemory(ctx, fs, note(string(rune('a'+i))+" note"))
				if !failed {
					assert.NoError(t, err, "write %d", i+1)
					continue
				}
				if tt.fault.Err != nil {
					assert.ErrorIs(t, err, tt.fault.Err, "write %d", i+1)
					continue
				}
				var ie *graphtest.InjectedError
				if assert.ErrorAs(t, err, &ie, "write %d", i+1) {
					assert.Equal(t, graphtest.InjectedError{Method: "CreateMemories", Call: i + 1, Lost: tt.fault.Lost}, *ie)
				}
				assert.ErrorIs(t, err, graphtest.ErrInjected)
			}
			assert.Equal(t, tt.written, count(t, fs.Inner()))
			assert.Equal(t, 4, fs.Calls("CreateMemories"))
		})
	}

	t.Run("do runs first, then the call", func(t *testing.T) {
		fs := graphtest.NewFaulty(graphtest.Open(t))
		fs.Arm(graphtest.Fault{Method: "CreateMemories", Do: func(ctx context.Context) error {
			_, err := graphtest.CreateMemory(ctx, fs.Inner(), note("concurrent"))
			return err
		}})
		_, err := graphtest.CreateMemory(ctx, fs, note("mine"))
		require.NoError(t, err)
		assert.Equal(t, 2, count(t, fs))
		assert.Equal(t, []string{"CreateMemories", "ListMemories"}, fs.Log(), "the inner store's calls are not logged")

		fs.Arm(graphtest.Fault{Method: "CreateMemories", Do: func(context.Context) error { return errors.New("refused") }})
		_, err = graphtest.CreateMemory(ctx, fs, note("refused"))
		require.EqualError(t, err, "refused")
		assert.Equal(t, 2, count(t, fs))
	})
	t.Run("faults count from when they are armed; Clear disarms", func(t *testing.T) {
		fs := graphtest.NewFaulty(graphtest.Open(t))
		_, err := graphtest.CreateMemory(ctx, fs, note("before"))
		require.NoError(t, err)
		fs.Arm(graphtest.Fault{Method: "CreateMemories", From: true})
		_, err = graphtest.CreateMemory(ctx, fs, note("armed"))
		require.ErrorIs(t, err, graphtest.ErrInjected)
		fs.Clear()
		_, err = graphtest.CreateMemory(ctx, fs, note("cleared"))
		require.NoError(t, err)
	})
	t.Run("an unknown method panics", func(t *testing.T) {
		fs := graphtest.NewFaulty(graphtest.Open(t))
		assert.Panics(t, func() { fs.Arm(graphtest.Fault{Method: "CreateMemory"}) })
	})
}
