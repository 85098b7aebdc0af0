//go:build !cgo

package embed

import (
	"context"
	"fmt"
)

// ONNX would run the model through ONNX Runtime, which needs cgo; this build
// has none, so OpenONNX always fails with ErrRuntime.
type ONNX struct{}

var _ Embedder = (*ONNX)(nil)

// OpenONNX fails with ErrRuntime: the binary was built with CGO_ENABLED=0.
func OpenONNX(Config) (*ONNX, error) {
	return nil, fmt.Errorf("open embedder: built without cgo, onnxruntime cannot be loaded: %w", ErrRuntime)
}

// Embed fails with ErrRuntime.
func (*ONNX) Embed(context.Context, []string) ([][]float32, error) {
	return nil, fmt.Errorf("embed: built without cgo: %w", ErrRuntime)
}

// Dimensions is 0.
func (*ONNX) Dimensions() int { return 0 }

// ModelID is empty.
func (*ONNX) ModelID() string { return "" }

// Close does nothing.
func (*ONNX) Close() error { return nil }
