package checks

import (
	"strconv"

	"k8s.io/apimachinery/pkg/labels"

	"github.com/labctl/labctl/internal/msg"
	"github.com/labctl/labctl/lab"
)

// CellAnswer is what a matrix check found of one of its cells, named by
// cellKey in Result.Cells: a matrix check of a mistake's evidence whose
// every cell a check of the step's round tried is judged from these
// (JudgeFromCells) instead of trying them again in a round of its own.
type CellAnswer struct {
	Opened bool `json:"opened,omitempty"`
	// TimedOut says the connection got no answer within its bound.
	TimedOut bool `json:"timedOut,omitempty"`
	// Detail says why it did not open (Tried.Detail).
	Detail string `json:"detail,omitempty"`
}

// sourceKey names a source by what a policy sees of its prober: its
// namespace and its labels.
func sourceKey(s lab.MatrixSource) string {
	return s.Namespace + "/" + labels.SelectorFromSet(s.Labels).String()
}

// cellKey names cell (i, j) of m by what the network sees of it: the
// source's namespace and labels, and the target's address, or for a target
// that names a source, that source's namespace, labels and the port. Two
// matrix checks' cells with one key are the same connection.
func cellKey(m *lab.MatrixCheck, i, j int) string {
	t := m.Targets[j]
	to := t.To
	if t.Source != "" {
		for _, s := range m.Sources {
			if s.Name == t.Source {
				to = "prober " + sourceKey(s) + " port " + strconv.Itoa(t.ProberPort())
			}
		}
	}
	return sourceKey(m.Sources[i]) + " to " + to
}

// MatrixCells is found, every cell but a source's own, by cellKey.
func MatrixCells(m *lab.MatrixCheck, found [][]Tried) map[string]CellAnswer {
	cells := map[string]CellAnswer{}
	for i, row := range found {
		for j, got := range row {
			if !got.Self {
				cells[cellKey(m, i, j)] = CellAnswer{Opened: got.Opened, TimedOut: got.TimedOut, Detail: got.Detail}
			}
		}
	}
	return cells
}

// JudgeFromCells judges the matrix check c from the cells that the matrix
// checks of rs, one round's, found, without trying a connection: the same
// connections, from probers labelled alike, after the same wait for the
// policy agent. ok is false when c is no matrix check, and when the round
// did not try one of its cells or found two answers for it. A cell c
// expects open that got no answer is closed here, where a round of its own
// might try it once more (checkMatrix): evidence only names a mistake, and
// such a cell can only keep it from being named, never name one.
func JudgeFromCells(c lab.Check, rs []Result, lang msg.Lang) (r Result, ok bool) {
	m := c.Matrix
	if m == nil {
		return Result{}, false
	}
	seen := map[string]CellAnswer{}
	for _, r := range rs {
		for k, a := range r.Cells {
			if had, dup := seen[k]; dup && had != a {
				return Result{}, false
			}
			seen[k] = a
		}
	}
	found := make([][]Tried, len(m.Sources))
	for i, s := range m.Sources {
		found[i] = make([]Tried, len(m.Targets))
		for j, t := range m.Targets {
			if t.Source == s.Name {
				found[i][j] = Tried{Self: true}
				continue
			}
			a, tried := seen[cellKey(m, i, j)]
			if !tried {
				return Result{}, false
			}
			found[i][j] = Tried{Opened: a.Opened, TimedOut: a.TimedOut, Detail: a.Detail}
		}
	}
	s, text := outcomeIn(judgeMatrix(m, found), msg.New(lang))
	return newResult(c, s, text, 0), true
}
