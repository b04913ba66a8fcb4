//go:build race

package paje

// raceEnabled: the race detector makes the reader 5 to 10 times slower; the
// longest comparisons run on fewer inputs under it (the concurrency they
// check is the same on small ones).
const raceEnabled = true
