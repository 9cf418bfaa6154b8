//go:build e2e

package kind

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/labctl/labctl/checks"
	"github.com/labctl/labctl/grading/progress"
	"github.com/labctl/labctl/lab"
	"github.com/labctl/labctl/sandbox"
)

const auditNS = "e2e-audit-ns"

// auditLab's one step asks, from the API server's audit log, for a scale
// of web to 5, a kubectl apply of web after it, and no scale after that.
func auditLab() *lab.Lab {
	l := e2eTestLab()
	l.Metadata.Name = "e2e-audit"
	l.Cluster.Namespaces = []string{auditNS}
	scale := lab.AuditSelector{Resource: "deployments", Subresource: "scale", Namespace: auditNS, Name: "web"}
	apply := lab.AuditSelector{Verbs: []string{"apply"}, Resource: "deployments", Namespace: auditNS, Name: "web"}
	l.Steps[0].Checks = []lab.Check{
		{Name: "scaled", Audit: &lab.AuditCheck{AuditSelector: scale,
			Request: &lab.RequestAssert{Path: "spec.replicas", Assert: lab.Assert{Equals: &lab.Value{Literal: 5}}}}},
		{Name: "applied-after-scale", Audit: &lab.AuditCheck{AuditSelector: apply, After: &scale}},
		{Name: "no-scale-after-apply", Audit: &lab.AuditCheck{AuditSelector: scale, Absent: true, After: &apply}},
	}
	l.Steps = l.Steps[:1]
	return l
}

const auditManifest = `cat > /root/web.yaml <<'YAML'
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: ` + auditNS + `}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: registry.k8s.io/pause:3.10.2}]}
YAML
`

// TestE2EAuditEvidence runs kubectl as the learner in the sandbox and
// judges it from the audit log the grader reads; the learner can neither
// see nor change that log.
//
//	go test -tags e2e ./provision/kind/ -run TestE2EAuditEvidence -timeout 20m -v
func TestE2EAuditEvidence(t *testing.T) {
	t.Setenv("LABCTL_STATE_DIR", t.TempDir())
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	ctx := context.Background()
	l := auditLab()
	env := upFresh(t, ctx, l)

	learner := func(s string) {
		t.Helper()
		if code, out := script(t, env, s); code != 0 {
			t.Fatalf("%q exited %d:\n%s", s, code, out)
		}
	}
	expect := func(when string, want ...checks.Status) {
		t.Helper()
		// The round's audit windows come from the progress, read once,
		// as labctl check reads it.
		dir, err := stateDir(l.Metadata.Name)
		if err != nil {
			t.Fatal(err)
		}
		p, _ := progress.NewStore(dir).Load(l.Metadata.Name)
		cs := l.Steps[0].Checks
		rs, err := checks.RunRound(ctx, checks.Round{Checks: cs, Windows: checks.Windows{Since: p.AuditWindows(l, cs)}}, env.RunChecks)
		if err != nil {
			t.Fatalf("%s: %v", when, err)
		}
		for i, r := range rs {
			if r.Status != want[i] {
				t.Errorf("%s: %s is %s (%s), want %s", when, r.Name, r.Status, r.Message, want[i])
			}
		}
	}
	scale := func(n string) string { return "kubectl scale deploy web -n " + auditNS + " --replicas=" + n }
	learner(auditManifest + "kubectl apply -f /root/web.yaml")
	expect("after the first apply", checks.Fail, checks.Fail, checks.Pass)
	learner(scale("5"))
	expect("after the scale", checks.Pass, checks.Fail, checks.Fail)
	learner("kubectl diff -f /root/web.yaml; test $? = 1")
	expect("after a diff (a dry run)", checks.Pass, checks.Fail, checks.Fail)
	learner("kubectl apply -f /root/web.yaml")
	expect("after the apply", checks.Pass, checks.Pass, checks.Pass)
	learner(scale("3"))
	expect("after undoing the drift by hand", checks.Pass, checks.Fail, checks.Fail)

	// The step's window: a step that became current now saw none of it.
	dir, err := stateDir(l.Metadata.Name)
	if err != nil {
		t.Fatal(err)
	}
	p := progress.New(l.Metadata.Name)
	if err := p.StartAt(l, "one", time.Now()); err != nil {
		t.Fatal(err)
	}
	if err := progress.NewStore(dir).Save(p); err != nil {
		t.Fatal(err)
	}
	expect("in a step begun after it all", checks.Fail, checks.Fail, checks.Pass)
	learner(scale("5") + " && kubectl apply -f /root/web.yaml")
	expect("within the new step", checks.Pass, checks.Pass, checks.Pass)

	// The learner sees no audit log, and cannot reach the node's.
	code, out := script(t, env, "ls /var/log/labctl-audit /etc/kubernetes/labctl-audit 2>&1; "+
		"find / -xdev \\( -name 'audit*.log' -o -name labctl-audit \\) -print 2>/dev/null; exit 0")
	if code != 0 || strings.Contains(out, "audit.log") || !strings.Contains(out, "No such file") {
		t.Errorf("the sandbox sees an audit log:\n%s", out)
	}
	// The grader reads it, read-only.
	w := exec.Command("docker", "exec", sandbox.GraderName(l.Metadata.Name), "sh", "-c",
		"test -s "+sandbox.AuditMount+"/audit.log && : >> "+sandbox.AuditMount+"/audit.log")
	if b, err := w.CombinedOutput(); err == nil || !strings.Contains(string(b), "Read-only") {
		t.Errorf("the grader could write the audit log, or has none (%v): %s", err, b)
	}
}
