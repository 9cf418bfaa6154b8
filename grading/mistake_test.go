package grading

import (
	"context"
	"strings"
	"testing"

	"github.com/labctl/labctl/checks"
	"github.com/labctl/labctl/lab"
)

// TestCheckNamesTheLikelyMistake: `labctl check` says which declared
// mistake the failing checks are exactly, with the lab's explanation, and
// says nothing of mistakes when the failures match none.
func TestCheckNamesTheLikelyMistake(t *testing.T) {
	fc := &fakeChecker{status: map[string]checks.Status{"b": checks.Fail}}
	s, out := newGrader(t, fc)
	s.Lab.Steps[0].Mistakes = []lab.Mistake{
		{Name: "only-a", Description: "forgot a", Fails: []string{"a"}, Explain: "Do a."},
		{Name: "only-b", Description: "forgot b", Fails: []string{"b"}, Explain: "b is needed because\nof c."},
	}
	if v, err := s.Check(context.Background(), ""); err != nil || v != Failed {
		t.Fatalf("Check = %v, %v; want failed", v, err)
	}
	want := "  This looks like a known mistake: forgot b\n    b is needed because\n    of c.\n"
	if !strings.Contains(out.String(), want) || strings.Contains(out.String(), "forgot a") {
		t.Errorf("output lacks %q or names the other mistake:\n%s", want, out)
	}

	fc.status = map[string]checks.Status{"a": checks.Fail, "b": checks.Fail}
	out.Reset()
	if _, err := s.Check(context.Background(), ""); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), "known mistake") {
		t.Errorf("a and b failing match no mistake exactly, yet:\n%s", out)
	}
}

// TestCheckNamesMistakesByEvidence: of two mistakes that fail the same
// checks, `labctl check` names the one whose evidence held, after one more
// round of only the suspects' evidence; a round without a suspect with
// evidence asks for none, and evidence that cannot be judged names neither.
func TestCheckNamesMistakesByEvidence(t *testing.T) {
	fc := &fakeChecker{status: map[string]checks.Status{"b": checks.Fail, "is-stable": checks.Fail}}
	s, out := newGrader(t, fc)
	s.Lab.Steps[0].Mistakes = []lab.Mistake{
		{Name: "latest", Description: "kept latest", Fails: []string{"b"}, Evidence: []lab.Check{{Name: "is-latest"}}},
		{Name: "stable", Description: "chose stable", Fails: []string{"b"}, Evidence: []lab.Check{{Name: "is-stable"}}},
		{Name: "only-a", Description: "forgot a", Fails: []string{"a"}, Evidence: []lab.Check{{Name: "never-asked"}}},
	}
	if _, err := s.Check(context.Background(), ""); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "known mistake: kept latest") || strings.Contains(out.String(), "chose stable") {
		t.Errorf("want only the mistake whose evidence held:\n%s", out)
	}
	if got := fc.rounds[len(fc.rounds)-1]; strings.Join(got, " ") != "is-latest is-stable" {
		t.Errorf("evidence round asked %v, want the two suspects' evidence only", got)
	}

	fc.status = map[string]checks.Status{"b": checks.Fail, "is-latest": checks.Error}
	out.Reset()
	if _, err := s.Check(context.Background(), ""); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "known mistake: chose stable") || strings.Contains(out.String(), "kept latest") {
		t.Errorf("evidence that could not run names no mistake:\n%s", out)
	}

	fc.status = map[string]checks.Status{}
	fc.rounds = nil
	out.Reset()
	if _, err := s.Check(context.Background(), ""); err != nil {
		t.Fatal(err)
	}
	if len(fc.rounds) != 1 {
		t.Errorf("a passing round asked %d rounds, want 1 (no evidence)", len(fc.rounds))
	}
}

// TestEvidenceFromTheStepsCells: a mistake's matrix evidence whose every
// cell the step's matrix check tried is judged from what that round found,
// with no round of its own; evidence that needs cells the step did not try
// still runs, alone, in one more round.
func TestEvidenceFromTheStepsCells(t *testing.T) {
	debug := lab.MatrixSource{Name: "debug", Namespace: "tools", Labels: map[string]string{"app": "debug"}}
	api := lab.MatrixSource{Name: "api", Namespace: "shop", Labels: map[string]string{"app": "shop", "tier": "api"}}
	web := lab.MatrixTarget{Name: "web", To: "web.shop:80"}
	db := lab.MatrixTarget{Name: "db", To: "db.shop:5432"}
	paths := &lab.MatrixCheck{Sources: []lab.MatrixSource{api, debug}, Targets: []lab.MatrixTarget{web, db}}
	// In the step's round, debug reached db, and nothing else opened.
	found := [][]checks.Tried{{{Detail: "connection refused"}, {Detail: "connection refused"}}, {{Detail: "connection refused"}, {Opened: true}}}
	fc := &fakeChecker{
		status: map[string]checks.Status{"b": checks.Fail},
		cells:  map[string]map[string]checks.CellAnswer{"b": checks.MatrixCells(paths, found)},
	}
	s, out := newGrader(t, fc)
	s.Lab.Steps[0].Checks[1].Matrix = paths
	matrix := func(name string, srcs []lab.MatrixSource, tgts []lab.MatrixTarget, open ...lab.MatrixCells) lab.Check {
		return lab.Check{Name: name, Matrix: &lab.MatrixCheck{Sources: srcs, Targets: tgts, Open: open, Unlisted: lab.MatrixClosed}}
	}
	s.Lab.Steps[0].Mistakes = []lab.Mistake{
		{Name: "db-opened", Description: "opened db to all", Fails: []string{"b"},
			Evidence: []lab.Check{matrix("debug-reaches-db", []lab.MatrixSource{debug}, []lab.MatrixTarget{db}, lab.MatrixCells{From: []string{"debug"}, To: []string{"db"}})}},
		{Name: "web-opened", Description: "opened web to all", Fails: []string{"b"},
			Evidence: []lab.Check{matrix("api-reaches-web", []lab.MatrixSource{api}, []lab.MatrixTarget{web}, lab.MatrixCells{From: []string{"api"}, To: []string{"web"}})}},
	}
	if _, err := s.Check(context.Background(), ""); err != nil {
		t.Fatal(err)
	}
	if len(fc.rounds) != 1 {
		t.Errorf("asked %d rounds %v, want the step's only", len(fc.rounds), fc.rounds)
	}
	if !strings.Contains(out.String(), "known mistake: opened db to all") || strings.Contains(out.String(), "opened web to all") {
		t.Errorf("want only the mistake whose evidence held in the step's round:\n%s", out)
	}

	// Evidence from a source the step did not try runs in a round.
	s.Lab.Steps[0].Mistakes[1].Evidence = append(s.Lab.Steps[0].Mistakes[1].Evidence,
		matrix("admin-reaches-web", []lab.MatrixSource{{Name: "admin", Namespace: "shop", Labels: map[string]string{"tier": "admin"}}}, []lab.MatrixTarget{web}))
	fc.rounds = nil
	if _, err := s.Check(context.Background(), ""); err != nil {
		t.Fatal(err)
	}
	if len(fc.rounds) != 2 || strings.Join(fc.rounds[1], " ") != "admin-reaches-web" {
		t.Errorf("asked rounds %v, want the step's, then admin-reaches-web alone", fc.rounds)
	}
}
