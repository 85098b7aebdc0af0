package embed

// batchSize is the most texts one model run takes.
const batchSize = 32

// planBatches splits order, text indexes sorted by ascending token count
// (length), into model runs of at most batchSize texts. Each run is padded to
// its longest text, so a run is cut early where taking the next text would
// make padding more than a third of its tokens: one long text does not
// inflate a batch of short ones.
func planBatches(order []int, length func(int) int) [][]int {
	var batches [][]int
	start, tokens := 0, 0
	for i, idx := range order {
		n, l := i-start+1, length(idx)
		if n > batchSize || (n > 1 && 2*n*l > 3*(tokens+l)) {
			batches = append(batches, order[start:i])
			start, tokens = i, 0
		}
		tokens += l
	}
	if start < len(order) {
		batches = append(batches, order[start:])
	}
	return batches
}
