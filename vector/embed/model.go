//go:build cgo

package embed

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// modelInfo is what OpenONNX reads from a sentence-transformers model
// directory besides model.onnx and vocab.txt.
type modelInfo struct {
	id           string // from SOURCE "model_id:", else the directory name
	hidden       int    // config.json hidden_size: the vector length
	vocabSize    int    // config.json vocab_size: rows of the token embedding
	maxPositions int    // config.json max_position_embeddings
	maxSeqLength int    // sentence_bert_config.json max_seq_length; 0 if absent
	lowercase    bool   // tokenizer_config.json do_lower_case; true if absent
	cls          bool   // 1_Pooling/config.json pooling_mode_cls_token: the [CLS] state, not the mean
}

// readModelInfo reads config.json (required), tokenizer_config.json,
// sentence_bert_config.json, 1_Pooling/config.json (optional) and SOURCE
// (optional) from dir, and refuses a pooling other than the mean of the
// tokens or the [CLS] token.
func readModelInfo(dir string) (modelInfo, error) {
	var cfg struct {
		Hidden       int `json:"hidden_size"`
		MaxPositions int `json:"max_position_embeddings"`
		VocabSize    int `json:"vocab_size"`
	}
	if err := readJSON(filepath.Join(dir, "config.json"), &cfg, true); err != nil {
		return modelInfo{}, err
	}
	if cfg.Hidden <= 0 || cfg.MaxPositions <= 0 || cfg.VocabSize <= 0 {
		return modelInfo{}, fmt.Errorf("config.json: hidden_size %d, max_position_embeddings %d, vocab_size %d: %w",
			cfg.Hidden, cfg.MaxPositions, cfg.VocabSize, ErrModel)
	}
	tok := struct {
		Lower *bool `json:"do_lower_case"`
	}{}
	if err := readJSON(filepath.Join(dir, "tokenizer_config.json"), &tok, false); err != nil {
		return modelInfo{}, err
	}
	var st struct {
		MaxSeqLength int `json:"max_seq_length"`
	}
	if err := readJSON(filepath.Join(dir, "sentence_bert_config.json"), &st, false); err != nil {
		return modelInfo{}, err
	}
	pool := map[string]any{}
	if err := readJSON(filepath.Join(dir, "1_Pooling", "config.json"), &pool, false); err != nil {
		return modelInfo{}, err
	}
	var modes []string
	for key, v := range pool {
		if on, _ := v.(bool); on && strings.HasPrefix(key, "pooling_mode_") {
			modes = append(modes, key)
		}
	}
	cls := false
	switch {
	case len(modes) == 0 || len(modes) == 1 && modes[0] == "pooling_mode_mean_tokens":
	case len(modes) == 1 && modes[0] == "pooling_mode_cls_token":
		cls = true
	default:
		return modelInfo{}, fmt.Errorf("1_Pooling/config.json: %v: only mean or cls pooling, alone, is supported: %w", modes, ErrModel)
	}
	id, err := readModelID(filepath.Join(dir, "SOURCE"))
	if err != nil {
		return modelInfo{}, err
	}
	if id == "" {
		id = filepath.Base(filepath.Clean(dir))
	}
	return modelInfo{
		id:           id,
		hidden:       cfg.Hidden,
		vocabSize:    cfg.VocabSize,
		maxPositions: cfg.MaxPositions,
		maxSeqLength: st.MaxSeqLength,
		lowercase:    tok.Lower == nil || *tok.Lower,
		cls:          cls,
	}, nil
}

// readJSON decodes path into v; a missing file is an error only if required.
func readJSON(path string, v any, required bool) error {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) && !required {
		return nil
	}
	if err != nil {
		return fmt.Errorf("%w: %w", ErrModel, err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: %w: %w", path, ErrModel, err)
	}
	return nil
}

// readModelID returns the "model_id:" line of the SOURCE file that
// install.sh writes, or "" when there is no such file or line.
func readModelID(path string) (string, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read SOURCE: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "model_id:"); ok {
			return strings.TrimSpace(v), nil
		}
	}
	return "", sc.Err()
}
