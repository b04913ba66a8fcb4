// Package runsort sorts stably a slice made of a few sorted runs — the
// changes of several containers, each in time order, appended one
// container after the other — by merging the runs it finds: n·log₂(k)
// moves for k runs, where slices.SortStableFunc's insertion sorts and
// in-place merges take O(n·log²n) whatever the input (a tenth of the
// report's spell overlay). The result is slices.SortStableFunc's.
package runsort

// Stable sorts s by cmp, keeping the order of equal elements, with buf as
// scratch space (grown when too small); it returns buf for the next call.
func Stable[T any](s []T, cmp func(a, b T) int, buf []T) []T {
	var bounds []int // the runs' starts, then len(s)
	var small [64]int
	bounds = small[:0]
	bounds = append(bounds, 0)
	for i := 1; i < len(s); i++ {
		if cmp(s[i-1], s[i]) > 0 {
			bounds = append(bounds, i)
		}
	}
	if len(bounds) == 1 {
		return buf
	}
	bounds = append(bounds, len(s))
	if cap(buf) < len(s) {
		buf = make([]T, len(s))
	}
	buf = buf[:len(s)]
	src, dst := s, buf
	for len(bounds) > 2 {
		k := 0
		for i := 0; i+1 < len(bounds); i += 2 {
			lo, mid := bounds[i], bounds[i+1]
			hi := mid
			if i+2 < len(bounds) {
				hi = bounds[i+2]
			}
			merge(dst[lo:hi], src[lo:mid], src[mid:hi], cmp)
			bounds[k] = lo
			k++
		}
		bounds[k] = len(s)
		bounds = bounds[:k+1]
		src, dst = dst, src
	}
	if &src[0] != &s[0] {
		copy(s, src)
	}
	return buf
}

// merge merges the sorted a and b into dst, a's first among equals.
func merge[T any](dst, a, b []T, cmp func(a, b T) int) {
	i, j, k := 0, 0, 0
	for i < len(a) && j < len(b) {
		if cmp(b[j], a[i]) < 0 {
			dst[k] = b[j]
			j++
		} else {
			dst[k] = a[i]
			i++
		}
		k++
	}
	k += copy(dst[k:], a[i:])
	copy(dst[k:], b[j:])
}
