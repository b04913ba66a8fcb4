//go:build !race

package paje

const raceEnabled = false
