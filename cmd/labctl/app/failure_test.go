package app

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/labctl/labctl/provision"

	"github.com/spf13/cobra"
)

// checkerCrash is what a Go program prints when it cannot make a thread:
// the checker's stderr in a sandbox whose pids are used up.
const checkerCrash = `runtime: failed to create new OS thread (have 2 already; errno=11)
runtime: may need to increase max user processes (ulimit -u)
fatal error: newosproc

goroutine 1 [running]:
runtime.throw({0x8e8a1f?, 0x0?})
	/usr/local/go/src/runtime/panic.go:1023 +0x5c fp=0xc000063e38
main.main()
	/src/main.go:12 +0x25`

func TestShortenGoTrace(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		cut      bool
	}{
		{"the checker exited with status 2: " + checkerCrash,
			"the checker exited with status 2: runtime: failed to create new OS thread (have 2 already; errno=11)", true},
		{"running checks: oops\npanic: boom\n\ngoroutine 7 [running]:\nmain.f()", "running checks: oops\npanic: boom", true},
		{"creating cluster: exit status 1\ngoroutine 12 [chan receive]:\nx()", "creating cluster: exit status 1\ngoroutine 12 [chan receive]", true},
		{"no trace here: the sandbox is not running; run `labctl up`", "no trace here: the sandbox is not running; run `labctl up`", false},
		{"the checker exited with status 2: runtime: failed", "the checker exited with status 2: runtime: failed", false},
		{"a file named panic.txt is missing\nand so is goroutine.go", "a file named panic.txt is missing\nand so is goroutine.go", false},
		{"the sandbox cannot reach the API server within 1m30s: main.main()\n\t/src/main.go:12 +0x25\nruntime.goexit({})\n\t/usr/local/go/src/runtime/asm_amd64.s:1700 +0x1",
			"the sandbox cannot reach the API server within 1m30s: main.main()", true},
		{"the sandbox cannot reach the API server within 1m30s:\nmain.main()\n\t/src/main.go:12 +0x25\ncreated by main.start in goroutine 1",
			"the sandbox cannot reach the API server within 1m30s", true},
	} {
		got, cut := shortenGoTrace(tc.in)
		if got != tc.want || cut != tc.cut {
			t.Errorf("shortenGoTrace(%q) = %q, %v; want %q, %v", tc.in, got, cut, tc.want, tc.cut)
		}
	}
}

func TestPrintErrorHidesATraceUnlessVerbose(t *testing.T) {
	err := fmt.Errorf("grading: %w", provision.WithDetail(
		errors.New("the checker exited with status 2: runtime: failed to create new OS thread"), []byte(checkerCrash)))
	var quiet bytes.Buffer
	printError(&quiet, fmt.Errorf("%w\n%s", err, checkerCrash), false)
	out := quiet.String()
	if strings.Contains(out, "goroutine") || strings.Contains(out, "main.main") || strings.Count(out, "\n") > 3 {
		t.Errorf("without -v the message holds the trace:\n%s", out)
	}
	if !strings.Contains(out, "-v") {
		t.Errorf("the message does not say how to see the detail:\n%s", out)
	}
	var verbose bytes.Buffer
	printError(&verbose, err, true)
	if !strings.Contains(verbose.String(), "goroutine 1 [running]:") || !strings.Contains(verbose.String(), "main.main()") {
		t.Errorf("with -v the checker's whole stderr is missing:\n%s", verbose.String())
	}
	var plain bytes.Buffer
	printError(&plain, err, false)
	if strings.Contains(plain.String(), "goroutine") {
		t.Errorf("the detail was shown without -v:\n%s", plain.String())
	}
}

func TestRunTurnsAPanicIntoAnInternalError(t *testing.T) {
	for _, verbose := range []bool{false, true} {
		var out, errOut bytes.Buffer
		s := Streams{In: strings.NewReader(""), Out: &out, Err: &errOut}
		root, g := newRoot(s, &fakeEnv{})
		root.AddCommand(&cobra.Command{Use: "explode", RunE: func(*cobra.Command, []string) error {
			var m map[string]int
			m["x"] = 1 // a nil map: a bug of labctl's own
			return nil
		}})
		args := []string{"explode"}
		if verbose {
			args = append(args, "-v")
		}
		code := runRoot(context.Background(), s, args, root, g)
		msg := errOut.String()
		if code != 2 {
			t.Errorf("verbose=%v: exit code %d, want 2", verbose, code)
		}
		if !strings.HasPrefix(msg, "labctl: internal error, please report it") || !strings.Contains(msg, "assignment to entry in nil map") {
			t.Errorf("verbose=%v: message %q", verbose, msg)
		}
		if hasStack := strings.Contains(msg, "goroutine "); hasStack != verbose {
			t.Errorf("verbose=%v: stack shown = %v:\n%s", verbose, hasStack, msg)
		}
		if !verbose && strings.Count(msg, "\n") != 1 {
			t.Errorf("without -v the report is not one line:\n%s", msg)
		}
	}
}
