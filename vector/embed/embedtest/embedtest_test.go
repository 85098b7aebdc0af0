package embedtest_test

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/mnemo-dev/mnemo/vector/embed"
	"github.com/mnemo-dev/mnemo/vector/embed/embedtest"
)

// TestConfig: each of MNEMO_ORT_LIB and MNEMO_MODEL_DIR replaces its own
// half of the installed configuration, so that one alone pointing nowhere
// turns the embedder off instead of being ignored.
func TestConfig(t *testing.T) {
	dir := t.TempDir()
	installed := embed.InstalledConfig(dir)
	for _, c := range []struct {
		name, lib, model string
		want             embed.Config
	}{
		{"neither: the installed model", "", "", installed},
		{"both", "/x/lib.so", "/x/model", embed.Config{LibraryPath: "/x/lib.so", ModelDir: "/x/model"}},
		{"the runtime alone", "/missing", "", embed.Config{LibraryPath: "/missing", ModelDir: installed.ModelDir}},
		{"the model alone", "", "/x/model", embed.Config{LibraryPath: installed.LibraryPath, ModelDir: "/x/model"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv("MNEMO_ORT_LIB", c.lib)
			t.Setenv("MNEMO_MODEL_DIR", c.model)
			assert.Equal(t, c.want, embedtest.Config(dir))
		})
	}
	t.Run("a missing runtime turns the embedder off", func(t *testing.T) {
		t.Setenv("MNEMO_ORT_LIB", filepath.Join(dir, "missing.so"))
		t.Setenv("MNEMO_MODEL_DIR", "")
		assert.Nil(t, embedtest.ONNX(t, dir))
	})
}
