package embed

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// testVocab is a tiny uncased vocab; ids are the indexes.
var testVocab = []string{
	"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", // 0-4
	"hello", "world", "un", "##aff", "##able", // 5-9
	",", "!", ".", "cafe", "naive", // 10-14
	"東", "京", "$", "3", "##4", // 15-19
	"run", "##ning", "a", "##a", "-", // 20-24
}

func newTestTokenizer(t *testing.T, maxLength int) *tokenizer {
	t.Helper()
	tok, err := newTokenizer(testVocab, true, maxLength)
	require.NoError(t, err)
	return tok
}

func TestTokenizerEncode(t *testing.T) {
	tests := []struct {
		name string
		text string
		want []int64
	}{
		{"empty", "", []int64{2, 3}},
		{"lowercase", "Hello WORLD", []int64{2, 5, 6, 3}},
		{"wordpiece continuation", "unaffable", []int64{2, 7, 8, 9, 3}},
		{"unknown piece makes whole word unk", "unaffx", []int64{2, 1, 3}},
		{"punctuation splits", "hello,world!", []int64{2, 5, 10, 6, 11, 3}},
		{"ascii symbols split", "$34", []int64{2, 17, 18, 19, 3}},
		{"accents stripped", "Café NAÏVE", []int64{2, 13, 14, 3}},
		{"cjk split per ideograph", "東京", []int64{2, 15, 16, 3}},
		{"whitespace kinds", "hello\t\n\r\u00a0\u3000world", []int64{2, 5, 6, 3}},
		{"control and format chars dropped", "hel\u200blo\u0007 wor\ufffdld\x00", []int64{2, 5, 6, 3}},
		{"special tokens kept verbatim", "hello[MASK]world [SEP]", []int64{2, 5, 4, 6, 3, 3}},
		{"special tokens only when exact", "[mask] [MASK", []int64{2, 1, 1, 1, 1, 1, 3}}, // "[", "mask", "]", "[", "mask"
		{"unassigned code points are kept", "hello\u0378", []int64{2, 1, 3}},
		{"punctuation newer than unicode 8 does not split", "hello\u2e55world", []int64{2, 1, 3}},
		{"marks newer than unicode 8 are not stripped", "hello\u1ac1", []int64{2, 1, 3}},
		{"unicode dash is punctuation", "run\u2014running", []int64{2, 20, 1, 20, 21, 3}},
		{"longest match first", "aaa", []int64{2, 22, 23, 23, 3}},
		{"word over 100 chars is unk", strings.Repeat("a", 101), []int64{2, 1, 3}},
		{"word of 100 chars is split", strings.Repeat("a", 100), append(append([]int64{2, 22}, repeat(23, 99)...), 3)},
	}
	tok := newTestTokenizer(t, 512)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, tok.Encode(tc.text))
		})
	}
}

func TestTokenizerTruncates(t *testing.T) {
	tests := []struct {
		name      string
		maxLength int
		text      string
		want      []int64
	}{
		{"fits", 5, "hello world", []int64{2, 5, 6, 3}},
		{"exactly", 4, "hello world", []int64{2, 5, 6, 3}},
		{"cut between words", 3, "hello world", []int64{2, 5, 3}},
		{"cut inside a word", 4, "unaffable", []int64{2, 7, 8, 3}},
		{"cut at a special token", 3, "[MASK] hello", []int64{2, 4, 3}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, newTestTokenizer(t, tc.maxLength).Encode(tc.text))
		})
	}
}

func TestBertUnicodeTablesPresent(t *testing.T) {
	require.NotNil(t, bertAssigned, "x/text lacks the Unicode 8.0.0 tables")
	assert.True(t, known('\u00e9'))
	assert.False(t, known('\u2e55'))
}

func TestNewTokenizerRefuses(t *testing.T) {
	_, err := newTokenizer(testVocab, true, 2)
	assert.ErrorIs(t, err, errTooShort)
	_, err = newTokenizer([]string{"[PAD]", "[CLS]", "[SEP]"}, true, 16)
	assert.ErrorIs(t, err, errBadVocab)
}

// TestTokenizerGolden checks the ids against the reference tokenizer
// (Hugging Face tokenizers, as run by sentence-transformers).
func TestTokenizerGolden(t *testing.T) {
	cfg := installedConfig(t)
	g := loadGolden(t)
	vocab, err := loadVocab(filepath.Join(cfg.ModelDir, "vocab.txt"))
	require.NoError(t, err)
	require.Len(t, vocab, 30522)
	tok, err := newTokenizer(vocab, true, g.MaxLength)
	require.NoError(t, err)
	for _, c := range g.Cases {
		t.Run(name(c.Text), func(t *testing.T) {
			assert.Equal(t, c.IDs, tok.Encode(c.Text))
		})
	}
}

func FuzzTokenizerEncode(f *testing.F) {
	for _, s := range []string{"", "Hello, world!", "unaffable 東京 [MASK]", "\x00\xff\ufffd", "[SEP[CLS]]", "cafe\u0301 na\u0308ive  run ning", "a \u0301b\t\r\n東京 hello"} {
		f.Add(s)
	}
	tok, err := newTokenizer(testVocab, true, 16)
	require.NoError(f, err)
	whole, err := newTokenizer(testVocab, true, 16)
	require.NoError(f, err)
	whole.piece = 1 << 30
	small, err := newTokenizer(testVocab, true, 16)
	require.NoError(f, err)
	small.piece = 3
	f.Fuzz(func(t *testing.T, text string) {
		ids := tok.Encode(text)
		assert.Equal(t, whole.Encode(text), small.Encode(text), "encoding piece by piece changes nothing")
		require.GreaterOrEqual(t, len(ids), 2)
		require.LessOrEqual(t, len(ids), 16)
		assert.Equal(t, int64(2), ids[0])
		assert.Equal(t, int64(3), ids[len(ids)-1])
		for _, id := range ids {
			assert.True(t, id >= 0 && id < int64(len(testVocab)), "id %d out of vocab", id)
		}
	})
}

func repeat(id int64, n int) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = id
	}
	return out
}

// name makes a short subtest name from a text.
func name(text string) string {
	r := []rune(text)
	if len(r) > 32 {
		r = r[:32]
	}
	if len(r) == 0 {
		return "empty"
	}
	return string(r)
}
