//go:build race

package parquet

// raceEnabled: the race detector multiplies run time and changes what the
// heap holds, so the memory measurement is skipped under it.
const raceEnabled = true
