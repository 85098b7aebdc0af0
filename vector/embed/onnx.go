//go:build cgo

package embed

import (
	"cmp"
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"slices"
	"sync"

	ort "github.com/yalue/onnxruntime_go"
	"golang.org/x/sync/errgroup"
)

// Model input and output names, as exported by Hugging Face / optimum.
const (
	inInputIDs      = "input_ids"
	inAttentionMask = "attention_mask"
	inTokenTypeIDs  = "token_type_ids"
	outHidden       = "last_hidden_state"
)

// ONNX is an Embedder that runs a BERT-family sentence embedding model
// (bge-small-en-v1.5 by default) in process through ONNX Runtime: WordPiece
// tokenization in Go, the transformer in ONNX Runtime, then CLS or mean
// pooling (1_Pooling/config.json) and L2 normalisation, so vectors have unit
// length and cosine similarity is their dot product. It is safe for
// concurrent use.
type ONNX struct {
	tok     *tokenizer
	info    modelInfo
	inputs  []string // model inputs in session order
	session *ort.DynamicAdvancedSession
	workers int // model runs at once (Config.Threads)

	mu     sync.RWMutex // Embed holds it shared, Close exclusively
	closed bool
}

var _ Embedder = (*ONNX)(nil)

// OpenONNX loads the ONNX Runtime library (once per process) and the model
// in cfg.ModelDir. Close releases the model.
func OpenONNX(cfg Config) (*ONNX, error) {
	if cfg.ModelDir == "" {
		return nil, fmt.Errorf("open embedder: Config.ModelDir is empty: %w", ErrModel)
	}
	if cfg.MaxLength < 0 || cfg.Threads < 0 {
		return nil, fmt.Errorf("open embedder: Config.MaxLength %d, Config.Threads %d: must not be negative",
			cfg.MaxLength, cfg.Threads)
	}
	info, err := readModelInfo(cfg.ModelDir)
	if err != nil {
		return nil, fmt.Errorf("open embedder: %w", err)
	}
	maxLen := cmp.Or(cfg.MaxLength, info.maxSeqLength, info.maxPositions)
	if maxLen > info.maxPositions {
		return nil, fmt.Errorf("open embedder: Config.MaxLength %d exceeds the model's %d positions: %w",
			maxLen, info.maxPositions, ErrModel)
	}
	vocab, err := loadVocab(filepath.Join(cfg.ModelDir, "vocab.txt"))
	if err != nil {
		return nil, fmt.Errorf("open embedder: %w: %w", ErrModel, err)
	}
	if len(vocab) != info.vocabSize {
		return nil, fmt.Errorf("open embedder: vocab.txt has %d tokens, config.json vocab_size %d: %w",
			len(vocab), info.vocabSize, ErrModel)
	}
	tok, err := newTokenizer(vocab, info.lowercase, maxLen)
	if err != nil {
		return nil, fmt.Errorf("open embedder: %w: %w", ErrModel, err)
	}
	if err := loadRuntime(cfg.LibraryPath); err != nil {
		return nil, fmt.Errorf("open embedder: %w", err)
	}
	session, inputs, err := newSession(filepath.Join(cfg.ModelDir, "model.onnx"), info.hidden)
	if err != nil {
		return nil, fmt.Errorf("open embedder: %w", err)
	}
	return &ONNX{tok: tok, info: info, inputs: inputs, session: session, workers: cmp.Or(cfg.Threads, runtime.NumCPU())}, nil
}

// newSession opens the model with one intra-op thread (parallelism is across
// texts, see Embed), after checking
// that it takes input_ids and attention_mask (and maybe token_type_ids) and
// yields last_hidden_state of width hidden.
func newSession(path string, hidden int) (*ort.DynamicAdvancedSession, []string, error) {
	opts, err := ort.NewSessionOptions()
	if err != nil {
		return nil, nil, fmt.Errorf("session options: %w", err)
	}
	defer opts.Destroy()
	if err := opts.SetIntraOpNumThreads(1); err != nil {
		return nil, nil, fmt.Errorf("set threads: %w", err)
	}
	if err := opts.SetInterOpNumThreads(1); err != nil {
		return nil, nil, fmt.Errorf("set inter-op threads: %w", err)
	}
	// Idle pool threads sleep instead of spinning: on a small shared machine
	// spinning burns the cores that the other threads need.
	if err := opts.AddSessionConfigEntry("session.intra_op.allow_spinning", "0"); err != nil {
		return nil, nil, fmt.Errorf("disable spinning: %w", err)
	}
	ins, outs, err := inputOutputInfo(path)
	if err != nil {
		return nil, nil, fmt.Errorf("read %s: %w: %w", path, ErrModel, err)
	}
	var inputs []string
	for _, in := range ins {
		switch in.Name {
		case inInputIDs, inAttentionMask, inTokenTypeIDs:
			inputs = append(inputs, in.Name)
		default:
			return nil, nil, fmt.Errorf("%s: unexpected input %q: %w", path, in.Name, ErrModel)
		}
	}
	if !slices.Contains(inputs, inInputIDs) || !slices.Contains(inputs, inAttentionMask) {
		return nil, nil, fmt.Errorf("%s: inputs %v lack %s or %s: %w", path, inputs, inInputIDs, inAttentionMask, ErrModel)
	}
	i := slices.IndexFunc(outs, func(o ort.InputOutputInfo) bool { return o.Name == outHidden })
	if i < 0 || len(outs[i].Dimensions) != 3 || outs[i].Dimensions[2] != int64(hidden) {
		return nil, nil, fmt.Errorf("%s: no output %s [batch, sequence, %d]: %w", path, outHidden, hidden, ErrModel)
	}
	s, err := ort.NewDynamicAdvancedSession(path, inputs, []string{outHidden}, opts)
	if err != nil {
		return nil, nil, fmt.Errorf("load %s: %w: %w", path, ErrModel, err)
	}
	return s, inputs, nil
}

