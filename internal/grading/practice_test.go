package grading

import (
	"testing"

	"github.com/labctl/labctl/lab"
)

func practiceLab() *lab.Lab {
	return &lab.Lab{Steps: []lab.Step{
		{ID: "plain", Checks: []lab.Check{{Name: "f", File: &lab.FileCheck{Path: "/root/a"}}}},
		{ID: "probed", Probe: &lab.Probe{Run: "/root/s.sh"}, Checks: []lab.Check{
			{Name: "report", File: &lab.FileCheck{Path: "/root/r", WrittenDuringProbe: true}},
			{Name: "applied", Audit: &lab.AuditCheck{DuringProbe: true}},
			{Name: "exec", File: &lab.FileCheck{Path: "/root/s.sh"}},
		}},
		{ID: "audited", Checks: []lab.Check{{Name: "by-apply", Audit: &lab.AuditCheck{}}}},
	}}
}

func TestWithoutProbes(t *testing.T) {
	l := practiceLab()
	w := WithoutProbes(l)
	if w.Steps[1].Probe != nil || len(w.Steps[1].Checks) != 1 || w.Steps[1].Checks[0].Name != "exec" {
		t.Errorf("probed step: %+v", w.Steps[1])
	}
	if len(w.Steps[2].Checks) != 1 {
		t.Error("an audit check without a probe is dropped")
	}
	if l.Steps[1].Probe == nil || len(l.Steps[1].Checks) != 3 {
		t.Error("the lab itself changed")
	}
}

func TestPractice(t *testing.T) {
	l := practiceLab()
	p := Practice(l)
	want := map[string]bool{"f": false, "report": true, "applied": true, "exec": false, "by-apply": true}
	for _, s := range p.Steps {
		if s.Probe != nil {
			t.Errorf("step %s keeps its probe", s.ID)
		}
		for _, c := range s.Checks {
			if c.Optional != want[c.Name] {
				t.Errorf("%s optional = %v", c.Name, c.Optional)
			}
		}
	}
	if l.Steps[2].Checks[0].Optional || l.Steps[1].Probe == nil {
		t.Error("the lab itself changed")
	}
}
