package provision

import (
	"context"
	"strings"
	"testing"

	"github.com/labctl/labctl/checks"
	"github.com/labctl/labctl/lab"
)

// psTitles are the titles the engine answers for NodePSArgs.
var psTitles = []string{"PID", "ELAPSED", "CGROUP", "COMMAND"}

// v1Cgroups is ps's cgroup column for a process of a kind node on a
// cgroup v1 host, in the control group path under the node's container.
func v1Cgroups(path string) string {
	node := "/docker/c5d566a538aa"
	return "9:name=systemd:" + node + path + ",8:pids:" + node + path + ",6:freezer:" + node
}

// processRuntime is a fake runtime whose nodes have the processes the
// host's ps lists, the rows the engine's top answers.
type processRuntime struct {
	fakeRuntime
	rows  map[string][][]string // node → rows under psTitles
	asked []string
}

func (p *processRuntime) Features() Features {
	f := p.fakeRuntime.Features()
	f.NodeProcesses = func(_ context.Context, node string) ([]string, [][]string, error) {
		p.asked = append(p.asked, node)
		return psTitles, p.rows[node], nil
	}
	return f
}

func TestUnitProcesses(t *testing.T) {
	rows := [][]string{
		{"100", "900", v1Cgroups("/init.scope"), "/sbin/init"},
		{"200", "800", v1Cgroups("/kubelet.slice/kubelet.service"), "/usr/bin/kubelet --config=/var/lib/kubelet/config.yaml"},
		{"300", "700", v1Cgroups("/system.slice/containerd.service"), "/usr/local/bin/containerd"},
		// A shell's command names the unit, its control group is another's.
		{"400", "600", v1Cgroups("/system.slice/ssh.service"), "systemctl status kubelet.service"},
		// cgroup v2: one unified hierarchy, 0::.
		{"500", "500", "0::/system.slice/docker-1a2b.scope/system.slice/cron.service", "cron -f"},
		// A unit's sub-group is the unit's.
		{"600", "400", "0::/system.slice/docker-1a2b.scope/system.slice/cron.service/job", "sh -c backup"},
		// Another controller's hierarchy says nothing of systemd's units.
		{"700", "300", "4:memory:/docker/c5d566a538aa/system.slice/ntp.service", "ntpd"},
	}
	for _, tc := range []struct {
		unit string
		want string
	}{
		{"kubelet.service", "pid 200 (/usr/bin/kubelet --config=/var/lib/kubelet/config.yaml)"},
		{"containerd.service", "pid 300 (/usr/local/bin/containerd)"},
		{"cron.service", "pid 500 (cron -f) pid 600 (sh -c backup)"},
		{"ssh.service", "pid 400 (systemctl status kubelet.service)"},
		{"ntp.service", ""},
		{"kube.service", ""},
	} {
		got, err := unitProcesses(psTitles, rows, tc.unit)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Join(got, " ") != tc.want {
			t.Errorf("%s: found %q, want %q", tc.unit, got, tc.want)
		}
	}
	// A service that systemd starts again every second, failing as it
	// starts, never runs long enough to run.
	young := [][]string{{"800", "1", v1Cgroups("/kubelet.slice/kubelet.service"), "/usr/bin/kubelet"}}
	if got, _ := unitProcesses(psTitles, young, "kubelet.service"); len(got) != 0 {
		t.Errorf("a process one second old runs the unit: %q", got)
	}
	if _, err := unitProcesses([]string{"PID", "COMMAND"}, nil, "kubelet.service"); err == nil || !strings.Contains(err.Error(), "CGROUP") {
		t.Errorf("a ps that ignores the columns asked is not reported: %v", err)
	}
	if _, err := unitProcesses(psTitles, [][]string{{"1", "x", "0::/", "init"}}, "kubelet.service"); err == nil {
		t.Error("an age that is not a number is not reported")
	}
}

// A service check is judged from the node's processes the host lists: a
// node whose systemctl says kubelet is active (the learner, root there,
// replaced it) while no process runs in kubelet.service fails it, and
// nothing of the node is asked.
func TestServiceChecksAreJudgedFromTheHost(t *testing.T) {
	issuing(t, "never")
	running := [][]string{
		{"200", "800", v1Cgroups("/kubelet.slice/kubelet.service"), "/usr/bin/kubelet"},
	}
	stopped := [][]string{
		// The liar: a script printing "active" lives in the learner's shell's group.
		{"400", "600", v1Cgroups("/system.slice/labctl-node-shell.service"), "/bin/sh /usr/bin/systemctl is-active kubelet"},
	}
	false_ := false
	cs := []lab.Check{
		{Name: "runs", Service: &lab.ServiceCheck{Node: "control-plane", Unit: "kubelet.service"}},
		{Name: "home", File: &lab.FileCheck{Path: "/root/a"}},
		{Name: "stopped", Service: &lab.ServiceCheck{Node: "control-plane", Unit: "kubelet.service", Running: &false_}},
	}
	for _, tc := range []struct {
		rows [][]string
		want []checks.Status
		msg  string
	}{
		{running, []checks.Status{checks.Pass, checks.Pass, checks.Fail}, "kubelet.service runs on node control-plane: pid 200 (/usr/bin/kubelet)"},
		{stopped, []checks.Status{checks.Fail, checks.Pass, checks.Pass}, "expected kubelet.service to run on node control-plane, found no process of the node in its control group"},
	} {
		rt := &processRuntime{rows: map[string][][]string{"control-plane": tc.rows}}
		l := liveLab("")
		l.Cluster.NodeAccess = true
		e := NewLive(l, rt, Identity{}, fresh)
		got, err := e.RunChecks(context.Background(), checks.Round{Checks: cs})
		if err != nil {
			t.Fatal(err)
		}
		for i, r := range got {
			if r.Name != cs[i].Name || r.Status != tc.want[i] {
				t.Errorf("result %d: %s %s (%s), want %s %s", i, r.Name, r.Status, r.Message, cs[i].Name, tc.want[i])
			}
		}
		if got[0].Message != tc.msg || got[0].Points != 1 {
			t.Errorf("the check says %q worth %d, want %q worth 1", got[0].Message, got[0].Points, tc.msg)
		}
		if len(rt.requests) != 1 || len(rt.requests[0].Checks) != 1 || rt.requests[0].Checks[0].Name != "home" {
			t.Errorf("the checker was asked %+v, want the sandbox's check only", rt.requests)
		}
		if strings.Join(rt.asked, " ") != "control-plane control-plane" {
			t.Errorf("the engine was asked for the processes of %q", rt.asked)
		}
	}
}
