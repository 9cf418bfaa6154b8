package provision

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// runLocally runs the scripts command with the host's bash, as the sandbox
// would, splitting its output into writes of size chunk.
func runLocally(t *testing.T, scripts []string, chunk int) (out string, starts []int, failed, code int, err error) {
	t.Helper()
	cmd, mark, err := scriptsCommand(scripts)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	failed, code, err = runMarked(scripts, mark, func(i int) { starts = append(starts, i) }, func(w io.Writer) (int, error) {
		c := exec.CommandContext(context.Background(), cmd[0], cmd[1:]...)
		c.Env = []string{"HOME=" + t.TempDir(), "PATH=/usr/bin:/bin"}
		var raw bytes.Buffer
		c.Stdout, c.Stderr = &raw, &raw
		runErr := c.Run()
		b := raw.Bytes()
		for len(b) > 0 {
			n := min(chunk, len(b))
			if _, err := w.Write(b[:n]); err != nil {
				return -1, err
			}
			b = b[n:]
		}
		var ee *exec.ExitError
		if errors.As(runErr, &ee) {
			return ee.ExitCode(), nil
		}
		return 0, runErr
	}, &buf)
	return buf.String(), starts, failed, code, err
}

func TestRunScriptsRunsEachScriptApart(t *testing.T) {
	scripts := []string{
		"echo one; cd /; x=set",
		// Each script is its own shell: no variable or directory is left
		// over, and quotes, $ and newlines arrive as written.
		"echo \"two ${x:-unset} $(basename \"$PWD\")\"\nprintf '%s\\n' '$HOME \"q\"'",
		"printf 'no newline'",
		"echo four",
	}
	for _, chunk := range []int{1, 7, 1 << 20} {
		out, starts, failed, code, err := runLocally(t, scripts, chunk)
		if err != nil || failed != -1 || code != 0 {
			t.Fatalf("chunk %d: failed %d, code %d, err %v", chunk, failed, code, err)
		}
		want := "one\ntwo unset " + "provision" + "\n$HOME \"q\"\nno newlinefour\n"
		if out != want {
			t.Errorf("chunk %d: output %q, want %q", chunk, out, want)
		}
		if !slices.Equal(starts, []int{0, 1, 2, 3}) {
			t.Errorf("chunk %d: started %v", chunk, starts)
		}
	}
}

func TestRunScriptsStopsAtTheFirstFailure(t *testing.T) {
	out, starts, failed, code, err := runLocally(t, []string{"echo a", "echo b; exit 7", "echo never"}, 3)
	if err != nil || failed != 1 || code != 7 {
		t.Fatalf("failed %d, code %d, err %v; want script 1 with status 7", failed, code, err)
	}
	if out != "a\nb\n" || !slices.Equal(starts, []int{0, 1}) {
		t.Errorf("output %q, started %v", out, starts)
	}
	// A script that fails on its first line is the one blamed, not the one
	// before it.
	_, _, failed, code, err = runLocally(t, []string{"true", "false"}, 5)
	if err != nil || failed != 1 || code != 1 {
		t.Errorf("failed %d, code %d, err %v; want script 1 with status 1", failed, code, err)
	}
}

func TestMarkWriterLeavesOtherLinesAlone(t *testing.T) {
	var got []int
	var out bytes.Buffer
	m := newMarkWriter(&out, "M", func(i int) { got = append(got, i) })
	for _, s := range []string{"a\nM x\n", "\nM 1", "2\nb\n", "\nM"} {
		m.Write([]byte(s))
	}
	if err := m.Flush(); err != nil {
		t.Fatal(err)
	}
	// "M x" is not a mark; a mark split across writes is; an unfinished
	// one at the end is output.
	if out.String() != "a\nM x\nb\n\nM" || !slices.Equal(got, []int{12}) {
		t.Errorf("output %q, marks %v", out.String(), got)
	}
	if strings.Contains(out.String(), "M 12") {
		t.Error("a mark was passed through")
	}
}
