// Package app holds labctl's cobra commands: each translates flags and
// configuration into a call into provision/, sandbox/, checks/, images/ or
// lab/, and nothing more.
package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/spf13/viper"

	"github.com/labctl/labctl/internal/msg"
)

// Streams are the command's standard streams, injected so tests can drive it.
type Streams struct {
	In  io.Reader
	Out io.Writer
	Err io.Writer
}

// globals is the command layer's factory, as gh's cmdutil.Factory is
// gh's: every command gets the streams, the configuration (flags,
// environment, config file), the lab and its state through it (loadLab,
// loadLabState), and reaches Docker and kind only through env, which the
// commands' unit tests replace with a fake.
type globals struct {
	streams Streams
	cfg     *viper.Viper
	env     environment
	// read is the lab file loadLab last read.
	read *readLab
}

// labPath is the lab file named by --lab, LABCTL_LAB or the config file, or
// "" for ./lab.yaml when present, else the embedded default lab.
func (g *globals) labPath() string { return g.cfg.GetString("lab") }

func (g *globals) verbose() bool { return g.cfg.GetBool("verbose") }
func (g *globals) quiet() bool   { return g.cfg.GetBool("quiet") }
func (g *globals) noColor() bool {
	_, set := os.LookupEnv("NO_COLOR")
	return set || g.cfg.GetBool("no-color")
}

// ExitError carries a specific exit code (a failed check, a learner shell's
// own code). Its message, if any, is printed once by Main.
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit status %d", e.Code)
	}
	return e.Err.Error()
}

func (e *ExitError) Unwrap() error { return e.Err }

// Main runs labctl with args and returns the process exit code. It is the one
// place that maps errors to exit codes and prints them.
func Main(in io.Reader, out, errOut io.Writer, args []string) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return Run(ctx, Streams{In: in, Out: out, Err: errOut}, args)
}

// Run is Main with a caller-supplied context. No Go stack trace reaches the
// user: a panic of labctl's becomes a one-line internal error (exit code 2)
// and a crash report of a program it ran is cut to its first line, both
// shown in full only with -v.
func Run(ctx context.Context, s Streams, args []string) int {
	return run(ctx, s, args, provisioned{})
}

// run is Run on the environment env.
func run(ctx context.Context, s Streams, args []string, env environment) int {
	root, g := newRoot(s, env)
	return runRoot(ctx, s, args, root, g)
}

func runRoot(ctx context.Context, s Streams, args []string, root *cobra.Command, g *globals) (code int) {
	defer func() {
		if p := recover(); p != nil {
			code = printPanic(s.Err, p, debug.Stack(), verboseArgs(g, args))
		}
	}()
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return 0
	}
	var exit *ExitError
	if errors.As(err, &exit) {
		if exit.Err != nil {
			printError(s.Err, exit.Err, verboseArgs(g, args))
		}
		return exit.Code
	}
	printError(s.Err, err, verboseArgs(g, args))
	return exitCode(err)
}

// verboseArgs is -v from the configuration once it is loaded, else from
// the arguments themselves.
func verboseArgs(g *globals, args []string) bool {
	if g.verbose() {
		return true
	}
	for _, a := range args {
		if a == "--" {
			break
		}
		if a == "-v" || a == "--verbose" || a == "--verbose=true" {
			return true
		}
	}
	return false
}

func newRoot(s Streams, env environment) (*cobra.Command, *globals) {
	g := &globals{streams: s, cfg: viper.New(), env: env}
	cmd := &cobra.Command{
		Use:   "labctl",
		Short: "Hands-on Kubernetes labs on your own machine, graded honestly",
		Long: "labctl gives you a sandboxed hands-on Kubernetes lab on your own machine (a kind cluster and a\n" +
			"sandbox container) and grades your work. Exit codes: `labctl help exit-codes`.",
		Example:       "  labctl up && labctl shell\n  labctl grade -o json\n  labctl --version",
		Args:          unknownSubcommand,
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			if err := loadConfig(g.cfg, cmd); err != nil {
				return err
			}
			return applyLang(g.cfg.GetString("lang"))
		},
	}
	cmd.SetIn(s.In)
	cmd.SetOut(s.Out)
	cmd.SetErr(s.Err)
	fl := cmd.PersistentFlags()
	fl.StringP("lab", "f", "", "the lab: an installed lab's `NAME`, gitops-drift (built in), or a lab file or directory "+
		"(default ./lab.yaml if present, else gitops-drift)")
	_ = cmd.RegisterFlagCompletionFunc("lab", completeLab(g))
	fl.BoolP("verbose", "v", false, "print more detail")
	fl.BoolP("quiet", "q", false, "print only results and errors")
	fl.Bool("no-color", false, "never use colour (NO_COLOR is honoured too)")
	fl.String("lang", "", "the `LANGUAGE` of labctl's messages and of the lab's texts when it has them in it, ja or en, whatever the locale (LABCTL_LANG)")

	cmd.AddCommand(
		newVersionCommand(g),
		newLintCommand(g),
		newSchemaCommand(g),
		newCheckerCommand(g),
		newHomeboundCommand(g),
		newUpCommand(g),
		newDownCommand(g),
		newStopCommand(g),
		newStartCommand(g),
		newExecCommand(g),
		newShellCommand(g),
		newUICommand(g),
		newOpenCommand(g),
		newStatusCommand(g),
		newCheckCommand(g),
		newGradeCommand(g),
		newResetCommand(g),
		newTestCommand(g),
		newImagesCommand(g),
		newPackCommand(g),
		newInstallCommand(g),
		newLabsCommand(g),
		newImportCommand(g),
		newClassCommand(g),
		newDoctorCommand(g),
		newExitCodesTopic(),
	)
	var version bool
	cmd.Flags().BoolVar(&version, "version", false, "print labctl's version, commit, Go and Kubernetes versions and image tags")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		if version {
			return writeVersion(g.streams.Out, textFormat)
		}
		return cmd.Help()
	}
	applyConventions(cmd)
	return cmd, g
}

// loadConfig binds, in order of precedence: flags, LABCTL_* environment
// variables, the config file (labctl/config.yaml in the user's config
// directory, or LABCTL_CONFIG), and defaults.
// applyLang makes lang (--lang, LABCTL_LANG or the config file's lang)
// the language of every message labctl chooses (msg.Choose reads
// LABCTL_LANG); empty leaves it to the lab and the locale.
func applyLang(lang string) error {
	if lang == "" {
		return nil
	}
	l, ok := msg.Parse(lang)
	if !ok {
		return &ExitError{Code: exitError, Err: fmt.Errorf("--lang %q: labctl speaks ja and en", lang)}
	}
	return os.Setenv(msg.EnvLang, string(l))
}

func loadConfig(v *viper.Viper, cmd *cobra.Command) error {
	v.SetEnvPrefix("LABCTL")
	v.SetEnvKeyReplacer(strings.NewReplacer("-", "_"))
	v.AutomaticEnv()
	if err := v.BindPFlags(cmd.Flags()); err != nil {
		return err
	}
	file := os.Getenv("LABCTL_CONFIG")
	if file == "" {
		dir, err := os.UserConfigDir()
		if err != nil {
			return nil
		}
		file = filepath.Join(dir, "labctl", "config.yaml")
		if _, err := os.Stat(file); err != nil {
			return nil
		}
	}
	v.SetConfigFile(file)
	if err := v.ReadInConfig(); err != nil {
		return fmt.Errorf("reading config file %s: %w (fix or remove it)", file, err)
	}
	return nil
}
