package paje

import "testing"

// TestMarkSpecialsGo runs TestMarkSpecials and the chunk tokenizer's
// comparison without AVX2 too, as on processors that lack it.
func TestMarkSpecialsGo(t *testing.T) {
	if !useAVX2 {
		t.Log("no AVX2 here: TestMarkSpecials already ran the Go code")
	}
	defer func(old bool) { useAVX2 = old }(useAVX2)
	useAVX2 = false
	t.Run("bitmap", TestMarkSpecials)
	t.Run("chunks", TestChunkTokenizeMatchesReference)
}
