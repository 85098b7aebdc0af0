package policy

import (
	"errors"
	"fmt"
	"strings"
)

// ErrInvalid is matched (errors.Is) by every policy validation error.
var ErrInvalid = errors.New("invalid policy")

// Error is one problem in a policy document.
type Error struct {
	// File is the name the policy was parsed under.
	File string
	// Line is the 1-based line of the offending node; 0 when unknown.
	Line int
	// Field is the path of the offending field, e.g. gate.rules[3].action;
	// empty for syntax errors.
	Field string
	// Msg describes the problem.
	Msg string
}

// Error formats the problem as file:line: field: msg.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
	}
	b.WriteString(": ")
	if e.Field != "" {
		b.WriteString(e.Field)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Is makes errors.Is(err, ErrInvalid) true.
func (e *Error) Is(target error) bool { return target == ErrInvalid }

// Errors is every problem found in one document, in document order.
type Errors []*Error

// Error joins the problems, one a line.
func (es Errors) Error() string {
	lines := make([]string, len(es))
	for i, e := range es {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

// Unwrap exposes each problem to errors.Is and errors.As.
func (es Errors) Unwrap() []error {
	out := make([]error, len(es))
	for i, e := range es {
		out[i] = e
	}
	return out
}
