package main

import (
	"bytes"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"

	"github.com/airunway-render/airunway-render/cli"
)

// cliReference renders every command's help, as cobra's doc generator
// writes it, into one page: a section per command, the "see also" links
// pointing at sections of the same page.
func cliReference() (string, error) {
	var b bytes.Buffer
	if err := writeCommand(&b, cli.Command()); err != nil {
		return "", err
	}
	return demoteHeadings(b.String()), nil
}

// demoteHeadings moves the generator's headings two levels down: it writes
// a page per command (`## command`, `### Options`); here each command is a
// section of one page.
func demoteHeadings(md string) string {
	lines := strings.SplitAfter(md, "\n")
	fenced := false
	for i, l := range lines {
		if strings.HasPrefix(l, "```") {
			fenced = !fenced
		}
		if !fenced && strings.HasPrefix(l, "#") {
			lines[i] = "#" + l
		}
	}
	return strings.Join(lines, "")
}

func writeCommand(b *bytes.Buffer, cmd *cobra.Command) error {
	cmd.DisableAutoGenTag = true // no date: the page is regenerated and compared
	anchor := func(file string) string {
		return "#" + strings.ReplaceAll(strings.TrimSuffix(file, ".md"), "_", "-")
	}
	if err := doc.GenMarkdownCustom(cmd, b, anchor); err != nil {
		return err
	}
	for _, c := range cmd.Commands() {
		if !c.IsAvailableCommand() || c.IsAdditionalHelpTopicCommand() {
			continue
		}
		b.WriteString("\n")
		if err := writeCommand(b, c); err != nil {
			return err
		}
	}
	return nil
}
