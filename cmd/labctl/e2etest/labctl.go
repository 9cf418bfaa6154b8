package e2etest

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Labctl runs a labctl binary for a test, on one lab and with a state
// directory of its own.
type Labctl struct {
	T   *testing.T
	Bin string
	// Lab, when set, is given as --lab before the arguments.
	Lab string
	// Env is the whole environment of the process.
	Env []string
}

// NewLabctl runs bin on labFile (none when empty) with the state directory
// state, in this process's environment plus env.
func NewLabctl(t *testing.T, bin, labFile, state string, env ...string) *Labctl {
	return &Labctl{T: t, Bin: bin, Lab: labFile, Env: append(append(os.Environ(), "LABCTL_STATE_DIR="+state), env...)}
}

// With is r reporting to t (a subtest).
func (r *Labctl) With(t *testing.T) *Labctl {
	c := *r
	c.T = t
	return &c
}

// Run runs labctl with args until it ends (when ctx ends first, it is asked
// to stop: stopAtLimit), logs what it printed and returns its exit code and
// both streams. A labctl that cannot be started fails the test.
func (r *Labctl) Run(ctx context.Context, args ...string) (code int, stdout, stderr string) {
	r.T.Helper()
	all := args
	if r.Lab != "" {
		all = append([]string{"--lab", r.Lab}, args...)
	}
	cmd := exec.Command(r.Bin, all...)
	cmd.Env = r.Env
	cmd.WaitDelay = time.Minute
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Start()
	if err == nil {
		ended := make(chan struct{})
		go stopAtLimit(ctx, cmd.Process, ended)
		err = cmd.Wait()
		close(ended)
	}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		code = ee.ExitCode()
	default:
		r.T.Fatalf("labctl %s: %v\nstderr:\n%s", strings.Join(args, " "), err, errOut.String())
	}
	r.T.Logf("labctl %s → %d\n%s%s", strings.Join(args, " "), code, out.String(), errOut.String())
	return code, out.String(), errOut.String()
}

// stopKill is how long labctl has to end after it was asked to stop: `labctl
// test` removes its environment within five minutes.
const stopKill = 6 * time.Minute

// stopAtLimit asks p to stop, as a user's Ctrl-C does, when ctx ends before
// ended is closed, so that it removes what it made (a killed `labctl test`
// leaves a cluster that slows every test after it), and kills it only if
// it has not ended stopKill later.
func stopAtLimit(ctx context.Context, p *os.Process, ended <-chan struct{}) {
	select {
	case <-ended:
		return
	case <-ctx.Done():
	}
	_ = p.Signal(syscall.SIGTERM)
	select {
	case <-ended:
	case <-time.After(stopKill):
		_ = p.Kill()
	}
}

// Must runs labctl with args, bounded by timeout, and fails the test unless
// it exits 0.
func (r *Labctl) Must(timeout time.Duration, args ...string) string {
	r.T.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	code, out, _ := r.Run(ctx, args...)
	if code != 0 {
		r.T.Fatalf("labctl %s exited %d", strings.Join(args, " "), code)
	}
	return out
}

// UpFresh brings the lab up from nothing (a home kept by an earlier run's
// `down` is purged first) and takes it down, home included, when the test
// ends, unless LABCTL_E2E_KEEP is set.
func (r *Labctl) UpFresh(ctx context.Context) {
	r.T.Helper()
	if code, _, _ := r.Run(ctx, "down", "--purge", "--no-backup"); code != 0 {
		r.T.Fatalf("labctl down --purge exited %d", code)
	}
	r.T.Cleanup(func() {
		if os.Getenv("LABCTL_E2E_KEEP") != "" {
			return
		}
		r.Must(10*time.Minute, "down", "--purge", "--no-backup")
	})
	if code, _, _ := r.Run(ctx, "up"); code != 0 {
		r.T.Fatalf("labctl up exited %d", code)
	}
}
