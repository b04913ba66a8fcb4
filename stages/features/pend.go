package features

import "slices"

// pend holds the entities read and not yet swept, in arrival order since
// the last sweep and in cmp's order before. The consumed front of its
// array serves again: the live items are s[head:], s[head:sorted] in
// order. Reslicing the front away instead made every append past the
// array's end allocate a new one (600 bytes an entity), and moving the
// rest to the front at every sweep copied the states a task count's
// watermark held back (4% of predict's time).
type pend[T any] struct {
	s       []T
	head    int
	sorted  int
	scratch []T
}

// push appends x, first moving the live items to the front when the
// array is full and at least half of it is consumed (O(1) an item,
// amortized).
func (p *pend[T]) push(x T) {
	if len(p.s) == cap(p.s) && p.head > 0 && p.head >= len(p.s)/2 {
		n := copy(p.s, p.s[p.head:])
		clear(p.s[n:])
		p.s, p.sorted, p.head = p.s[:n], p.sorted-p.head, 0
	}
	p.s = append(p.s, x)
}

// order sorts the items come since the last call, merges them with the
// others (O(new + displacement + held) when they come nearly in order)
// and returns the live items.
func (p *pend[T]) order(cmp func(a, b T) int) []T {
	live := p.s[p.head:]
	n := p.sorted - p.head
	p.sorted = len(p.s)
	if n == len(live) {
		return live
	}
	fresh := live[n:]
	sortNearly(fresh, cmp)
	if n == 0 || cmp(live[n-1], fresh[0]) <= 0 {
		return live
	}
	out := p.scratch[:0]
	i, j := 0, n
	for i < n && j < len(live) {
		if cmp(live[j], live[i]) < 0 {
			out = append(out, live[j])
			j++
		} else {
			out = append(out, live[i])
			i++
		}
	}
	out = append(out, live[i:n]...)
	out = append(out, live[j:]...)
	clear(p.s)
	p.s, p.scratch, p.head, p.sorted = out, p.s[:0], 0, len(out)
	return out
}

// drop removes the first k live items.
func (p *pend[T]) drop(k int) {
	clear(p.s[p.head : p.head+k])
	p.head += k
	if p.head == len(p.s) {
		p.s, p.head, p.sorted = p.s[:0], 0, 0
	}
}

// sortNearly sorts s by cmp, stably. What the feed sorts is nearly in
// order (a container's states arrive at their end, an enclosing state
// after those it encloses): an insertion sort, O(len + displacement),
// which hands over to slices.SortStableFunc once it has moved more than 8
// items per item, so that a hostile order costs O(n log n). Stable,
// because a container's events can tie: a zero-length state's push and
// pop share its time and arrival, and must apply in the order made.
func sortNearly[T any](s []T, cmp func(a, b T) int) {
	budget := 8 * len(s)
	for i := 1; i < len(s); i++ {
		if cmp(s[i-1], s[i]) <= 0 {
			continue
		}
		x, j := s[i], i
		for ; j > 0 && cmp(x, s[j-1]) < 0; j-- {
			s[j] = s[j-1]
		}
		s[j] = x
		if budget -= i - j; budget < 0 {
			slices.SortStableFunc(s, cmp)
			return
		}
	}
}
