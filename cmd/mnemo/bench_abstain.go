package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/mnemo-dev/mnemo/bench"
)

// runBenchAbstain is `mnemo bench abstain`: search abstains on questions
// whose topic the memories do not hold and answers those they do
// (bench.RunAbstain).
func runBenchAbstain(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c := newCmdline("mnemo bench abstain", "mnemo bench abstain [flags]", stdout, stderr)
	fs := c.fs
	file := fs.String("file", filepath.Join(bench.DataDir(), "locomo-dev.json"), "LoCoMo bench file")
	dir := fs.String("scifact", filepath.Join(bench.DataDir(), "scifact"), "SciFact directory (corpus.jsonl, queries.jsonl, qrels/test.tsv)")
	convs := fs.String("conv", "", "only these LoCoMo sample ids, comma-separated (default all)")
	claims := fs.Int("claims", 0, "SciFact claims asked of LoCoMo as absent topics (0: all)")
	testClaims := fs.Int("test-claims", 0, "SciFact test claims asked of SciFact (0: all with qrels)")
	abstracts := fs.Int("abstracts", 0, "SciFact abstracts stored besides the cited ones (0: all)")
	policyFile := fs.String("policy", "", "policy file (default: the embedded default policy)")
	dump := fs.String("dump", "", "write one JSON line per question to this file (best results and their signals)")
	vcache := vectorCacheFlag(fs)
	if _, err := c.parseN(args, 0); err != nil {
		return err
	}
	pol, err := benchPolicy(*policyFile)
	if err != nil {
		return err
	}
	emb, err := bench.OpenEmbedder(os.Getenv, filepath.Join(".cache", "mnemo"))
	if err != nil {
		return fmt.Errorf("embedder: %w", err)
	}
	if emb == nil {
		return errors.New("no ONNX embedder: abstention is calibrated on its cosine (run `make model`, or set MNEMO_ORT_LIB and MNEMO_MODEL_DIR)")
	}
	defer emb.Close()
	o := bench.AbstainOptions{Convs: commaList(*convs), Claims: *claims, TestClaims: *testClaims, Abstracts: *abstracts,
		Embedder: emb, Policy: pol, VectorCache: vectorCache(*vcache)}
	bar := newProgress(stderr, "abstain", "", c.json)
	o.Progress, o.Tick = bar, bar.stage
	if *dump != "" {
		f, err := os.Create(*dump)
		if err != nil {
			return err
		}
		defer f.Close()
		o.Dump = f
	}
	tmp, err := os.MkdirTemp("", "mnemo-abstain-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	o.Dir = tmp
	start := time.Now()
	rep, err := bench.RunAbstain(ctx, *file, *dir, o)
	bar.done()
	if err != nil {
		return err
	}
	rt := pol.Retrieval
	res := benchResult{Bench: "abstain", Data: *file + "," + *dir, Model: emb.ModelID(), Seconds: time.Since(start).Seconds(), Report: rep}
	return c.print(res, func(w io.Writer) {
		fmt.Fprintf(w, "Abstention (%s, %s; model %s; relevance cosine_mid %.3f, cosine_width %.3f, coverage_weight %.3f; abstention_threshold %.2f; %s)\n\n",
			*file, *dir, emb.ModelID(), rt.Relevance.CosineMid, rt.Relevance.CosineWidth, rt.Relevance.Coverage(),
			rt.AbstentionThreshold, time.Since(start).Round(time.Second))
		rep.Write(w)
	})
}
