package main

import "testing"

func BenchmarkRootCmd(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		newRootCmd()
	}
}
