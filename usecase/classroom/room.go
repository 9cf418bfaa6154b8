package classroom

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/labctl/labctl/provision/class"
)

// Cluster is what the capacity decision reads of a class's cluster.
type Cluster interface {
	Roll
	// Capacity is what the cluster can still schedule, and one learner's
	// cost.
	Capacity(ctx context.Context) (class.Capacity, error)
}

// CheckRoom refuses, with a *RoomError, to bring up learners the cluster
// cannot schedule. Only the learners not there yet need room: a learner
// whose namespace exists has its Pods' requests counted in the capacity
// already, ready or not (an interrupted run, a restarted node).
//
// A node that is not Ready yet (one just made) may give room: CheckRoom
// waits up to NodeWait for it, telling waiting which nodes it waits for.
func CheckRoom(ctx context.Context, c Cluster, learners []string, waiting func(nodes []string)) error {
	have, err := c.Learners(ctx)
	if err != nil {
		return err
	}
	up := map[string]bool{}
	for _, l := range have {
		up[l.Name] = true
	}
	missing := 0
	for _, n := range learners {
		if !up[n] {
			missing++
		}
	}
	if missing == 0 {
		return nil
	}
	deadline := time.Now().Add(NodeWait)
	told := false
	for {
		cap, err := c.Capacity(ctx)
		if err != nil {
			return err
		}
		if cap.Fits() >= missing {
			return nil
		}
		if len(cap.NotReady) == 0 || !time.Now().Before(deadline) {
			return &RoomError{Capacity: cap, Missing: missing, Waited: told}
		}
		if !told && waiting != nil {
			waiting(cap.NotReady)
		}
		told = true
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(nodePoll):
		}
	}
}

// NodeWait bounds how long CheckRoom waits for nodes to be Ready, and
// nodePoll how often it looks.
var (
	NodeWait = 2 * time.Minute
	nodePoll = 2 * time.Second
)

// RoomError says the cluster has no room for Missing more learners: what
// it has, what one learner costs, and what to do.
type RoomError struct {
	Capacity class.Capacity
	Missing  int
	// Waited says CheckRoom waited NodeWait for the nodes not Ready.
	Waited bool
}

func (e *RoomError) Error() string {
	c := e.Capacity
	if c.Nodes == 0 && len(c.OtherArch) > 0 {
		return fmt.Sprintf("the class cluster has no Ready node that can run this labctl's checker, built for %s: it has %s.\n"+
			"Set checker-binary (LABCTL_CHECKER_BINARY) to a labctl built for them "+
			"(CGO_ENABLED=0 GOARCH=%s go build -o labctl-nodes ./cmd/labctl), or add %s nodes.",
			c.Arch, archText(c.OtherArch), slices.Sorted(maps.Keys(c.OtherArch))[0], c.Arch)
	}
	msg := fmt.Sprintf("the class cluster has room for %d more learner(s), not the %d not yet up: "+
		"%s of memory and %s CPU are free on %d node(s), and each learner asks for %s and %s CPU.\n"+
		"Bring up fewer learners (--learners, or a shorter roster), or add nodes to the cluster.",
		max(c.Fits(), 0), e.Missing, bytesText(c.FreeMemory), milliCPUText(c.FreeMilliCPU), c.Nodes,
		bytesText(c.LearnerMemory), milliCPUText(c.LearnerMilliCPU))
	if len(c.OtherArch) > 0 {
		msg += fmt.Sprintf("\nNot counted: %s, which cannot run this labctl's checker (built for %s).", archText(c.OtherArch), c.Arch)
	}
	if len(c.NotReady) > 0 {
		waited := ""
		if e.Waited {
			waited = " after " + NodeWait.String()
		}
		msg += fmt.Sprintf("\nNot Ready yet%s: node(s) %s. A node just made needs a minute or two: when `kubectl get nodes` "+
			"shows it Ready, run class up again.", waited, strings.Join(c.NotReady, ", "))
	}
	return msg
}

// archText lists node counts by architecture: "2 node(s) of arm64".
func archText(m map[string]int) string {
	var parts []string
	for _, a := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%d node(s) of %s", m[a], a))
	}
	return strings.Join(parts, ", ")
}

// bytesText is n bytes as GiB or MiB.
func bytesText(n int64) string {
	const mib, gib = 1 << 20, 1 << 30
	if n >= gib {
		return fmt.Sprintf("%.1f GiB", float64(n)/gib)
	}
	return fmt.Sprintf("%d MiB", n/mib)
}

// milliCPUText is m thousandths of a CPU as a number of CPUs.
func milliCPUText(m int64) string {
	return strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.3f", float64(m)/1000), "0"), ".")
}
