// Package clidoc arranges a cobra command tree for its readers: the
// headings of its --help (command groups) and its reference in Markdown,
// one page per command, generated from the commands themselves with
// cobra/doc's page layout, the same on every machine and every day.
package clidoc

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// Group is a heading of --help and the names of the commands under it.
type Group struct {
	ID, Title string
	Commands  []string
}

// Apply puts root's commands under their headings, in the order of
// groups. A group naming no command, or a visible command in no group (but
// help), panics: a new command must say where it belongs.
func Apply(root *cobra.Command, groups []Group) {
	byName := map[string]*cobra.Command{}
	for _, c := range root.Commands() {
		byName[c.Name()] = c
	}
	for _, g := range groups {
		root.AddGroup(&cobra.Group{ID: g.ID, Title: g.Title})
		for _, name := range g.Commands {
			c := byName[name]
			if c == nil {
				panic(fmt.Sprintf("command group %q names %q, which is no command", g.ID, name))
			}
			c.GroupID = g.ID
		}
	}
	for _, c := range root.Commands() {
		if c.GroupID == "" && !c.Hidden && c.Name() != "help" {
			panic(fmt.Sprintf("command %q is in no command group", c.Name()))
		}
	}
}

// Generate writes root's reference into dir (created if need be): a page
// per command (cobra/doc's GenMarkdownTree pages: markdown.go), the pages of commands that are
// gone removed, and README.md, the commands under their headings. The
// pages must not depend on the machine or the day: no generation date,
// and a flag of perCore whose default is this machine's GOMAXPROCS says
// "the number of cores" instead.
func Generate(root *cobra.Command, dir string, perCore map[string]bool) error {
	old, err := filepath.Glob(filepath.Join(dir, root.Name()+"*.md"))
	if err == nil {
		err = os.MkdirAll(dir, 0o755)
	}
	for _, f := range old {
		if err == nil {
			err = os.Remove(f)
		}
	}
	if err != nil {
		return err
	}
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
	if err := genMarkdownTree(root, dir); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "README.md"), index(root), 0o644)
}

// index is the reference's index page: the commands under the headings of
// --help.
func index(root *cobra.Command) []byte {
	name := root.Name()
	var b strings.Builder
	fmt.Fprintf(&b, "# Command reference\n\nGenerated from the commands themselves by `make docs` "+
		"(`%s gen-docs docs/commands`); a test fails when it is stale. "+
		"The same text as `%s COMMAND --help`. Exit codes and global flags: [%s](%s.md).\n", name, name, name, name)
	for _, g := range root.Groups() {
		fmt.Fprintf(&b, "\n## %s\n\n", strings.TrimSuffix(g.Title, ":"))
		for _, c := range root.Commands() {
			if c.GroupID == g.ID {
				fmt.Fprintf(&b, "* [%s](%s_%s.md): %s\n", c.Name(), name, c.Name(), c.Short)
			}
		}
	}
	return []byte(b.String())
}
