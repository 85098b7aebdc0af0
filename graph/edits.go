package graph

import (
	"context"
	"time"
)

// Edits is the capability to store edits: curated corrections (retract,
// hide, replace, ...) layered over memories without rewriting them. It is
// optional: without it no edit can be approved, so reads apply none, and the
// engine answers the edit use cases with ErrUnsupported (graph/doc.go). Both
// shipped stores implement it; graph/storetest.RunEdits is its conformance
// suite.
type Edits interface {
	// CreateEdit, GetEdit, DecideEdit and ListEdits store, read and settle
	// edits. Only approved edits change what reads return. The audit
	// events given to CreateEdit and DecideEdit are written in the same
	// transaction as the edit (their SubjectID must be set).
	CreateEdit(ctx context.Context, e Edit, audit ...AuditEvent) (Edit, error)
	GetEdit(ctx context.Context, f Filter, id string) (Edit, error)
	DecideEdit(ctx context.Context, s Scope, id string, status EditStatus, by string, at time.Time, audit ...AuditEvent) (Edit, error)
	ListEdits(ctx context.Context, f Filter, q EditQuery) ([]Edit, error)
}
