package neo4j

import (
	"context"
	"errors"
	"testing"

	neo4jdrv "github.com/neo4j/neo4j-go-driver/v5/neo4j"
)

// TestReadRetries checks read's retry rule without a server: a session is
// opened lazily, so work that fails before its first statement runs
// against nothing. A transient failure runs work again, up to readAttempts
// times; any other failure returns at once, and once the context is done
// a failure is the context's error.
func TestReadRetries(t *testing.T) {
	driver, err := neo4jdrv.NewDriverWithContext("bolt://127.0.0.1:1", neo4jdrv.NoAuth())
	if err != nil {
		t.Fatal(err)
	}
	defer driver.Close(context.Background())
	s := &Store{driver: driver}
	transient := &neo4jdrv.Neo4jError{Code: "Neo.TransientError.General.DatabaseUnavailable", Msg: "leader switch"}
	lost := &neo4jdrv.ConnectivityError{Inner: errors.New("connection reset")}
	syntax := &neo4jdrv.Neo4jError{Code: "Neo.ClientError.Statement.SyntaxError", Msg: "bad"}
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tc := range []struct {
		name      string
		ctx       context.Context
		fails     []error // what each run returns before it succeeds
		wantRuns  int
		wantValue int
		wantErr   error
	}{
		{"success", context.Background(), nil, 1, 7, nil},
		{"transient once", context.Background(), []error{transient}, 2, 7, nil},
		{"connection lost twice", context.Background(), []error{lost, lost}, 3, 7, nil},
		{"transient every time", context.Background(), []error{transient, transient, transient, transient}, readAttempts, 0, transient},
		{"not transient", context.Background(), []error{syntax}, 1, 0, syntax},
		{"cancelled", cancelled, []error{transient}, 1, 0, context.Canceled},
		{"cancelled, the driver's own error", cancelled, []error{errors.New("Writing to connection has been canceled: context canceled")}, 1, 0, context.Canceled},
	} {
		t.Run(tc.name, func(t *testing.T) {
			runs := 0
			v, err := read(tc.ctx, s, func(txn) (int, error) {
				runs++
				if runs <= len(tc.fails) {
					return 0, tc.fails[runs-1]
				}
				return 7, nil
			})
			if runs != tc.wantRuns || v != tc.wantValue || !errors.Is(err, tc.wantErr) {
				t.Fatalf("runs %d, value %d, err %v; want %d, %d, %v", runs, v, err, tc.wantRuns, tc.wantValue, tc.wantErr)
			}
		})
	}
}
