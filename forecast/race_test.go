//go:build race

package forecast

// raceEnabled: the race detector makes the engine 10 times slower; the
// randomized comparisons run on shorter inputs under it.
const raceEnabled = true
