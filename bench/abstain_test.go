package bench

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mnemo-dev/mnemo/config"
	"github.com/mnemo-dev/mnemo/policy"
)

// TestAbstention runs the abstention bench on a subset (one LoCoMo
// conversation, 300 SciFact claims as absent topics, 50 test claims over
// their cited abstracts and 300 others) under the default policy, and holds
// the targets of issue 12 on both corpora: search abstains on at least 99%
// of the absent-topic questions and on at most 2% of the answerable ones.
// At 62e4fdb: LoCoMo 99.3% (2 of 300 claims answered) and 1.3% (2 of 150);
// SciFact 100% and 0%. 100 claims would be too few: the first 100 leave 2
// answered. The whole sets (`mnemo bench abstain`) are in docs/search.md. It
// needs the shared bench files (bench.DataDir) and the ONNX embedder (the calibration is
// bge-small's); without them it skips unless MNEMO_REQUIRE_BENCH=1.
func TestAbstention(t *testing.T) {
	if testing.Short() {
		t.Skip("the abstention bench embeds about 1,000 texts; skipped with -short")
	}
	locomoFile, sciFactDir := filepath.Join(DataDir(), "locomo-dev.json"), filepath.Join(DataDir(), "scifact")
	for _, p := range []string{locomoFile, filepath.Join(sciFactDir, "corpus.jsonl")} {
		if _, err := os.Stat(p); err != nil {
			if os.Getenv("MNEMO_REQUIRE_BENCH") == "1" {
				t.Fatalf("bench file %s missing and MNEMO_REQUIRE_BENCH=1: %v", p, err)
			}
			t.Skipf("bench file %s absent (set MNEMO_REQUIRE_BENCH=1 to require it)", p)
		}
	}
	emb, err := OpenEmbedder(os.Getenv, "../.cache/mnemo")
	require.NoError(t, err)
	if emb == nil {
		if os.Getenv("MNEMO_REQUIRE_BENCH") == "1" {
			t.Fatal("ONNX embedder not installed and MNEMO_REQUIRE_BENCH=1")
		}
		t.Skip("ONNX embedder not installed: abstention is calibrated on its cosine")
	}
	defer emb.Close()
	convs, err := LoadLoCoMo(locomoFile)
	require.NoError(t, err)
	corpus, err := readJSONL(filepath.Join(sciFactDir, "corpus.jsonl"))
	require.NoError(t, err)
	claims, err := readJSONL(filepath.Join(sciFactDir, "queries.jsonl"))
	require.NoError(t, err)
	qrels, err := readQrels(filepath.Join(sciFactDir, "qrels", "test.tsv"))
	require.NoError(t, err)
	pol, err := policy.Parse("default_policy.yaml", config.DefaultPolicy())
	require.NoError(t, err)
	require.Positive(t, pol.Retrieval.AbstentionThreshold, "the default policy abstains")

	rep, err := runAbstain(context.Background(), convs, corpus, claims, qrels, AbstainOptions{
		Convs: []string{"conv-26"}, Claims: 300, TestClaims: 50, Abstracts: 300,
		Embedder: emb, Policy: pol, Dir: t.TempDir(),
	})
	require.NoError(t, err)
	for _, p := range rep.Pairings {
		t.Logf("%s: answerable %d, %.1f%% abstained; absent %d, %.1f%% abstained", p.Corpus,
			p.Answerable.Asked, 100*p.Answerable.Rate(), p.Absent.Asked, 100*p.Absent.Rate())
		require.GreaterOrEqual(t, p.Absent.Asked, 100, "%s: at least 100 absent-topic questions", p.Corpus)
		require.GreaterOrEqual(t, p.Answerable.Asked, 50, "%s: at least 50 answerable questions", p.Corpus)
		assert.GreaterOrEqual(t, p.Absent.Rate(), 0.99, "%s: abstains on >= 99%% of absent topics", p.Corpus)
		assert.LessOrEqual(t, p.Answerable.Rate(), 0.02, "%s: abstains on <= 2%% of answerable questions", p.Corpus)
	}
}
