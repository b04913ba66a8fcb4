//go:build !race

package ks

const raceEnabled = false
