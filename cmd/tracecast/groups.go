package main

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
	"github.com/spf13/pflag"
)

// commandGroups are the headings of `tracecast --help`, one per job, in
// order, with the commands under each. help and completion stay under
// "Additional Commands".
var commandGroups = []struct {
	id, title string
	commands  []string
}{
	{"start", "Start here:", []string{"demo", "report"}},
	{"read", "Read traces:", []string{"states", "signal", "ks", "hitrate"}},
	{"forecast", "Forecast and decide:", []string{"predict", "verify", "backfill"}},
	{"live", "The live service:", []string{"live", "broker", "publish", "subscribe", "topics"}},
	{"pipelines", "Pipelines:", []string{"run", "validate", "components"}},
	{"energy", "Energy:", []string{"energy", "powermodel", "ctmodel", "energy-speedup", "pareto"}},
	{"io", "I/O:", []string{"iocalls", "iotime", "iobench", "iopredict"}},
	{"tasks", "Task models:", []string{"tasks", "fit-model", "predict-task"}},
	{"study", "The window-size study (Pallipuram et al. 2014):", []string{"synth", "train", "reproduce"}},
}

// groupCommands puts root's commands under their headings; a command that
// is named in no group, or a group naming no command, panics: a new
// command must say where it belongs (TestCommandGroups).
func groupCommands(root *cobra.Command) {
	byName := map[string]*cobra.Command{}
	for _, c := range root.Commands() {
		byName[c.Name()] = c
	}
	for _, g := range commandGroups {
		root.AddGroup(&cobra.Group{ID: g.id, Title: g.title})
		for _, name := range g.commands {
			c := byName[name]
			if c == nil {
				panic(fmt.Sprintf("command group %q names %q, which is no command", g.id, name))
			}
			c.GroupID = g.id
		}
	}
	for _, c := range root.Commands() {
		if c.GroupID == "" && !c.Hidden && c.Name() != "help" {
			panic(fmt.Sprintf("command %q is in no group of commandGroups (groups.go)", c.Name()))
		}
	}
}

// newGenDocsCmd is the hidden `tracecast gen-docs DIR` (make docs): the
// command reference, one Markdown page per command, generated from the
// commands themselves into DIR (docs/commands). TestCommandDocs fails when
// the committed pages are not what it writes.
func newGenDocsCmd() *cobra.Command {
	return &cobra.Command{
		Use:    "gen-docs DIR",
		Short:  "Write the command reference (Markdown, one page per command) into DIR",
		Hidden: true,
		Args:   cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			// The pages of commands that are gone go too.
			old, err := filepath.Glob(filepath.Join(args[0], "tracecast*.md"))
			if err == nil {
				err = os.MkdirAll(args[0], 0o755)
			}
			for _, f := range old {
				if err == nil {
					err = os.Remove(f)
				}
			}
			if err != nil {
				return err
			}
			return genDocs(newRootCmd(), args[0])
		},
	}
}

// perCore are the flags whose default is the number of cores (GOMAXPROCS).
var perCore = map[string]bool{"threads": true, "jobs": true}

// genDocs writes root's reference into dir. The pages must not depend on
// the machine or the day: no generation date, and the defaults that are
// the number of cores say so instead of this machine's number.
func genDocs(root *cobra.Command, dir string) error {
	cores := strconv.Itoa(runtime.GOMAXPROCS(0))
	var prepare func(*cobra.Command)
	prepare = func(c *cobra.Command) {
		c.DisableAutoGenTag = true
		c.Flags().VisitAll(func(f *pflag.Flag) {
			if perCore[f.Name] && f.DefValue == cores {
				f.DefValue = "the number of cores"
			}
		})
		for _, s := range c.Commands() {
			prepare(s)
		}
	}
	prepare(root)
	if err := doc.GenMarkdownTree(root, dir); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "README.md"), commandIndex(root), 0o644)
}

// commandIndex is the reference's index page: the commands under the
// headings of `tracecast --help`.
func commandIndex(root *cobra.Command) []byte {
	var b strings.Builder
	b.WriteString("# Command reference\n\nGenerated from the commands themselves by `make docs` " +
		"(`tracecast gen-docs docs/commands`); a test fails when it is stale. " +
		"The same text as `tracecast COMMAND --help`. Exit codes and global flags: [tracecast](tracecast.md).\n")
	for _, g := range root.Groups() {
		fmt.Fprintf(&b, "\n## %s\n\n", strings.TrimSuffix(g.Title, ":"))
		for _, c := range root.Commands() {
			if c.GroupID == g.ID {
				fmt.Fprintf(&b, "* [%s](tracecast_%s.md): %s\n", c.Name(), c.Name(), c.Short)
			}
		}
	}
	return []byte(b.String())
}
