package app

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/labctl/labctl/internal/labread"
	"github.com/labctl/labctl/internal/textsafe"
	"github.com/labctl/labctl/lab"
	"github.com/labctl/labctl/usecase/labstore"
)

func newLintCommand(g *globals) *cobra.Command {
	var strict bool
	cmd := &cobra.Command{
		Use:   "lint [FILE|DIR]",
		Short: "Check a lab file and report every problem with its line",
		Long: "lint loads a lab file strictly (FILE, or DIR/lab.yaml, else --lab, else ./lab.yaml, else the built-in lab),\n" +
			"prints every problem as file:line:column: field: message on stderr, a summary on stdout,\n" +
			"and exits 1 when there are problems: a step whose checks are all placeholders or whose solve only fails is one,\n" +
			"unless the lab is marked metadata.draft: true. Warnings (file:line:column: warning: ...) do not fail it unless --strict.\n" +
			"With -v it also lists the cluster objects the lab's checks read, which are all the grader may read, its\n" +
			"probes, and what the lab may do: what `labctl install` shows, and what needs --allow-host-access.",
		Example: "  labctl lint\n  labctl lint --strict my-lab/lab.yaml\n  labctl lint my-lab\n  labctl lint -v",
		Args:    cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			file := ""
			if len(args) == 1 {
				file = args[0]
			}
			return runLint(g, file, strict)
		},
	}
	cmd.Flags().BoolVar(&strict, "strict", false, "exit 1 on warnings too")
	return cmd
}

func runLint(g *globals, file string, strict bool) error {
	var (
		l      *lab.Lab
		source = file
		err    error
	)
	if file != "" {
		// A lab's directory names its lab file, as --lab DIR does; a link
		// to one is left to the reader, which refuses it.
		if fi, statErr := os.Lstat(file); statErr == nil && fi.IsDir() {
			file = filepath.Join(file, "lab.yaml")
			source = file
		}
		_, l, err = labstore.Read(file)
	} else {
		l, _, source, _, err = g.loadLabAsWritten()
	}
	var problems lab.Errors
	if errors.As(err, &problems) {
		for _, p := range problems {
			fmt.Fprintln(g.streams.Err, textsafe.EscapeLine(p.Error()))
		}
		return &ExitError{Code: exitFailed, Err: fmt.Errorf("%s: %s", source, count(len(problems), "problem"))}
	}
	// What the reader refuses (links, FIFOs, devices, host tools'
	// configuration, a lab too large) is a problem of the lab.
	var linkErr *labread.LinkError
	var hostErr *labread.HostToolFileError
	var limitErr *labread.LimitError
	if errors.As(err, &linkErr) || errors.As(err, &hostErr) || errors.As(err, &limitErr) {
		fmt.Fprintln(g.streams.Err, textsafe.EscapeLine(err.Error()))
		return &ExitError{Code: exitFailed, Err: fmt.Errorf("%s: 1 problem", source)}
	}
	if err != nil {
		return err
	}
	// A step that proves nothing yet is a problem of a finished lab, and a
	// warning of a draft (metadata.draft), which Lint reports.
	if unfinished := l.Unfinished(); !l.Metadata.Draft && len(unfinished) > 0 {
		for _, w := range unfinished {
			e := lab.Error{File: w.File, Line: w.Line, Column: w.Column, Path: w.Path,
				Msg: w.Msg + " (or mark the lab metadata.draft: true while it is being written)"}
			fmt.Fprintln(g.streams.Err, textsafe.EscapeLine(e.Error()))
		}
		return &ExitError{Code: exitFailed, Err: fmt.Errorf("%s: %s", source, count(len(unfinished), "problem"))}
	}
	warnings := l.Lint()
	for _, w := range warnings {
		fmt.Fprintln(g.streams.Err, textsafe.EscapeLine(w.String()))
	}
	if strict && len(warnings) > 0 {
		return &ExitError{Code: exitFailed, Err: fmt.Errorf("%s: %s (--strict)", source, count(len(warnings), "warning"))}
	}
	checks := 0
	for _, s := range l.Steps {
		checks += len(s.Checks)
	}
	if _, err = fmt.Fprintf(g.streams.Out, "%s: OK (%s, %s)\n", textsafe.EscapeLine(source), count(len(l.Steps), "step"), count(checks, "check")); err != nil {
		return err
	}
	if g.verbose() {
		if err := printGraderReads(g.streams.Out, l); err != nil {
			return err
		}
		if err := printProbes(g.streams.Out, l); err != nil {
			return err
		}
		return printPowers(g.streams.Out, l)
	}
	return nil
}

// printProbes lists the steps whose checks run the learner's work through
// a probe, and with which identities.
func printProbes(w io.Writer, l *lab.Lab) error {
	probes := l.ProbeSummary()
	return printList(w, probes,
		"No step has a probe: the checks only read what the learner left.",
		fmt.Sprintf("%s, each running the learner's work before its step's checks (in check, grade, test and the shell's lab check):", count(len(probes), "probe")))
}

// printGraderReads lists what the lab's checks read of the cluster: the
// grader's credentials may get exactly these objects, list the kinds a
// selector lists, ask about access when an access check does, and nothing
// else.
func printGraderReads(w io.Writer, l *lab.Lab) error {
	var items []string
	for _, r := range l.KubeReads() {
		if r.List {
			items = append(items, r.String())
		} else {
			items = append(items, "get "+r.String())
		}
	}
	if l.AsksAccess() {
		items = append(items, "ask the API server what an identity may do (SubjectAccessReview)")
	}
	for _, ns := range l.ReachNamespaces() {
		items = append(items, "start, list and delete Pods in "+ns+", for its reach checks")
	}
	for _, ns := range l.MatrixNamespaces() {
		items = append(items, "seal (patch) its own prober Pods in "+ns+", for its matrix checks")
	}
	return printList(w, items,
		"The grader may read no cluster object: no check reads the cluster.",
		"The grader may do exactly this of the cluster (no watch, nothing else):")
}

// printList writes none when items is empty, else header and one indented
// line per item.
func printList[T any](w io.Writer, items []T, none, header string) error {
	if len(items) == 0 {
		_, err := fmt.Fprintln(w, none)
		return err
	}
	var b strings.Builder
	b.WriteString(header + "\n")
	for _, it := range items {
		fmt.Fprintf(&b, "  %s\n", textsafe.EscapeLine(fmt.Sprint(it)))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// count writes n and noun, plural unless n is 1.
func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
