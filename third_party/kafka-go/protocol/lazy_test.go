package protocol_test

import (
	"reflect"
	"slices"
	"sync"
	"testing"

	kafka "github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/protocol"
)

var _ kafka.Client // kafka-go imports (and registers) every API it speaks

// TestLazyRegistration: the codecs built on first use, from many goroutines
// at once, are those Register used to build at init: the same versions,
// flexibility and Go types for every API.
func TestLazyRegistration(t *testing.T) {
	n := 0
	var wg sync.WaitGroup
	for k := 0; k < protocol.NumApis(); k++ {
		key := protocol.ApiKey(k)
		reqT, resT, ok := protocol.Registered(key)
		if !ok {
			continue
		}
		n++
		for range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				req, res, fq, fs := protocol.LazyTypes(key)
				for _, c := range []struct {
					got  []reflect.Type
					flex []bool
					want reflect.Type
				}{{req, fq, reqT}, {res, fs, resT}} {
					versions, flex := protocol.EagerVersions(c.want)
					if len(c.got) != len(versions) || !slices.Equal(c.flex, flex) {
						t.Errorf("%s: %d versions %v, want %d %v", key, len(c.got), c.flex, len(versions), flex)
					}
					for _, g := range c.got {
						if g != c.want {
							t.Errorf("%s: type %v, want %v", key, g, c.want)
						}
					}
				}
				if key.MinVersion() != versionsOf(reqT)[0] || key.MaxVersion() != slices.Max(versionsOf(reqT)) {
					t.Errorf("%s: versions %d-%d", key, key.MinVersion(), key.MaxVersion())
				}
			}()
		}
	}
	wg.Wait()
	if n < 30 {
		t.Fatalf("only %d APIs registered", n)
	}
}

func versionsOf(t reflect.Type) []int16 {
	v, _ := protocol.EagerVersions(t)
	return v
}
