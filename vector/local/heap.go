package local

// item is a slot with its distance (1 - cosine) to the query.
type item struct {
	dist float32
	slot int32
}

// minHeap pops the closest item first.
type minHeap []item

func (h *minHeap) push(it item) {
	*h = append(*h, it)
	s := *h
	i := len(s) - 1
	for i > 0 {
		p := (i - 1) / 2
		if s[p].dist <= s[i].dist {
			break
		}
		s[p], s[i] = s[i], s[p]
		i = p
	}
}

func (h *minHeap) pop() item {
	s := *h
	top := s[0]
	n := len(s) - 1
	s[0] = s[n]
	s = s[:n]
	i := 0
	for {
		l, r, m := 2*i+1, 2*i+2, i
		if l < n && s[l].dist < s[m].dist {
			m = l
		}
		if r < n && s[r].dist < s[m].dist {
			m = r
		}
		if m == i {
			break
		}
		s[i], s[m] = s[m], s[i]
		i = m
	}
	*h = s
	return top
}

// maxHeap keeps the worst (farthest) item on top, so that a bounded result
// set can drop it when something closer arrives.
type maxHeap []item

func (h *maxHeap) push(it item) {
	*h = append(*h, it)
	s := *h
	i := len(s) - 1
	for i > 0 {
		p := (i - 1) / 2
		if s[p].dist >= s[i].dist {
			break
		}
		s[p], s[i] = s[i], s[p]
		i = p
	}
}

// pushBounded adds it and drops the worst item when more than k are held.
func (h *maxHeap) pushBounded(it item, k int) {
	if len(*h) < k {
		h.push(it)
		return
	}
	if it.dist >= (*h)[0].dist {
		return
	}
	(*h)[0] = it
	s := *h
	i, n := 0, len(s)
	for {
		l, r, m := 2*i+1, 2*i+2, i
		if l < n && s[l].dist > s[m].dist {
			m = l
		}
		if r < n && s[r].dist > s[m].dist {
			m = r
		}
		if m == i {
			break
		}
		s[i], s[m] = s[m], s[i]
		i = m
	}
}
