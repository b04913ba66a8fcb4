package paje

import "golang.org/x/sys/cpu"

// markWords sets dst[w] to the specials of data[64w:64w+64] (markSpecials);
// len(data) is 64·len(dst). With AVX2, 64 bytes take two compares a
// half and two mask moves (bits_amd64.s): a tenth of markWordsGo's
// instructions.
func markWords(dst []uint64, data []byte) {
	if len(dst) == 0 {
		return
	}
	if useAVX2 {
		markAVX2(&dst[0], &data[0], len(dst))
		return
	}
	markWordsGo(dst, data)
}

var useAVX2 = cpu.X86.HasAVX2

//go:noescape
func markAVX2(dst *uint64, src *byte, n int)
