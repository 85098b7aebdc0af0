//go:build cgo

package embed

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestReadModelInfoPooling(t *testing.T) {
	tests := []struct {
		name    string
		pooling string // 1_Pooling/config.json; "" means no such file
		wantCLS bool
		wantErr bool
	}{
		{"no pooling file means mean", "", false, false},
		{"mean", `{"pooling_mode_mean_tokens": true, "pooling_mode_cls_token": false}`, false, false},
		{"cls", `{"pooling_mode_cls_token": true, "pooling_mode_mean_tokens": false}`, true, false},
		{"nothing on means mean", `{"word_embedding_dimension": 384}`, false, false},
		{"max", `{"pooling_mode_max_tokens": true}`, false, true},
		{"mean and cls", `{"pooling_mode_mean_tokens": true, "pooling_mode_cls_token": true}`, false, true},
		{"weighted mean", `{"pooling_mode_weightedmean_tokens": true}`, false, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			require.NoError(t, os.WriteFile(filepath.Join(dir, "config.json"),
				[]byte(`{"hidden_size": 4, "max_position_embeddings": 8, "vocab_size": 10}`), 0o644))
			if tc.pooling != "" {
				require.NoError(t, os.MkdirAll(filepath.Join(dir, "1_Pooling"), 0o755))
				require.NoError(t, os.WriteFile(filepath.Join(dir, "1_Pooling", "config.json"), []byte(tc.pooling), 0o644))
			}
			info, err := readModelInfo(dir)
			if tc.wantErr {
				assert.ErrorIs(t, err, ErrModel)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.wantCLS, info.cls)
			assert.Equal(t, 4, info.hidden)
		})
	}
}