// inputOutputInfo lists the inputs and outputs of the model at path. It
// loads the model without graph optimisations, which is cheap.
func inputOutputInfo(path string) ([]ort.InputOutputInfo, []ort.InputOutputInfo, error) {
	opts, err := ort.NewSessionOptions()
	if err != nil {
		return nil, nil, err
	}
	defer opts.Destroy()
	if err := opts.SetGraphOptimizationLevel(ort.GraphOptimizationLevelDisableAll); err != nil {
		return nil, nil, err
	}
	return ort.GetInputOutputInfoWithOptions(path, opts)
}

// Dimensions is the model's hidden size: 384 for bge-small-en-v1.5.
func (e *ONNX) Dimensions() int { return e.info.hidden }

// ModelID is the model_id recorded in the model directory's SOURCE file,
// or the directory's name.
func (e *ONNX) ModelID() string { return e.info.id }

// Close releases the model. Embed calls in flight finish first; later ones
// return ErrClosed. Closing twice is a no-op. The ONNX Runtime library stays
// loaded for the life of the process.
func (e *ONNX) Close() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil
	}
	e.closed = true
	if err := e.session.Destroy(); err != nil {
		return fmt.Errorf("close embedder: %w", err)
	}
	return nil
}

// Embed returns the unit-length embedding of each text, in order. Texts are
// truncated to the configured MaxLength tokens. Each text is one model run,
// with no padding, so a text's vector never depends on the texts beside it
// (with dynamically quantised activations a batch would share one
// quantisation scale); up to Config.Threads runs go at once, each on one
// thread. Cancelling ctx stops the runs not started and aborts those in
// progress.
func (e *ONNX) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	if e.closed {
		return nil, ErrClosed
	}
	dim := e.info.hidden
	flat := make([]float32, len(texts)*dim)
	out := make([][]float32, len(texts))
	for i := range out {
		out[i] = flat[i*dim : (i+1)*dim : (i+1)*dim]
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(e.workers)
	for i, text := range texts {
		if gctx.Err() != nil {
			break // a run failed or ctx ended: start no more
		}
		g.Go(func() error { return e.run(gctx, e.tok.Encode(text), out[i]) })
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("embed: %w", err)
	}
	return out, nil
}

// run embeds one text's token ids into out with one model run.
func (e *ONNX) run(ctx context.Context, ids []int64, out []float32) error {
	seq, dim := len(ids), e.info.hidden
	mask := make([]int64, seq)
	for j := range mask {
		mask[j] = 1
	}
	shape := ort.NewShape(1, int64(seq))
	feeds := map[string][]int64{
		inInputIDs:      ids,
		inAttentionMask: mask,
		inTokenTypeIDs:  make([]int64, seq), // one segment: all zeros
	}
	inputs := make([]ort.Value, 0, len(e.inputs))
	defer func() {
		for _, v := range inputs {
			v.Destroy()
		}
	}()
	for _, name := range e.inputs {
		t, err := ort.NewTensor(shape, feeds[name])
		if err != nil {
			return fmt.Errorf("embed: %s tensor: %w", name, err)
		}
		inputs = append(inputs, t)
	}
	hidden, err := ort.NewEmptyTensor[float32](ort.NewShape(1, int64(seq), int64(dim)))
	if err != nil {
		return fmt.Errorf("embed: output tensor: %w", err)
	}
	defer hidden.Destroy()

	opts, err := ort.NewRunOptions()
	if err != nil {
		return fmt.Errorf("embed: run options: %w", err)
	}
	defer opts.Destroy()
	stop := terminateOnDone(ctx, opts)
	err = e.session.RunWithOptions(inputs, []ort.Value{hidden}, opts)
	if stop() {
		return fmt.Errorf("embed: %w", ctx.Err())
	}
	if err != nil {
		return fmt.Errorf("embed: run model: %w", err)
	}
	if e.info.cls {
		mask = mask[:1] // the [CLS] token's state alone
	}
	meanPoolNormalize(out, hidden.GetData(), mask)
	return nil
}

// terminateOnDone makes ONNX Runtime abandon the run using opts as soon as
// ctx is done. The returned stop ends the watch and reports whether the run
// was told to terminate; after stop returns, opts is no longer touched.
func terminateOnDone(ctx context.Context, opts *ort.RunOptions) (stop func() bool) {
	var (
		mu         sync.Mutex
		finished   bool
		terminated bool
	)
	stopWatch := context.AfterFunc(ctx, func() {
		mu.Lock()
		defer mu.Unlock()
		if !finished {
			terminated = opts.Terminate() == nil
		}
	})
	return func() bool {
		stopWatch()
		mu.Lock()
		defer mu.Unlock()
		finished = true
		return terminated
	}
}
