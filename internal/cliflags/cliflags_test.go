package cliflags

import (
	"io"
	"reflect"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/tracecast/tracecast"
)

type inner struct {
	Lenient bool `flag:"lenient" help:"skip bad lines"`
}

type opts struct {
	inner
	Skipped  struct{ X int }     `flag:"-"`
	Path     string              `flag:"output,o" help:"where"`
	N        int                 `flag:"n" help:"how many"`
	Seed     uint64              `flag:"seed" help:"seed"`
	Alpha    float64             `flag:"alpha" help:"level"`
	Gap      float64             `flag:"max-gap" unit:"s" help:"gap"`
	Period   tracecast.TraceTime `flag:"period" help:"period"`
	Map      []string            `flag:"map" help:"repeatable"`
	Groups   []string            `flag:"group" list:"comma" help:"comma list"`
	Untagged string
}

func TestBind(t *testing.T) {
	o := opts{Path: "-", N: 3, Gap: 5, Groups: []string{"a"}}
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	Bind(fs, &o)
	for name, def := range map[string]string{"output": "-", "n": "3", "max-gap": "5s", "lenient": "false", "group": "[a]", "seed": "0"} {
		if f := fs.Lookup(name); f == nil || f.DefValue != def {
			t.Errorf("--%s: %+v, want default %q", name, f, def)
		}
	}
	if fs.Lookup("untagged") != nil || fs.Lookup("x") != nil || fs.ShorthandLookup("o") == nil {
		t.Error("flags:", fs.FlagUsages())
	}
	err := fs.Parse([]string{"-o", "x", "--n", "4", "--seed", "9", "--alpha", "0.1", "--max-gap", "250ms", "--period", "2ms",
		"--map", "a=b,c", "--map", "d=e", "--group", "x,y", "--lenient"})
	if err != nil {
		t.Fatal(err)
	}
	want := opts{inner: inner{Lenient: true}, Path: "x", N: 4, Seed: 9, Alpha: 0.1, Gap: 0.25, Map: []string{"a=b,c", "d=e"}, Groups: []string{"x", "y"}}
	want.Period.Set("2ms")
	if !reflect.DeepEqual(o, want) {
		t.Errorf("got %+v\nwant %+v", o, want)
	}
}

func TestBindPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("a field of type map bound without a panic")
		}
	}()
	Bind(pflag.NewFlagSet("t", pflag.ContinueOnError), &struct {
		M map[string]int `flag:"m"`
	}{})
}

// TestBindAlias: a field tagged alias:"OLD" is also bound as --OLD, hidden
// and deprecated (pflag says so when it is used), setting the same value.
func TestBindAlias(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want float64
	}{
		{[]string{"--transfer", "2ms"}, 2},
		{[]string{"--transfer-ms", "500us"}, 0.5},
		{[]string{"--transfer-ms", "3"}, 3},
		{nil, 1},
	} {
		o := struct {
			Transfer float64 `flag:"transfer" alias:"transfer-ms" unit:"ms" help:"mean transfer time"`
		}{Transfer: 1}
		fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
		fs.SetOutput(io.Discard)
		Bind(fs, &o)
		if err := fs.Parse(tc.args); err != nil || o.Transfer != tc.want {
			t.Errorf("%v: %v, %v; want %v", tc.args, o.Transfer, err, tc.want)
		}
		old := fs.Lookup("transfer-ms")
		if old == nil || !old.Hidden || old.Deprecated == "" || !strings.Contains(old.Deprecated, "--transfer") {
			t.Errorf("alias: %+v", old)
		}
		if usage := fs.FlagUsages(); strings.Contains(usage, "transfer-ms") || !strings.Contains(usage, "(default 1ms)") {
			t.Errorf("help:\n%s", usage)
		}
	}
}
