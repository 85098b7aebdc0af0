package embed

import (
	"context"
	"errors"
)

// Embedder turns texts into fixed-size vectors for the vector index. The
// engine embeds memory text on the write path and queries on the read path;
// vectors from different ModelIDs are not comparable.
type Embedder interface {
	// Embed returns one vector of Dimensions() floats per text, in order.
	Embed(ctx context.Context, texts []string) ([][]float32, error)
	// Dimensions is the length of every vector Embed returns.
	Dimensions() int
	// ModelID names the model and variant, so an index can tell when its
	// vectors came from another model and must be rebuilt.
	ModelID() string
}

// ErrClosed is returned by Embed after Close.
var ErrClosed = errors.New("embed: embedder closed")

// ErrModel reports a model directory that is missing files or describes a
// model this package cannot run (for example a pooling other than CLS or mean).
var ErrModel = errors.New("embed: unusable model")

// ErrRuntime reports an ONNX Runtime shared library that cannot be used:
// missing, too old (the C API 24 of onnxruntime 1.24 is needed), or different
// from the one already loaded into this process.
var ErrRuntime = errors.New("embed: unusable onnxruntime library")
