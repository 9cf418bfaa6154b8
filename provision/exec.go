package provision

import "io"

// ExecOptions describe one process a runtime runs in the sandbox (Runtime's
// Exec); each runtime translates them into its own way of running it.
type ExecOptions struct {
	Cmd []string
	// Env is added to the sandbox's environment (set a variable to
	// override it).
	Env     []string
	WorkDir string
	// User defaults to root.
	User string
	// Stdin, when set, is copied to the process and then closed.
	Stdin          io.Reader
	Stdout, Stderr io.Writer
}

// ShellOptions describe a process started on a PTY in the sandbox
// (Runtime's Attach): the learner's login shell unless Cmd says otherwise.
type ShellOptions struct {
	// Cmd defaults to bash -l.
	Cmd []string
	// Env is added to the sandbox's environment, e.g. LABCTL_SHELL=1 and TERM.
	Env []string
	// WorkDir defaults to /root; User to root.
	WorkDir, User string
	// Rows and Cols are the PTY's first size; 0 leaves the runtime's
	// default.
	Rows, Cols uint
}

// DetailError is an error whose message is short, with the full text
// behind it (a program's whole error output) kept for `-v`.
type DetailError struct {
	Err  error
	Text string
}

func (e *DetailError) Error() string { return e.Err.Error() }

func (e *DetailError) Unwrap() error { return e.Err }

// Detail is the full text, shown only with -v.
func (e *DetailError) Detail() string { return e.Text }

// WithDetail attaches detail to err; nil stays nil.
func WithDetail(err error, detail []byte) error {
	if err == nil {
		return nil
	}
	return &DetailError{Err: err, Text: string(detail)}
}
