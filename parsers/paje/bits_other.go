//go:build !amd64

package paje

// markWords sets dst[w] to the specials of data[64w:64w+64] (markSpecials).
func markWords(dst []uint64, data []byte) { markWordsGo(dst, data) }
