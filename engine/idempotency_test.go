package engine_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mnemo-dev/mnemo/engine"
	"github.com/mnemo-dev/mnemo/graph"
)

// TestIdempotentCreates: a capsule create or a promote retried with the
// same idempotency key answers what the first request created and writes
// nothing more (no second capsule, no second baseline move, one audit
// event); the same key with other fields is 409; another principal's key,
// or no key, creates anew; a malformed key is 400.
func TestIdempotentCreates(t *testing.T) {
	ctx := context.Background()
	type op struct {
		// do runs the create as p with key and a variant (0: the first
		// request's fields; 1: other fields) and returns the created id.
		do func(t *testing.T, p graph.Principal, key string, variant int) (string, error)
		// count is how many the store holds, and audits how many of
		// their create events.
		count, audits func(t *testing.T) int
		first, other  graph.Principal
	}
	ops := map[string]func(t *testing.T) op{
		"CapsuleCreate": func(t *testing.T) op {
			fx := newCapsuleFixture(t)
			sent := func(t *testing.T, p graph.Principal) []engine.CapsuleView {
				cs, _, err := fx.eng.ListCapsules(ctx, p, engine.CapsuleListRequest{Sent: true})
				require.NoError(t, err)
				return cs
			}
			other := fx.lead
			other.ID = "lead2"
			return op{
				do: func(t *testing.T, p graph.Principal, key string, variant int) (string, error) {
					r := engine.CapsuleRequest{Subject: "handover", Audience: []string{"bot"}, MemoryIDs: []string{fx.pool}, IdempotencyKey: key}
					switch variant {
					case 1:
						r.MemoryIDs = []string{fx.mine}
					case 2:
						r.Subject = "another handover"
					}
					c, err := fx.eng.CreateCapsule(ctx, p, r)
					return c.ID, err
				},
				count:  func(t *testing.T) int { return len(sent(t, fx.lead)) + len(sent(t, other)) },
				audits: func(t *testing.T) int { return auditCount(t, fx.store, fx.scope, engine.AuditCapsuleCreate) },
				first:  fx.lead, other: other,
			}
		},
		"Promote": func(t *testing.T) op {
			f := newLoopFixture(t)
			other := f.librarian
			other.ID = "librarian2"
			// An older baseline (v2 of the memory), then v3 accepted: a
			// rollback to it publishes other versions than a snapshot.
			older, err := f.eng.PromoteBaseline(ctx, f.librarian, engine.PromoteRequest{Name: "release-0"})
			require.NoError(t, err)
			_, err = f.eng.AcceptProposal(ctx, f.librarian, f.fresh, "")
			require.NoError(t, err)
			return op{
				do: func(t *testing.T, p graph.Principal, key string, variant int) (string, error) {
					r := engine.PromoteRequest{Name: "release-1", IdempotencyKey: key}
					switch variant {
					case 1:
						r.Name = "release-2"
					case 2:
						r.BaselineID = older.ID // same name, other versions
					}
					b, err := f.eng.PromoteBaseline(ctx, p, r)
					if err == nil {
						assert.True(t, b.Published, "the answer is the published baseline")
					}
					return b.ID, err
				},
				count: func(t *testing.T) int {
					bs, err := f.eng.ListBaselines(ctx, f.librarian, nil, 100)
					require.NoError(t, err)
					return len(bs)
				},
				audits: func(t *testing.T) int { return auditCount(t, f.store, f.repo, engine.AuditBaselinePromote) },
				first:  f.librarian, other: other,
			}
		},
	}
	for name, setup := range ops {
		t.Run(name, func(t *testing.T) {
			for _, tt := range []struct {
				name string
				// second request: its principal (true: the other one), key and variant
				otherPrincipal bool
				key            string
				variant        int
				same           bool  // answers the first request's id
				want           error // nil, or the error of the second request
				field          string
			}{
				{name: "RetrySameKey", key: "k-1", same: true},
				{name: "SameKeyOtherFields", key: "k-1", variant: 1, want: graph.ErrConflict},
				{name: "SameKeyOtherContent", key: "k-1", variant: 2, want: graph.ErrConflict},
				{name: "OtherKey", key: "k-2"},
				{name: "NoKey"},
				{name: "OtherPrincipalSameKey", otherPrincipal: true, key: "k-1"},
				{name: "KeyWithSpace", key: "k 1", want: graph.ErrInvalid, field: "idempotency_key"},
				{name: "KeyTooLong", key: string(make([]byte, engine.MaxIdempotencyKey+1)), want: graph.ErrInvalid, field: "idempotency_key"},
			} {
				t.Run(tt.name, func(t *testing.T) {
					o := setup(t)
					id, err := o.do(t, o.first, "k-1", 0)
					require.NoError(t, err)
					n, a := o.count(t), o.audits(t)
					p := o.first
					if tt.otherPrincipal {
						p = o.other
					}
					id2, err := o.do(t, p, tt.key, tt.variant)
					if tt.want != nil {
						require.ErrorIs(t, err, tt.want)
						if tt.field != "" {
							var fe *graph.FieldError
							require.ErrorAs(t, err, &fe)
							assert.Equal(t, tt.field, fe.Field)
						}
						assert.Equal(t, n, o.count(t), "nothing written")
						assert.Equal(t, a, o.audits(t), "nothing audited")
						return
					}
					require.NoError(t, err)
					if tt.same {
						assert.Equal(t, id, id2, "the first request's result")
						assert.Equal(t, n, o.count(t), "nothing written")
						assert.Equal(t, a, o.audits(t), "audited once")
						return
					}
					assert.NotEqual(t, id, id2, "a new one")
					assert.Equal(t, n+1, o.count(t))
					assert.Equal(t, a+1, o.audits(t))
				})
			}
		})
	}
}

// auditCount is how many events of action the store holds in s.
func auditCount(t *testing.T, st graph.Store, s graph.Scope, action string) int {
	t.Helper()
	evs, _, err := st.ListAudit(context.Background(), graph.Filter{Scope: s, Reader: graph.System},
		graph.AuditQuery{Action: action}, graph.Page{Limit: graph.MaxListLimit})
	require.NoError(t, err)
	return len(evs)
}
