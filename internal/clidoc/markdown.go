package clidoc

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"
)

// The pages are cobra/doc's GenMarkdownTree pages (spf13/cobra v1.10,
// doc/md_docs.go, Apache-2.0), written here rather than imported: cobra/doc
// also holds the man-page generator, which links go-md2man and blackfriday,
// whose initializers (blackfriday's HTML entity table) ran at every start of
// every command for the sake of a hidden one (about 0.5 ms, issue 38).
// TestCommandDocs compares the pages with the committed ones, which
// cobra/doc wrote.

// genMarkdownTree writes the page of cmd and of every available command
// below it into dir, named by the command path with spaces as underscores.
func genMarkdownTree(cmd *cobra.Command, dir string) error {
	for _, c := range cmd.Commands() {
		if !c.IsAvailableCommand() || c.IsAdditionalHelpTopicCommand() {
			continue
		}
		if err := genMarkdownTree(c, dir); err != nil {
			return err
		}
	}
	name := filepath.Join(dir, strings.ReplaceAll(cmd.CommandPath(), " ", "_")+".md")
	return os.WriteFile(name, markdownPage(cmd), 0o644)
}

// markdownPage is cmd's page. The pages carry no generation date (Generate
// sets DisableAutoGenTag on every command).
func markdownPage(cmd *cobra.Command) []byte {
	cmd.InitDefaultHelpCmd()
	cmd.InitDefaultHelpFlag()
	buf := new(bytes.Buffer)
	name := cmd.CommandPath()
	buf.WriteString("## " + name + "\n\n")
	buf.WriteString(cmd.Short + "\n\n")
	if len(cmd.Long) > 0 {
		buf.WriteString("### Synopsis\n\n")
		buf.WriteString(cmd.Long + "\n\n")
	}
	if cmd.Runnable() {
		fmt.Fprintf(buf, "```\n%s\n```\n\n", cmd.UseLine())
	}
	if len(cmd.Example) > 0 {
		buf.WriteString("### Examples\n\n")
		fmt.Fprintf(buf, "```\n%s\n```\n\n", cmd.Example)
	}
	if flags := cmd.NonInheritedFlags(); flags.HasAvailableFlags() {
		flags.SetOutput(buf)
		buf.WriteString("### Options\n\n```\n")
		flags.PrintDefaults()
		buf.WriteString("```\n\n")
	}
	if flags := cmd.InheritedFlags(); flags.HasAvailableFlags() {
		flags.SetOutput(buf)
		buf.WriteString("### Options inherited from parent commands\n\n```\n")
		flags.PrintDefaults()
		buf.WriteString("```\n\n")
	}
	if hasSeeAlso(cmd) {
		buf.WriteString("### SEE ALSO\n\n")
		if cmd.HasParent() {
			parent := cmd.Parent()
			pname := parent.CommandPath()
			fmt.Fprintf(buf, "* [%s](%s)\t - %s\n", pname, strings.ReplaceAll(pname+".md", " ", "_"), parent.Short)
		}
		children := slices.Clone(cmd.Commands())
		slices.SortFunc(children, func(a, b *cobra.Command) int { return strings.Compare(a.Name(), b.Name()) })
		for _, child := range children {
			if !child.IsAvailableCommand() || child.IsAdditionalHelpTopicCommand() {
				continue
			}
			cname := name + " " + child.Name()
			fmt.Fprintf(buf, "* [%s](%s)\t - %s\n", cname, strings.ReplaceAll(cname+".md", " ", "_"), child.Short)
		}
		buf.WriteString("\n")
	}
	return buf.Bytes()
}

// hasSeeAlso reports whether cmd's page links elsewhere: it has a parent
// or an available subcommand.
func hasSeeAlso(cmd *cobra.Command) bool {
	if cmd.HasParent() {
		return true
	}
	for _, c := range cmd.Commands() {
		if c.IsAvailableCommand() && !c.IsAdditionalHelpTopicCommand() {
			return true
		}
	}
	return false
}
