package embed

import "path/filepath"

// Config says where the ONNX Runtime library and the model are, and how to
// run them. InstalledConfig fills the paths for what install.sh installed.
type Config struct {
	// LibraryPath is the ONNX Runtime shared library, libonnxruntime.so
	// version 1.24 or newer. Required. One process can load only one.
	LibraryPath string
	// ModelDir is a sentence-transformers model directory holding
	// model.onnx, vocab.txt and config.json, optionally
	// tokenizer_config.json, sentence_bert_config.json, 1_Pooling/config.json
	// and SOURCE. Required.
	ModelDir string
	// MaxLength caps the tokens of one text, [CLS] and [SEP] included;
	// longer texts are truncated. Zero means the model's max_seq_length
	// (512 for bge-small-en-v1.5), or its max_position_embeddings if it
	// names none.
	MaxLength int
	// Threads is how many texts are embedded at once, each in its own
	// model run on one thread. Zero means one per CPU.
	Threads int
}

// InstalledConfig returns the Config for the files that install.sh placed
// in dest (by default .cache/mnemo under the repository root).
func InstalledConfig(dest string) Config {
	return Config{
		LibraryPath: filepath.Join(dest, "onnxruntime", "libonnxruntime.so"),
		ModelDir:    filepath.Join(dest, "model"),
	}
}
