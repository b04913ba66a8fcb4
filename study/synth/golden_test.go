package synth

import (
	"crypto/sha256"
	"fmt"
	"testing"
)

type goldenCase struct {
	name  string
	dag   DAGParams
	trace TraceParams
	sum   string
}

// goldenCases are traces WriteTrace wrote before the closed loop shared
// its simulation (their SHA-256): the study's traces must not change.
func goldenCases() []goldenCase {
	gemm := []Codelet{{Name: "GEMM", MeanMS: 4, CV: 0.1, Weight: 1, Sizes: []int{64, 128}, SizeExp: 2.5}, {Name: "TRSM", MeanMS: 2, CV: 0.3, Weight: 2}}
	return []goldenCase{
		{"default 1000x8", DAGParams{Tasks: 1000, Seed: 1}, TraceParams{Workers: 8, Seed: 1 ^ 8<<32, TransferProb: 0, TransferMeanMS: 1, OverheadMS: 0.001}, "1ae4a7af6095ba7b241fd534710aac5ab37ef3a2a814181a96a405b84eb5e930"},
		{"transfers 1200x32", DAGParams{Tasks: 1200, Seed: 3}, TraceParams{Workers: 32, Seed: 3, TransferProb: 0.5, TransferMeanMS: 0.5}, "2aecc847be2464fff6db6e8513c1860c1402e4164b5f3c0f215bbcfb021b3591"},
		{"sized 500x4", DAGParams{Tasks: 500, Seed: 9}, TraceParams{Workers: 4, Seed: 9, Codelets: gemm, TransferProb: 0.2, TransferMeanMS: 2, OverheadMS: 0.01, StartMS: 50}, "fa6bcd9e13300e7c2648c3b6a91ec67bcb8ce3e98d848a157d33edb2f6c0dc48"},
		{"tiny 6x3", DAGParams{Tasks: 6, Seed: 2}, TraceParams{Workers: 3, Seed: 2}, "1572bbd42564c26b21662f161ebef0a68ef130b2f35a8d577539b3bf316be7cd"},
	}
}

func TestWriteTraceGolden(t *testing.T) {
	for _, c := range goldenCases() {
		d, err := NewDAG(c.dag)
		if err != nil {
			t.Fatal(err)
		}
		h := sha256.New()
		if _, err := WriteTrace(h, d, c.trace); err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprintf("%x", h.Sum(nil)); got != c.sum {
			t.Errorf("%s: trace's SHA-256 %s, want %s", c.name, got, c.sum)
		}
	}
}
