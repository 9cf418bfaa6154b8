package checks

import "testing"

func TestSummarizeCountsRequiredChecksAndScores(t *testing.T) {
	rs := []Result{
		{Name: "a", Status: Pass, Points: 2},
		{Name: "b", Status: Fail, Points: 1},
		{Name: "c", Status: Error, Points: 1},
		{Name: "d", Status: Fail, Points: 3, Optional: true},
		{Name: "e", Status: Pass, Points: 1, Optional: true},
	}
	got := Summarize(rs)
	want := Summary{Failed: 1, Errored: 1, Required: 3, Score: 3, MaxScore: 8}
	if got != want {
		t.Errorf("Summarize = %+v, want %+v", got, want)
	}
}

func TestVerdict(t *testing.T) {
	pass := Result{Status: Pass, Points: 1}
	fail := Result{Status: Fail, Points: 1}
	errored := Result{Status: Error, Points: 1}
	optional := func(r Result) Result { r.Optional = true; return r }
	cases := []struct {
		name string
		rs   []Result
		want Verdict
	}{
		{"no results", nil, Passed},
		{"every required check passes", []Result{pass, pass}, Passed},
		{"an optional check fails or errs", []Result{pass, optional(fail), optional(errored)}, Passed},
		{"a required check fails", []Result{pass, fail}, Failed},
		{"a required check errs", []Result{pass, errored}, Errored},
		{"an error outweighs a failure", []Result{fail, fail, errored}, Errored},
		{"only optional checks, failing", []Result{optional(fail)}, Passed},
	}
	for _, c := range cases {
		sum := Summarize(c.rs)
		if got := sum.Verdict(); got != c.want {
			t.Errorf("%s: Verdict = %v, want %v", c.name, got, c.want)
		}
		if got := StepPassed(c.rs); got != (c.want == Passed) {
			t.Errorf("%s: StepPassed = %v", c.name, got)
		}
		if sum.Passed() != (c.want == Passed) {
			t.Errorf("%s: Summary.Passed = %v", c.name, sum.Passed())
		}
	}
}

func TestVerdictString(t *testing.T) {
	for v, want := range map[Verdict]string{Passed: "passed", Failed: "failed", Errored: "errored"} {
		if v.String() != want {
			t.Errorf("%d.String() = %q, want %q", v, v.String(), want)
		}
	}
}
