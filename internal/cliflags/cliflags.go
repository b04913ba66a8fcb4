// Package cliflags declares a command's flags from the struct that holds
// its options, so that an option, its flag and its help are written once,
// beside the code that uses them (the specs a command runs), instead of a
// second time in the command.
//
// A field tagged `flag:"NAME"` — or `flag:"NAME,X"` with a one-letter
// shorthand X — and `help:"TEXT"` becomes the flag --NAME, whose default is
// the field's value when Bind is called. Field types: string, bool, int,
// int32, uint64, float64, time.Duration, []string (a repeatable flag; `list:"comma"` also splits
// on commas), any type whose pointer is a pflag.Value (also as a pointer field,
// allocated when nil), and float64 with
// `unit:"s"` (or ms, us, ns): a duration (100ms) or a number in that unit.
// Embedded structs contribute their fields (unless tagged `flag:"-"`);
// untagged fields are skipped. `alias:"OLD"` also binds the deprecated,
// hidden --OLD to the same value (a renamed flag that keeps working).
//
// A bad flag value found where the options are used is a UsageError
// (Usage): the CLI exits with 2 on it, so the checks live beside the
// options, not in the commands.
package cliflags

import (
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/tracecast/tracecast"
)

var valueType = reflect.TypeFor[pflag.Value]()

// Bind adds a flag to fs for every tagged field of *opts. A field of a type
// it cannot bind is a programming error: Bind panics, at start-up.
func Bind(fs *pflag.FlagSet, opts any) {
	v := reflect.ValueOf(opts)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		panic(fmt.Sprintf("cliflags.Bind: %T is not a pointer to a struct", opts))
	}
	bind(fs, v.Elem())
}

func bind(fs *pflag.FlagSet, v reflect.Value) {
	var aliases [][2]string // name, old name: bound once name is
	defer func() {
		for _, a := range aliases {
			alias(fs, a[0], a[1])
		}
	}()
	t := v.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		tag, ok := f.Tag.Lookup("flag") // one scan of the tag: every command binds at start-up
		if tag == "-" {
			continue
		}
		fv := v.Field(i)
		if f.Anonymous && f.Type.Kind() == reflect.Struct {
			bind(fs, fv)
			continue
		}
		if !ok {
			continue
		}
		name, short, _ := strings.Cut(tag, ",")
		help := f.Tag.Get("help")
		if old := f.Tag.Get("alias"); old != "" {
			aliases = append(aliases, [2]string{name, old})
		}
		if fv.Kind() == reflect.Pointer && fv.Type().Implements(valueType) {
			if fv.IsNil() { // an optional value: bound, so given
				fv.Set(reflect.New(fv.Type().Elem()))
			}
			fs.VarP(fv.Interface().(pflag.Value), name, short, help)
			continue
		}
		p := fv.Addr().Interface()
		switch {
		case fv.Addr().Type().Implements(valueType):
			fs.VarP(p.(pflag.Value), name, short, help)
		case f.Tag.Get("unit") != "" && fv.Kind() == reflect.Float64:
			fs.VarP(tracecast.DurationIn(p.(*float64), f.Tag.Get("unit")), name, short, help)
		default:
			switch p := p.(type) {
			case *string:
				fs.StringVarP(p, name, short, *p, help)
			case *bool:
				fs.BoolVarP(p, name, short, *p, help)
			case *int:
				fs.IntVarP(p, name, short, *p, help)
			case *int32:
				fs.Int32VarP(p, name, short, *p, help)
			case *uint64:
				fs.Uint64VarP(p, name, short, *p, help)
			case *float64:
				fs.Float64VarP(p, name, short, *p, help)
			case *time.Duration:
				fs.DurationVarP(p, name, short, *p, help)
			case *[]string:
				if f.Tag.Get("list") == "comma" {
					fs.StringSliceVarP(p, name, short, *p, help)
				} else {
					fs.StringArrayVarP(p, name, short, *p, help)
				}
			default:
				panic(fmt.Sprintf("cliflags.Bind: field %s of type %s", f.Name, f.Type))
			}
		}
	}
}

// alias binds --old to the value of --name, hidden from the help and
// deprecated: using it works, with a message naming --name.
func alias(fs *pflag.FlagSet, name, old string) {
	f := fs.Lookup(name)
	fs.Var(f.Value, old, f.Usage)
	if err := fs.MarkDeprecated(old, "use --"+name); err != nil {
		panic(fmt.Sprintf("cliflags.Bind: alias --%s: %v", old, err))
	}
}
