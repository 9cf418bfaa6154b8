package checks

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/labels"

	"github.com/labctl/labctl/internal/msg"
	"github.com/labctl/labctl/lab"
)

// MatrixProber tries every cell of a matrix check, each source from its
// own prober Pod, and says for each, by source then target, whether the
// connection opened and, when it did not, why.
type MatrixProber interface {
	// tries bounds each connection, and picks the cells tried twice.
	ProbeMatrix(ctx context.Context, m *lab.MatrixCheck, image string, tries MatrixTries) ([][]Tried, error)
}

// Tried is one cell's outcome: the connection opened, or Detail says why
// not.
type Tried struct {
	Opened bool
	Detail string
	// TimedOut says that the connection got no answer within its bound.
	TimedOut bool
	// Self is a cell from a source to its own prober, which is not
	// tried, nor judged.
	Self bool
}

// matrixConnectTimeout bounds each connection a prober tries, in seconds.
const matrixConnectTimeout = 2

// matrixRetryTimeout bounds the second try of the cells expected open that
// got no answer within matrixConnectTimeout, in seconds: on a machine under
// heavy load, a connection the policies allow can take longer to open.
const matrixRetryTimeout = 6

// checkMatrix tries every cell of the matrix and compares each with the
// lab's answer: pass when every cell is as expected; fail naming each
// wrong cell (source, target, expected, found); error when the cells could
// not all be tried.
func checkMatrix(ctx context.Context, env Env, m *lab.MatrixCheck) error {
	prober, ok := env.Kube.(MatrixProber)
	if env.Kube == nil || !ok {
		return errNoCluster
	}
	if env.ReachImage == "" {
		return errors.New("the checker has no image to start a matrix check's prober Pods from")
	}
	// A cell expected open that got no answer is tried once more, with a
	// longer bound, when every wrong cell is one (slowOpenCells): a cell
	// expected closed that opened, or one refused, is wrong whatever a
	// second try says.
	found, err := prober.ProbeMatrix(ctx, m, env.ReachImage, MatrixTries{
		Bound:      matrixConnectTimeout,
		Again:      func(found [][]Tried) [][2]int { return slowOpenCells(m, found) },
		AgainBound: matrixRetryTimeout,
	})
	if err != nil {
		return err
	}
	if env.cells != nil {
		*env.cells = MatrixCells(m, found)
	}
	return judgeMatrix(m, found)
}

// slowOpenCells lists the cells (source, target) expected open that got
// no answer in found, when every wrong cell of found is one of them; nil
// otherwise, and when no cell is wrong.
func slowOpenCells(m *lab.MatrixCheck, found [][]Tried) [][2]int {
	want := m.Expected()
	if len(found) != len(want) {
		return nil
	}
	var slow [][2]int
	for i, row := range want {
		if len(found[i]) != len(row) {
			return nil
		}
		for j, open := range row {
			got := found[i][j]
			switch {
			case got.Self || got.Opened == open:
			case open && got.TimedOut:
				slow = append(slow, [2]int{i, j})
			default:
				return nil
			}
		}
	}
	return slow
}

// judgeMatrix compares found with the matrix's expected answers.
func judgeMatrix(m *lab.MatrixCheck, found [][]Tried) error {
	want := m.Expected()
	if len(found) != len(want) {
		return fmt.Errorf("the probers answered for %d sources of %d", len(found), len(want))
	}
	var wrong []msg.Text
	judged := 0
	for i, row := range want {
		if len(found[i]) != len(row) {
			return fmt.Errorf("the prober of %s answered for %d targets of %d", m.Sources[i].Name, len(found[i]), len(row))
		}
		for j, open := range row {
			got := found[i][j]
			if got.Self {
				continue
			}
			judged++
			if got.Opened == open {
				continue
			}
			what := msg.T(msg.MatrixClosed)
			if got.Opened {
				what = msg.T(msg.MatrixOpen)
			} else if got.Detail != "" {
				what = msg.T(msg.MatrixWhy, msg.Detail(got.Detail))
			}
			expected := msg.T(msg.MatrixClosed)
			if open {
				expected = msg.T(msg.MatrixOpen)
			}
			src := m.Sources[i]
			wrong = append(wrong, msg.T(msg.MatrixCell, src.Name, describeSource(src), m.Targets[j].Name, m.Targets[j].Address(), expected, what))
		}
	}
	if len(wrong) == 0 {
		return nil
	}
	return failf(msg.MatrixWrong, len(wrong), judged, wrong)
}

