package embed

import "math"

// meanPoolNormalize writes into out the mean of the hidden states of the
// tokens whose mask is 1, scaled to unit L2 norm: the pooling and Normalize
// modules of a sentence-transformers model. hidden holds seqLen rows of
// len(out) floats for one text, mask its seqLen attention mask. Sums run in
// float64; an all-zero result stays zero.
func meanPoolNormalize(out []float32, hidden []float32, mask []int64) {
	dim := len(out)
	sum := make([]float64, dim)
	var n float64
	for t, m := range mask {
		if m == 0 {
			continue
		}
		n++
		row := hidden[t*dim : (t+1)*dim]
		for i, v := range row {
			sum[i] += float64(v)
		}
	}
	var sq float64
	for i := range sum {
		sum[i] /= math.Max(n, 1e-9)
		sq += sum[i] * sum[i]
	}
	norm := math.Max(math.Sqrt(sq), 1e-12)
	for i := range out {
		out[i] = float32(sum[i] / norm)
	}
}
