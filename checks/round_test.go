package checks

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/labctl/labctl/lab"
)

func twoChecks() []lab.Check {
	return []lab.Check{
		{Name: "a", Points: 1},
		{Name: "b", Points: 2, Optional: true, Description: "bee"},
	}
}

// readRound reads out as the checker's answer to cs and holds it to them,
// as a live lab's round does (ReadResponse, then RunRound's Reconcile).
func readRound(cs []lab.Check, out []byte) ([]Result, error) {
	rs, err := ReadResponse(out)
	if err != nil {
		return nil, err
	}
	return RunRound(context.Background(), Round{Checks: cs}, func(context.Context, Round) ([]Result, error) { return rs, nil })
}

func TestReadResponseKeepsOnlyTheCheckersVerdicts(t *testing.T) {
	// The answer claims other points, optional flags and descriptions: the
	// host's own lab wins.
	good := `{"results":[{"name":"a","status":"pass","durationMs":3,"points":99,"optional":true,"description":"forged"},` +
		`{"name":"b","status":"fail","message":"no","durationMs":1,"points":0}]}` + "\n"
	rs, err := readRound(twoChecks(), []byte(good))
	if err != nil {
		t.Fatal(err)
	}
	if rs[0].Status != Pass || rs[0].Points != 1 || rs[0].Optional || rs[0].Description != "" || rs[0].Duration != 3*time.Millisecond {
		t.Errorf("result a = %+v", rs[0])
	}
	if rs[1].Status != Fail || rs[1].Message != "no" || rs[1].Points != 2 || !rs[1].Optional || rs[1].Description != "bee" {
		t.Errorf("result b = %+v", rs[1])
	}
}

func TestReadResponseRefusesAnythingButOneAnswer(t *testing.T) {
	pass2 := `{"results":[{"name":"a","status":"pass"},{"name":"b","status":"pass"}]}`
	for _, tc := range []struct{ name, out, want string }{
		{"not json", "hello", "reading the checker's answer"},
		{"empty", "", "reading the checker's answer"},
		{"too few", `{"results":[{"name":"a","status":"pass"}]}`, "1 results for 2 checks"},
		{"too many", `{"results":[{"name":"a","status":"pass"},{"name":"b","status":"pass"},{"name":"b","status":"pass"}]}`, "3 results for 2 checks"},
		{"wrong order", `{"results":[{"name":"b","status":"pass"},{"name":"a","status":"pass"}]}`, `for "b" where check "a"`},
		{"unknown field", `{"results":[],"extra":1}`, "unknown field"},
		{"unknown status", `{"results":[{"name":"a","status":"pass"},{"name":"b","status":"skipped"}]}`, `status "skipped"`},
		{"empty status", `{"results":[{"name":"a","status":"pass"},{"name":"b"}]}`, `status ""`},
		{"a second answer", pass2 + pass2, "more data follows"},
		{"trailing garbage", pass2 + "x", "more data follows"},
		{"a forged answer before the real one", `{"results":[{"name":"a","status":"pass"},{"name":"b","status":"pass"}]}{"results":[]}`, "more data follows"},
		{"huge", `{"results":[{"name":"a","status":"pass","message":"` + strings.Repeat("x", MaxAnswer) + `"}]}`, "more than"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := readRound(twoChecks(), []byte(tc.out))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tc.want)
			}
		})
	}
	if _, err := readRound(twoChecks(), []byte(" \n"+pass2+"\n\t ")); err != nil {
		t.Errorf("white space around the answer: %v", err)
	}
}

func TestRoundTimeout(t *testing.T) {
	ten := lab.Check{Name: "x"}
	long := lab.Check{Name: "y", Timeout: lab.Duration{Duration: time.Minute}}
	one := RoundTimeout([]lab.Check{ten})
	if want := DefaultTimeout + cancelGrace + roundSlack; one != want {
		t.Errorf("one check: %v, want %v", one, want)
	}
	nine := make([]lab.Check, 9)
	if got, want := RoundTimeout(nine), 2*(DefaultTimeout+cancelGrace)+roundSlack; got != want {
		t.Errorf("nine checks (two waves): %v, want %v", got, want)
	}
	if got, want := RoundTimeout([]lab.Check{ten, long}), time.Minute+cancelGrace+roundSlack; got != want {
		t.Errorf("a long check: %v, want %v", got, want)
	}
}

func TestRunRoundHandsTheRoundToTheRuntime(t *testing.T) {
	start := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	since := []time.Time{start.Add(-time.Hour), {}}
	r := Round{Checks: twoChecks(), ProbeStart: start, Windows: Windows{Since: since}}
	var got Round
	calls := 0
	rs, err := RunRound(context.Background(), r, func(ctx context.Context, r Round) ([]Result, error) {
		calls++
		got = r
		if _, ok := ctx.Deadline(); !ok {
			t.Error("the round runs without a deadline")
		}
		return []Result{{Name: "a", Status: Pass, Description: "the checker's"}, {Name: "b", Status: Fail}}, nil
	})
	if err != nil || calls != 1 {
		t.Fatalf("RunRound: %v after %d runs, want one run", err, calls)
	}
	if !reflect.DeepEqual(got, r) {
		t.Errorf("the runtime was asked %+v, want %+v", got, r)
	}
	if rs[0].Description != "" || rs[1].Description != "bee" || rs[1].Points != 2 {
		t.Errorf("results not reconciled with the host's checks: %+v", rs)
	}
	if rs, err := RunRound(context.Background(), Round{}, nil); rs != nil || err != nil {
		t.Errorf("an empty round: %v, %v; want nothing run", rs, err)
	}
}

// The probe's start travels in the Round, never in a context value: no
// source file of the package keeps a value in a context.
func TestNoRoundValueTravelsInAContext(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, banned := range []string{"context.WithValue", "ProbeStartFrom", "WithProbeStart", "probeStartKey"} {
			if strings.Contains(string(b), banned) {
				t.Errorf("%s uses %s: a round's values travel in Round", f, banned)
			}
		}
	}
}
