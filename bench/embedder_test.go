package bench

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// countingEmbedder gives each text a vector of its length and counts the
// texts it was asked to embed: what the cache must save is calls, so the
// test counts them.
type countingEmbedder struct{ texts int }

func (c *countingEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	c.texts += len(texts)
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = []float32{float32(len(t)), 1}
	}
	return out, nil
}
func (c *countingEmbedder) Dimensions() int { return 2 }
func (c *countingEmbedder) ModelID() string { return "test/model@v1" }

func TestCachedEmbedderPersists(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	inner := &countingEmbedder{}
	c, err := NewCachedEmbedder(inner, dir)
	require.NoError(t, err)
	vs, err := c.Embed(ctx, []string{"a", "bb", "a"})
	require.NoError(t, err)
	assert.Equal(t, [][]float32{{1, 1}, {2, 1}, {1, 1}}, vs)
	_, err = c.Embed(ctx, []string{"bb"})
	require.NoError(t, err)
	assert.Equal(t, 3, inner.texts, "a text seen before is not embedded again")
	require.NoError(t, c.Save())

	again := &countingEmbedder{}
	c2, err := NewCachedEmbedder(again, dir)
	require.NoError(t, err)
	vs, err = c2.Embed(ctx, []string{"bb", "ccc"})
	require.NoError(t, err)
	assert.Equal(t, [][]float32{{2, 1}, {3, 1}}, vs)
	assert.Equal(t, 1, again.texts, "a later run embeds only the new text")

	none, err := NewCachedEmbedder(&countingEmbedder{}, "")
	require.NoError(t, err)
	require.NoError(t, none.Save(), "without a directory Save does nothing")
}
