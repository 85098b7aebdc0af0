package bench

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestBM25(t *testing.T) {
	x := NewBM25([]string{"1", "2", "3"}, []string{"Caroline went to the support group", "Melanie paints", "the group met"})
	assert.Equal(t, []string{"1", "3"}, x.Search("support group?", 5))
	assert.Empty(t, x.Search("the", 5), "stop words score nothing")
}
