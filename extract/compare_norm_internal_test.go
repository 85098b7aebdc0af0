package extract

import "testing"

// TestStandardQuantitiesDegreeBeforeALetter: a degree sign followed by a
// letter that is no unit ("45°N") matches degreeRE only in context; it
// panicked (a MuSiQue passage stopped `mnemo bench multihop`).
func TestStandardQuantitiesDegreeBeforeALetter(t *testing.T) {
	for _, s := range []string{"at 45°N 12°E", "the lake lies at 5° north", "20°C and 68° F"} {
		if got := standardQuantities(s); got == "" {
			t.Errorf("standardQuantities(%q) is empty", s)
		}
	}
}
