package app

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
)

// labctl's exit codes, the same for every command (docs/cli.md and
// `labctl help exit-codes` say so to users).
const (
	// exitFailed: the learner's work fails (a check, a grade, a lab that
	// does not prove itself, a lab file or machine with problems).
	exitFailed = 1
	// exitError: labctl could not run, usage errors included.
	exitError = 2
	// exitNotUp: `labctl status` found the lab not up.
	exitNotUp = 3
	// exitInterrupted: Ctrl-C or SIGTERM stopped an up or a shell.
	exitInterrupted = 130
)

const exitCodesHelp = `Every labctl command exits with one of these codes:

  0    passed: the command did what it was asked; check and grade: the work passes
  1    the work fails: a check or the grade failed, the lab does not prove itself
       (test), lint found problems in the lab file, doctor found the machine unfit
  2    could not run: a usage error (unknown command or flag, wrong arguments, a
       bad --output value), a lab file that does not load, a lab that is not up,
       Docker failing, or a check that could not run (not the learner's fault)
  3    status only: the lab is not up
  130  up or shell was interrupted (Ctrl-C)

exec and shell exit with the code of the command or shell they ran.`

// usageError is a mistake in the command line: exit code 2, and a pointer
// to the command's help.
type usageError struct {
	cmd *cobra.Command
	err error
}

func (e *usageError) Error() string {
	return fmt.Sprintf("%v\nRun `%s --help` for usage.", e.err, e.cmd.CommandPath())
}

func (e *usageError) Unwrap() error { return e.err }

// exitCode is the exit code err asks for: an ExitError's own, 2 for
// anything else (labctl could not do what it was asked).
func exitCode(err error) int {
	var exit *ExitError
	if errors.As(err, &exit) {
		return exit.Code
	}
	return exitError
}

// applyConventions makes every command below root follow labctl's command
// line conventions: argument and flag mistakes are usage errors (exit 2),
// a command group given an unknown subcommand says so instead of printing
// its help, and the default help and completion commands exist with
// examples.
func applyConventions(root *cobra.Command) {
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	root.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error {
		return &usageError{cmd: cmd, err: err}
	})
	for _, c := range root.Commands() {
		switch c.Name() {
		case "help":
			c.Example = "  labctl help grade\n  labctl help exit-codes"
		case "completion":
			c.Example = "  source <(labctl completion bash)\n  labctl completion zsh > \"${fpath[1]}/_labctl\"\n  labctl completion fish | source"
			for _, sh := range c.Commands() {
				if sh.Example == "" {
					sh.Example = "  labctl completion " + sh.Name()
				}
			}
		}
	}
	walk(root, func(c *cobra.Command) {
		c.SuggestionsMinimumDistance = 2
		if c.HasSubCommands() && !c.Runnable() {
			c.Args = unknownSubcommand
			c.RunE = func(cmd *cobra.Command, _ []string) error { return cmd.Help() }
		}
		if c.Args != nil {
			args := c.Args
			c.Args = func(cmd *cobra.Command, a []string) error {
				if err := args(cmd, a); err != nil {
					return &usageError{cmd: cmd, err: err}
				}
				return nil
			}
		}
	})
}

// unknownSubcommand accepts no argument: a command group's argument is an
// unknown subcommand.
func unknownSubcommand(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	msg := fmt.Sprintf("unknown command %q for %q", args[0], cmd.CommandPath())
	if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
		msg += "; did you mean " + strings.Join(s, " or ") + "?"
	}
	return errors.New(msg)
}

func walk(c *cobra.Command, fn func(*cobra.Command)) {
	fn(c)
	for _, sub := range c.Commands() {
		walk(sub, fn)
	}
}

// newExitCodesTopic is `labctl help exit-codes`.
func newExitCodesTopic() *cobra.Command {
	return &cobra.Command{
		Use:     "exit-codes",
		Short:   "What labctl's exit codes mean",
		Long:    exitCodesHelp,
		Example: "  labctl grade; echo $?",
	}
}
