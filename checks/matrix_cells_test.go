package checks

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/labctl/labctl/lab"
)

// cellsRound runs a step's matrix check on the fake cluster: api reaches
// db only after the bound (no answer), debug is refused by web, api
// reaches debug's prober on 5432. It fails, for debug to web.
func cellsRound(t *testing.T) Result {
	t.Helper()
	m := &lab.MatrixCheck{
		Sources: []lab.MatrixSource{
			{Name: "api", Namespace: "shop", Labels: map[string]string{"app": "shop", "tier": "api"}},
			{Name: "debug", Namespace: "tools", Labels: map[string]string{"app": "debug"}},
		},
		Targets: []lab.MatrixTarget{{Name: "web", To: "web.shop:80"}, {Name: "db", To: "db.shop:5432"}, {Name: "debug-5432", Source: "debug", Port: 5432}},
		Open: []lab.MatrixCells{
			{From: []string{"api"}, To: []string{"db", "debug-5432"}},
			{From: []string{"debug"}, To: []string{"web"}},
		},
		Unlisted: lab.MatrixClosed,
	}
	mc := newMatrixCluster(t)
	mc.agent.answer = func(pod string) string {
		if strings.HasSuffix(pod, "-1") { // api's prober, made first
			return "cell 0 closed 1 prober: connect: Connection refused\ncell 1 closed 124 \ncell 2 open\ndone\n"
		}
		return "cell 0 closed 1 prober: connect: Connection refused\ncell 1 closed 124 \ndone\n"
	}
	rs := Run(context.Background(), Env{Root: "/", Kube: mc.kubeReader, ReachImage: "addons:1"}, []lab.Check{{Name: "paths", Matrix: m}})
	if rs[0].Status != Fail || len(rs[0].Cells) != 5 {
		t.Fatalf("the step's round: %s %q with %d cells, want a failure with 5", rs[0].Status, rs[0].Message, len(rs[0].Cells))
	}
	return rs[0]
}

// TestJudgeFromCells: a mistake's matrix evidence whose every cell the
// step's round tried is judged from what it found, pass or fail as a
// round of its own would judge it, a cell expected open that got no answer
// closed; a cell the round did not try (another address, another source's
// labels) or two answers for one cell need a round.
func TestJudgeFromCells(t *testing.T) {
	step := cellsRound(t)
	// The cells cross the checker's answer as they are.
	b, err := json.Marshal(step)
	if err != nil {
		t.Fatal(err)
	}
	var wire Result
	if err := json.Unmarshal(b, &wire); err != nil {
		t.Fatal(err)
	}
	debug := lab.MatrixSource{Name: "debug", Namespace: "tools", Labels: map[string]string{"app": "debug"}}
	api := lab.MatrixSource{Name: "api", Namespace: "shop", Labels: map[string]string{"tier": "api", "app": "shop"}}
	web := lab.MatrixTarget{Name: "web", To: "web.shop:80"}
	db := lab.MatrixTarget{Name: "db", To: "db.shop:5432"}
	matrix := func(srcs []lab.MatrixSource, tgts []lab.MatrixTarget, open ...lab.MatrixCells) lab.Check {
		return lab.Check{Name: "evidence", Matrix: &lab.MatrixCheck{Sources: srcs, Targets: tgts, Open: open, Unlisted: lab.MatrixClosed}}
	}
	for _, c := range []struct {
		name  string
		check lab.Check
		rs    []Result
		ok    bool
		want  Status
	}{
		{"closed as expected", matrix([]lab.MatrixSource{debug}, []lab.MatrixTarget{web}), []Result{wire}, true, Pass},
		{"closed, expected open", matrix([]lab.MatrixSource{debug}, []lab.MatrixTarget{web}, lab.MatrixCells{From: []string{"debug"}, To: []string{"web"}}), []Result{wire}, true, Fail},
		{"a source's prober, by its labels and port", matrix([]lab.MatrixSource{api, debug}, []lab.MatrixTarget{{Name: "d", Source: "debug", Port: 5432}},
			lab.MatrixCells{From: []string{"api"}, To: []string{"d"}}), []Result{wire}, true, Pass},
		// A cell expected open that got no answer is closed: the mistake
		// is not named.
		{"expected open, no answer", matrix([]lab.MatrixSource{debug, api}, []lab.MatrixTarget{web, db}, lab.MatrixCells{From: []string{"api"}, To: []string{"db"}}), []Result{wire}, true, Fail},
		{"another address", matrix([]lab.MatrixSource{debug}, []lab.MatrixTarget{{Name: "admin", To: "admin.shop:80"}}), []Result{wire}, false, ""},
		{"other labels", matrix([]lab.MatrixSource{{Name: "debug", Namespace: "tools", Labels: map[string]string{"app": "other"}}}, []lab.MatrixTarget{web}), []Result{wire}, false, ""},
		{"another namespace", matrix([]lab.MatrixSource{{Name: "debug", Namespace: "shop", Labels: map[string]string{"app": "debug"}}}, []lab.MatrixTarget{web}), []Result{wire}, false, ""},
		{"no cells", matrix([]lab.MatrixSource{debug}, []lab.MatrixTarget{web}), []Result{{Name: "paths", Status: Fail}}, false, ""},
		{"two answers", matrix([]lab.MatrixSource{debug}, []lab.MatrixTarget{web}), []Result{wire, {Name: "again", Status: Pass, Cells: flipped(wire.Cells)}}, false, ""},
		{"not a matrix", lab.Check{Name: "evidence", Kube: &lab.KubeCheck{}}, []Result{wire}, false, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, ok := JudgeFromCells(c.check, c.rs, "")
			if ok != c.ok || r.Status != c.want {
				t.Fatalf("judged %v %q (%s), want %v %q", ok, r.Status, r.Message, c.ok, c.want)
			}
			if ok && r.Name != "evidence" {
				t.Errorf("the result is named %q", r.Name)
			}
		})
	}
}

// flipped is cells with every answer the other way.
func flipped(cells map[string]CellAnswer) map[string]CellAnswer {
	out := map[string]CellAnswer{}
	for k, a := range cells {
		out[k] = CellAnswer{Opened: !a.Opened}
	}
	return out
}

// TestOnlyAJudgedMatrixHasCells: a matrix check that could not judge (a
// prober that answered nothing it was asked) leaves no cells, nor does a
// check of another kind.
func TestOnlyAJudgedMatrixHasCells(t *testing.T) {
	mc := newMatrixCluster(t)
	mc.agent.answer = func(string) string { return "cell 0 maybe\ndone\n" }
	rs := Run(context.Background(), Env{Root: "/", Kube: mc.kubeReader, ReachImage: "addons:1"}, []lab.Check{
		{Name: "paths", Matrix: oneSource()},
		{Name: "file", File: &lab.FileCheck{Path: "/nonexistent", Exists: new(true)}},
	})
	for _, r := range rs {
		if r.Cells != nil {
			t.Errorf("%s (%s) has cells %v", r.Name, r.Status, r.Cells)
		}
	}
	if rs[0].Status != Error {
		t.Errorf("the matrix check: %s %q, want an error", rs[0].Status, rs[0].Message)
	}
}
