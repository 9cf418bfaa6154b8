package provision

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"runtime"
	"strings"
	"testing"

	"github.com/labctl/labctl/checks"
	"github.com/labctl/labctl/lab"
)

func twoChecks() checks.Request {
	return checks.Request{Checks: []lab.Check{
		{Name: "a", Points: 1},
		{Name: "b", Points: 2, Optional: true, Description: "bee"},
	}}
}

// checker answers a round with out on stdout, errOut on stderr and code.
func checker(out, errOut string, code int) ExecChecker {
	return func(_ context.Context, stdin io.Reader, stdout, stderr io.Writer) (int, error) {
		_, _ = io.Copy(io.Discard, stdin)
		_, _ = io.WriteString(stdout, out)
		_, _ = io.WriteString(stderr, errOut)
		return code, nil
	}
}

// round runs req in one round through exec, as Live's rounds run:
// checks.RunRound over RunChecker.
func round(req checks.Request, exec ExecChecker) ([]checks.Result, error) {
	return checks.RunRound(context.Background(), checks.Round{Checks: req.Checks}, func(ctx context.Context, _ checks.Round) ([]checks.Result, error) {
		return RunChecker(ctx, req, exec)
	})
}

func TestRunCheckerSendsTheRequestAndKeepsTheHostsDescriptions(t *testing.T) {
	var got checks.Request
	rs, err := round(twoChecks(), func(_ context.Context, stdin io.Reader, stdout, _ io.Writer) (int, error) {
		if err := json.NewDecoder(stdin).Decode(&got); err != nil {
			return -1, err
		}
		_, err := io.WriteString(stdout, `{"results":[{"name":"a","status":"pass","description":"the checker's"},{"name":"b","status":"fail","points":9}]}`)
		return 0, err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Checks) != 2 || got.Checks[1].Name != "b" {
		t.Errorf("the checker got %+v", got)
	}
	if rs[0].Description != "" || rs[1].Description != "bee" || rs[1].Points != 2 || !rs[1].Optional {
		t.Errorf("results not the host's: %+v", rs)
	}
}

// The answer is read strictly (checks.ReadResponse, then RunRound's
// Reconcile): one result per check, one JSON value.
func TestRunCheckerRefusesAnAnswerThatIsNotOne(t *testing.T) {
	for _, out := range []string{
		`{"results":[{"name":"a","status":"pass"}]}`,
		`{"results":[{"name":"a","status":"pass"},{"name":"b","status":"pass"}]} {}`,
		``,
	} {
		if rs, err := round(twoChecks(), checker(out, "", 0)); err == nil {
			t.Errorf("answer %q accepted: %+v", out, rs)
		}
	}
}

// A checker that exits non-zero is an error that quotes the first line of
// its error output, escaped, never a goroutine dump; the whole of it,
// escaped, is the detail -v shows.
func TestRunCheckerQuotesAFailedCheckersFirstLineEscaped(t *testing.T) {
	errOut := "\x1b[2J\x1b]52;c;cHduZWQ=\x07over\rwritten\ngoroutine 1 [running]:\n"
	_, err := RunChecker(context.Background(), twoChecks(), checker("", errOut, 2))
	want := `the checker exited with status 2: \x1b[2J\x1b]52;c;cHduZWQ=\x07over\x0dwritten`
	if err == nil || err.Error() != want {
		t.Fatalf("error %q, want %q", err, want)
	}
	var d *DetailError
	if !errors.As(err, &d) || strings.ContainsAny(d.Detail(), "\x1b\x07\r") || !strings.Contains(d.Detail(), "goroutine 1") {
		t.Errorf("detail %q, want the whole error output escaped", d)
	}
	if _, err := RunChecker(context.Background(), twoChecks(), checker("", "", 1)); err == nil || !strings.HasSuffix(err.Error(), "(nothing on stderr)") {
		t.Errorf("a silent failed checker: %v", err)
	}
}

// A checker that prints without end fills no memory: its answer is kept up
// to checks.MaxAnswer and refused past it, its error output up to MaxKept.
func TestRunCheckerBoundsWhatTheCheckerPrints(t *testing.T) {
	const total = 256 << 20
	chunk := bytes.Repeat([]byte("x"), 32<<10)
	flood := func(toStdout bool, code int) ExecChecker {
		return func(_ context.Context, _ io.Reader, stdout, stderr io.Writer) (int, error) {
			w := stderr
			if toStdout {
				w = stdout
			}
			for range total / len(chunk) {
				if _, err := w.Write(chunk); err != nil {
					return -1, err
				}
			}
			return code, nil
		}
	}
	for _, c := range []struct {
		what     string
		toStdout bool
		code     int
		want     string
	}{
		{"answer", true, 0, "the checker's answer is 268435456 bytes, more than the 8388608 an answer can be"},
		{"error output", false, 1, "output cut"},
	} {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		_, err := RunChecker(context.Background(), twoChecks(), flood(c.toStdout, c.code))
		runtime.ReadMemStats(&after)
		if grown := after.TotalAlloc - before.TotalAlloc; grown > total/4 {
			t.Errorf("%s: %d MiB allocated for %d MiB printed", c.what, grown>>20, total>>20)
		}
		if err == nil || !strings.Contains(err.Error(), c.want) || len(err.Error()) > 4<<10 {
			t.Errorf("%s: error %.300q, want it to say %q", c.what, err, c.want)
		}
	}
}

// A round its context ends first is no round: every check is an error,
// whatever the checker printed. An error of the runtime's own is returned
// as it is.
func TestRunCheckerPastItsDeadline(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	rs, err := RunChecker(ctx, twoChecks(), func(ctx context.Context, _ io.Reader, stdout, _ io.Writer) (int, error) {
		io.WriteString(stdout, `{"results":[{"name":"a","status":"pass"},{"name":"b","status":"pass"}]}`)
		return -1, ctx.Err()
	})
	if err != nil || len(rs) != 2 {
		t.Fatalf("%+v, %v", rs, err)
	}
	for i, r := range rs {
		if r.Status != checks.Error || !strings.Contains(r.Message, "did not finish before its deadline") || r.Name != twoChecks().Checks[i].Name {
			t.Errorf("result %d = %+v", i, r)
		}
	}
	if r := rs[1]; r.Points != 2 || !r.Optional || r.Description != "bee" {
		t.Errorf("check metadata lost: %+v", r)
	}
	gone := errors.New("running checks in grader: no such container")
	if _, err := RunChecker(context.Background(), twoChecks(), func(context.Context, io.Reader, io.Writer, io.Writer) (int, error) {
		return -1, gone
	}); err != gone {
		t.Errorf("the runtime's error came back as %v", err)
	}
}
