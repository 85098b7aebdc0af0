package embed

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// installedConfig returns the Config for the real runtime and model:
// MNEMO_ORT_LIB and MNEMO_MODEL_DIR when set, else what install.sh put in
// .cache/mnemo at the repository root. When they are absent the test is
// skipped, or fails if MNEMO_REQUIRE_MODEL=1.
func installedConfig(tb testing.TB) Config {
	tb.Helper()
	cfg := InstalledConfig(filepath.Join("..", "..", ".cache", "mnemo"))
	if lib := os.Getenv("MNEMO_ORT_LIB"); lib != "" {
		cfg.LibraryPath = lib
	}
	if dir := os.Getenv("MNEMO_MODEL_DIR"); dir != "" {
		cfg.ModelDir = dir
	}
	var missing []string
	for _, p := range []string{cfg.LibraryPath, filepath.Join(cfg.ModelDir, "model.onnx"), filepath.Join(cfg.ModelDir, "vocab.txt")} {
		if _, err := os.Stat(p); err != nil {
			missing = append(missing, p)
		}
	}
	if len(missing) > 0 {
		msg := "ONNX runtime/model not installed (missing " + missing[0] + "): run `bash vector/embed/install.sh` " +
			"or set MNEMO_ORT_LIB and MNEMO_MODEL_DIR"
		if os.Getenv("MNEMO_REQUIRE_MODEL") == "1" {
			tb.Fatal(msg + " (MNEMO_REQUIRE_MODEL=1)")
		}
		tb.Skip(msg)
	}
	return cfg
}

// golden is testdata/golden.json, written by testdata/make_golden.py.
type golden struct {
	ModelID    string `json:"model_id"`
	MaxLength  int    `json:"max_length"`
	Dimensions int    `json:"dimensions"`
	Cases      []struct {
		Text      string    `json:"text"`
		IDs       []int64   `json:"ids"`
		Reference []float32 `json:"reference"`
		ONNX      []float32 `json:"onnx"`
	} `json:"cases"`
}

func loadGolden(tb testing.TB) golden {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "golden.json"))
	require.NoError(tb, err)
	var g golden
	require.NoError(tb, json.Unmarshal(b, &g))
	require.GreaterOrEqual(tb, len(g.Cases), 20)
	return g
}
