package lab

import (
	"fmt"
	"slices"
)

// Matrix cell answers (MatrixCheck.Unlisted).
const (
	MatrixOpen   = "open"
	MatrixClosed = "closed"
)

// MatrixProberPort is the TCP port every matrix prober listens on, the
// port of a target that names a source.
const MatrixProberPort = 8080

// MatrixAny in a cell's from or to is every source, or every target.
const MatrixAny = "*"

// Expected is the answer every cell must have, by source then target:
// true, the connection opens. A cell listed in Open or Closed has that
// answer, every other cell Unlisted's. Names the check does not declare
// are skipped (Validate reports them).
func (m *MatrixCheck) Expected() [][]bool {
	out := make([][]bool, len(m.Sources))
	for i := range out {
		out[i] = make([]bool, len(m.Targets))
		for j := range out[i] {
			out[i][j] = m.Unlisted == MatrixOpen
		}
	}
	for _, set := range []struct {
		cells []MatrixCells
		open  bool
	}{{m.Open, true}, {m.Closed, false}} {
		for _, c := range set.cells {
			for _, i := range m.sourceIndexes(c.From) {
				for _, j := range m.targetIndexes(c.To) {
					out[i][j] = set.open
				}
			}
		}
	}
	return out
}

func (m *MatrixCheck) sourceIndexes(names []string) []int {
	var out []int
	for i, s := range m.Sources {
		if slices.Contains(names, MatrixAny) || slices.Contains(names, s.Name) {
			out = append(out, i)
		}
	}
	return out
}

func (m *MatrixCheck) targetIndexes(names []string) []int {
	var out []int
	for j, t := range m.Targets {
		if slices.Contains(names, MatrixAny) || slices.Contains(names, t.Name) {
			out = append(out, j)
		}
	}
	return out
}

// ProberPort is the port of t's prober that t tries: its Port, or
// MatrixProberPort.
func (t MatrixTarget) ProberPort() int {
	if t.Port != 0 {
		return t.Port
	}
	return MatrixProberPort
}

// ProberPorts are the ports the prober of the source named source listens
// on: MatrixProberPort and every port m's targets name for it, sorted.
func (m *MatrixCheck) ProberPorts(source string) []int {
	out := []int{MatrixProberPort}
	for _, t := range m.Targets {
		if t.Source == source && !slices.Contains(out, t.ProberPort()) {
			out = append(out, t.ProberPort())
		}
	}
	slices.Sort(out)
	return out
}

// Address says where t is, for messages: its host:port, or its source's
// prober and port.
func (t MatrixTarget) Address() string {
	if t.Source != "" {
		return fmt.Sprintf("the prober of %s, port %d", t.Source, t.ProberPort())
	}
	return t.To
}
