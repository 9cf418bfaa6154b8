package checks

import (
	"context"
	"testing"

	"github.com/labctl/labctl/lab"
)

// BenchmarkAuditRound reads the recorded log and judges the GitOps lab's
// four audit checks in one round, as the checker does.
func BenchmarkAuditRound(b *testing.B) {
	dir := recordedLog(b, "delete")
	cs := []lab.Check{
		{Name: "scaled", Audit: &lab.AuditCheck{AuditSelector: scaleSel, Request: &lab.RequestAssert{Path: "spec.replicas", Assert: lab.Assert{Equals: num(5)}}}},
		{Name: "applied", Audit: &lab.AuditCheck{AuditSelector: applySel, Request: &lab.RequestAssert{Path: "spec.replicas", Assert: lab.Assert{Equals: num(3)}}}},
		{Name: "after", Audit: &lab.AuditCheck{AuditSelector: applySel, After: &scaleSel}},
		{Name: "absent", Audit: &lab.AuditCheck{AuditSelector: scaleSel, Absent: true, After: &applySel}},
	}
	for b.Loop() {
		Run(context.Background(), Env{Root: "/", Audit: &AuditSource{Dir: dir}}, cs)
	}
}