// matrixScript is what runs in a prober Pod, through the exec API: its
// arguments are host port pairs, one per target. It first waits for the
// line "go" on its stdin, which the grader sends once the policy agent has
// synced (any other line, or none, ends it without a try), so that the
// exec starts while the agent syncs. It tries every target at once, each once within
// matrixConnectTimeout seconds, and prints one line per target,
// "cell N open" or "cell N closed CODE OUTPUT" (the try's messages on one
// line, their last 300 characters: bash says why a name does not resolve
// on the line before its last), then "done". Before and
// after, it names every process in the container but the Pod's own (PID 1)
// and those of the round's tries, which carry the round's secret in
// LABCTL_PROBER_ROUND ("stranger PID"): a process the learner left there
// through kubectl exec could change what the tries say. A process is a
// stranger only when it still lacks the secret 0.6 s on: the tries of
// another check of the round begin as an exec's own process, which then
// becomes their shell, with the secret.
const matrixScript = `ours() {
  [ "$1" = 1 ] && return 0
  local e found=
  { while IFS= read -r -d '' e; do
      [ "$e" = "LABCTL_PROBER_ROUND=$LABCTL_PROBER_ROUND" ] && found=1
    done; } < "/proc/$1/environ" 2>/dev/null
  [ -n "$found" ] || [ ! -e "/proc/$1" ]
}
strangers() {
  local p odd= left tries
  for p in /proc/[0-9]*; do ours "${p#/proc/}" || odd="$odd ${p#/proc/}"; done
  for tries in 1 2 3; do
    [ -z "$odd" ] && return
    sleep 0.2
    left=
    for p in $odd; do ours "$p" || left="$left $p"; done
    odd=$left
  done
  for p in $odd; do printf 'stranger %s\n' "$p"; done
}
[ -n "$LABCTL_PROBER_ROUND" ] || { echo 'stranger no-round'; exit 0; }
IFS= read -r go || exit 0
[ "$go" = go ] || exit 0
strangers
n=0
while [ "$#" -ge 2 ]; do
  (
    out=$(timeout MATRIX_TIMEOUT bash -c 'exec 3<>"/dev/tcp/$0/$1"' "$1" "$2" 2>&1)
    code=$?
    if [ "$code" = 0 ]; then
      printf 'cell %d open\n' "$n"
    else
      out=${out//$'\n'/ }
      [ "${#out}" -le 300 ] || out=${out: -300}
      printf 'cell %d closed %d %s\n' "$n" "$code" "$out"
    fi
  ) &
  n=$((n+1))
  shift 2
done
wait
strangers
echo done`

// matrixCommand runs matrixScript on targets, host:port each, each
// connection bound to bound seconds, with the round's secret: the tries of other checks of the round may run in the
// same prober at the same time, and are no strangers. The C locale keeps
// bash from warning about one the image lacks, a line the parser refuses.
func matrixCommand(round string, targets []string, bound int) ([]string, error) {
	cmd := []string{"env", "LC_ALL=C", "LABCTL_PROBER_ROUND=" + round, "bash", "-c", strings.Replace(matrixScript, "MATRIX_TIMEOUT", strconv.Itoa(bound), 1), "prober"}
	for _, t := range targets {
		host, port, err := lab.SplitReachTarget(t)
		if err != nil {
			return nil, err
		}
		cmd = append(cmd, host, strconv.Itoa(port))
	}
	return cmd, nil
}

// errStranger is a prober's output naming a process that is not its own:
// the prober is no longer as the grader left it.
var errStranger = errors.New("a process that labctl did not start runs in the prober Pod")

// parseProberOutput reads matrixScript's output for n targets, tried
// within bound seconds each: exactly one line per cell, then done, and no
// stranger.
func parseProberOutput(out string, n, bound int) ([]Tried, error) {
	got := make([]Tried, n)
	seen := make([]bool, n)
	done := false
	for _, line := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		if done {
			return nil, fmt.Errorf("the prober printed %q after its last line", line)
		}
		fields := strings.SplitN(line, " ", 5)
		switch {
		case line == "done":
			done = true
		case fields[0] == "stranger":
			return nil, errStranger
		case fields[0] == "cell" && len(fields) >= 3:
			i, err := strconv.Atoi(fields[1])
			if err != nil || i < 0 || i >= n {
				return nil, fmt.Errorf("the prober answered for a cell it was not asked about: %q", line)
			}
			if seen[i] {
				return nil, fmt.Errorf("the prober answered twice for cell %d", i)
			}
			seen[i] = true
			switch {
			case fields[2] == "open" && len(fields) == 3:
				got[i] = Tried{Opened: true}
			case fields[2] == "closed" && len(fields) >= 4:
				code, err := strconv.Atoi(fields[3])
				if err != nil {
					return nil, fmt.Errorf("the prober's line %q has no exit code", line)
				}
				detail := ""
				if len(fields) == 5 {
					detail = fields[4]
				}
				got[i] = Tried{Detail: matrixDetail(code, detail, bound), TimedOut: code == reachTimedOut}
			default:
				return nil, fmt.Errorf("the prober's line %q is neither open nor closed", line)
			}
		default:
			return nil, fmt.Errorf("the prober printed %q, which is none of its lines", line)
		}
	}
	if !done {
		return nil, errors.New("the prober ended before it tried every target")
	}
	for i, ok := range seen {
		if !ok {
			return nil, fmt.Errorf("the prober did not answer for cell %d", i)
		}
	}
	return got, nil
}

// matrixDetail says why a cell's connection, bound to bound seconds, did
// not open.
func matrixDetail(code int, last string, bound int) string {
	if code == reachTimedOut {
		return fmt.Sprintf("no answer within %ds", bound)
	}
	return reachDetail(last)
}

// describeSource says what a source's prober is: "a Pod in shop labelled
// app=shop,tier=web".
func describeSource(s lab.MatrixSource) msg.Text {
	if len(s.Labels) == 0 {
		return msg.T(msg.MatrixFrom, s.Namespace)
	}
	return msg.T(msg.MatrixFromLabels, s.Namespace, labels.SelectorFromSet(s.Labels).String())
}
