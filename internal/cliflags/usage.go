package cliflags

import (
	"errors"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// UsageError is a usage error: a bad flag, argument or option value. The
// CLI exits with 2 on it, 1 on any other failure.
type UsageError struct{ Err error }

func (e UsageError) Error() string { return e.Err.Error() }
func (e UsageError) Unwrap() error { return e.Err }

// Usage makes err a usage error; nil stays nil, so that a check's result
// can be returned as it is.
func Usage(err error) error {
	if err == nil {
		return nil
	}
	return UsageError{err}
}

// UsageArgs makes a wrong number of arguments, in c and every command
// under it, a usage error like a bad flag.
func UsageArgs(c *cobra.Command) {
	if check := c.Args; check != nil {
		c.Args = func(cmd *cobra.Command, args []string) error { return Usage(check(cmd, args)) }
	}
	for _, sub := range c.Commands() {
		UsageArgs(sub)
	}
}

// Require is a usage error naming every flag of names that fs was not
// given ("missing --fmin, --fmax"), nil when all were.
func Require(fs *pflag.FlagSet, names ...string) error {
	var missing []string
	for _, n := range names {
		if !fs.Changed(n) {
			missing = append(missing, "--"+n)
		}
	}
	if len(missing) > 0 {
		return UsageError{errors.New("missing " + strings.Join(missing, ", "))}
	}
	return nil
}

// Given is v when fs was given the flag name, nil otherwise: an optional
// value whose zero is a value too.
func Given[T any](fs *pflag.FlagSet, name string, v *T) *T {
	if fs.Changed(name) {
		return v
	}
	return nil
}
