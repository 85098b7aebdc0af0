package graph

import (
	"errors"
	"fmt"
)

// Sentinel errors shared by every backend. Wrap them with context; test them
// with errors.Is.
var (
	// ErrInvalid marks bad input. Nothing was written.
	ErrInvalid = errors.New("invalid input")
	// ErrNotFound marks a record that does not exist or lies outside the
	// caller's scope.
	ErrNotFound = errors.New("not found")
	// ErrConflict marks a write that contradicts the stored state.
	ErrConflict = errors.New("conflict")
	// ErrForbidden marks an operation the principal may not perform.
	ErrForbidden = errors.New("forbidden")
	// ErrUnsupported marks a use case the store cannot serve: it lacks the
	// optional capability (Proposals, Edits, Capsules, ...) the use case
	// needs. The HTTP layer answers 501.
	ErrUnsupported = errors.New("unsupported by this store")
)

// FieldError is an ErrInvalid that names the offending field, so the HTTP
// layer can answer {"error":{"code","message","field"}}.
type FieldError struct {
	Field   string
	Message string
}

// Error implements error.
func (e *FieldError) Error() string { return fmt.Sprintf("%s: %s", e.Field, e.Message) }

// Unwrap makes errors.Is(err, ErrInvalid) true.
func (e *FieldError) Unwrap() error { return ErrInvalid }

// invalid builds a FieldError.
func invalid(field, format string, args ...any) error {
	return &FieldError{Field: field, Message: fmt.Sprintf(format, args...)}
}
