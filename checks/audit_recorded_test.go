package checks

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/labctl/labctl/lab"
)

// The files in testdata/audit were recorded from a labctl cluster
// (Kubernetes 1.37): each holds the audit lines one kubectl command of the
// learner's made, in this order.
var recordedCommands = []string{
	"apply-create",      // kubectl apply (the object is new): create
	"apply",             // kubectl apply, replicas 2 → 3: client-side patch
	"scale",             // kubectl scale --replicas=5: patch of deployments/scale
	"diff",              // kubectl diff: a dry-run patch, which changes nothing
	"apply-server-side", // kubectl apply --server-side --force-conflicts
	"edit",              // kubectl edit, replicas → 4
	"patch",             // kubectl patch -p '{"spec":{"replicas":2}}'
	"scale-back",        // kubectl scale --replicas=3
	"delete",            // kubectl delete deploy web
}

// recordedLog puts the recorded files together as one audit log, up to and
// including the command named last.
func recordedLog(t testing.TB, last string) string {
	t.Helper()
	var b strings.Builder
	for _, name := range recordedCommands {
		data, err := os.ReadFile(filepath.Join("testdata", "audit", name+".jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		b.Write(data)
		if name == last {
			break
		}
	}
	dir := auditDir(t, nil)
	if err := os.WriteFile(filepath.Join(dir, auditLogName), []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestRecordedRequestsAreReadAsKubectlSentThem(t *testing.T) {
	recs, err := readAuditLog(recordedLog(t, "delete"))
	if err != nil {
		t.Fatal(err)
	}
	type seen struct {
		verb, sub, manager string
		apply, dryRun      bool
	}
	var got []seen
	for _, r := range recs {
		if r.User != "system:serviceaccount:labctl-system:learner" || r.Resource != "deployments" || r.Name != "web" && r.Verb != "create" {
			t.Errorf("record %+v", r)
		}
		got = append(got, seen{r.Verb, r.Subresource, r.FieldManager, r.isApply(), r.DryRun})
	}
	want := []seen{
		{"create", "", "kubectl-client-side-apply", true, false},
		{"patch", "", "kubectl-client-side-apply", true, false},
		{"patch", "scale", "", false, false},
		{"patch", "", "kubectl-client-side-apply", true, true},
		{"patch", "", "kubectl", true, false},
		{"patch", "", "kubectl-last-applied", false, false},
		{"patch", "", "kubectl", true, false},
		{"patch", "", "kubectl", true, false},
		{"patch", "", "kubectl-edit", false, false},
		{"patch", "", "kubectl-patch", false, false},
		{"patch", "scale", "", false, false},
		{"delete", "", "", false, false},
	}
	if len(got) != len(want) {
		t.Fatalf("read %d records, want %d: %+v", len(got), len(want), got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("record %d: %+v, want %+v", i, got[i], want[i])
		}
	}
}

func TestRecordedGitOpsSteps(t *testing.T) {
	replicas := func(n int) *lab.RequestAssert {
		return &lab.RequestAssert{Path: "spec.replicas", Assert: lab.Assert{Equals: num(n)}}
	}
	scaledTo5 := &lab.AuditCheck{AuditSelector: scaleSel, Request: replicas(5)}
	appliedAfterDrift := &lab.AuditCheck{AuditSelector: applySel, After: &scaleSel}
	noScaleAfterApply := &lab.AuditCheck{AuditSelector: scaleSel, Absent: true, After: &applySel}
	applied3 := &lab.AuditCheck{AuditSelector: applySel, Request: replicas(3)}
	for _, tc := range []struct {
		name  string
		last  string
		check *lab.AuditCheck
		want  Status
	}{
		{"step 5: the client-side apply sent replicas 3", "apply", applied3, Pass},
		{"step 5: kubectl scale is no apply", "scale", &lab.AuditCheck{AuditSelector: applySel, Request: replicas(5)}, Fail},
		{"step 6: kubectl scale to 5", "scale", scaledTo5, Pass},
		{"step 6: no scale yet", "apply", scaledTo5, Fail},
		{"step 7: a dry run is no apply after the drift", "diff", appliedAfterDrift, Fail},
		{"step 7: apply --server-side after the drift", "apply-server-side", appliedAfterDrift, Pass},
		{"step 7: the server-side apply sent replicas 3", "apply-server-side", &lab.AuditCheck{AuditSelector: applySel, Request: replicas(3), After: &scaleSel}, Pass},
		{"step 7: no scale after the apply", "patch", noScaleAfterApply, Pass},
		{"step 7: undone with kubectl scale", "scale-back", noScaleAfterApply, Fail},
		{"step 7: undone with kubectl scale, no apply after it", "scale-back", appliedAfterDrift, Fail},
		{"kubectl edit is a patch, not an apply", "edit", &lab.AuditCheck{AuditSelector: lab.AuditSelector{Verbs: []string{"patch"}, Resource: "deployments", Name: "web"}, Request: replicas(4)}, Pass},
		{"kubectl delete", "delete", &lab.AuditCheck{AuditSelector: lab.AuditSelector{Verbs: []string{"delete"}, Resource: "deployments", Name: "web"}}, Pass},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, text := runAudit(t, recordedLog(t, tc.last), time.Time{}, tc.check)
			if s != tc.want {
				t.Errorf("got %s %q, want %s", s, text, tc.want)
			}
		})
	}
}
