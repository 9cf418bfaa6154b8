package checks

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/labctl/labctl/lab"
)

func TestWrittenDuringProbe(t *testing.T) {
	root := t.TempDir()
	writeFile(t, root, "/root/report.json", `{"drift": false}`, 0o644)
	written := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	if err := os.Chtimes(filepath.Join(root, "/root/report.json"), written, written); err != nil {
		t.Fatal(err)
	}
	check := lab.Check{File: &lab.FileCheck{Path: "/root/report.json", WrittenDuringProbe: true}}
	tests := []struct {
		name   string
		start  time.Time
		status Status
		msg    string
	}{
		{"no probe ran", time.Time{}, Fail, "/root/report.json must be written by the step's probe, which did not run in this round"},
		{"written before the probe", written.Add(time.Second), Fail, "which started at 12:00:01.000 UTC, found it last modified at 12:00:00.000 UTC, before the run"},
		{"written during the probe", written.Add(-time.Second), Pass, ""},
		{"written the instant it started", written, Pass, ""},
	}
	future := time.Now().Add(time.Hour)
	writeFile(t, root, "/root/touched.json", `{"drift": false}`, 0o644)
	if err := os.Chtimes(filepath.Join(root, "/root/touched.json"), future, future); err != nil {
		t.Fatal(err)
	}
	touched := lab.Check{File: &lab.FileCheck{Path: "/root/touched.json", WrittenDuringProbe: true}}
	r := runCheck(t, Env{Root: root, ProbeStart: time.Now().Add(-time.Minute)}, touched)
	if r.Status != Fail || !strings.Contains(r.Message, "set by hand") {
		t.Errorf("a report whose time was set ahead (touch -d): %s %q, want a fail saying so", r.Status, r.Message)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runCheck(t, Env{Root: root, ProbeStart: tt.start}, check)
			if r.Status != tt.status || !strings.Contains(r.Message, tt.msg) {
				t.Errorf("got %s %q, want %s containing %q", r.Status, r.Message, tt.status, tt.msg)
			}
		})
	}
}

func TestProbeStartTravelsInTheRequest(t *testing.T) {
	start := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	b, err := json.Marshal(Request{ProbeStart: &start})
	if err != nil {
		t.Fatal(err)
	}
	var req Request
	if err := json.Unmarshal(b, &req); err != nil {
		t.Fatal(err)
	}
	env, err := req.env()
	if err != nil || !env.ProbeStart.Equal(start) {
		t.Fatalf("env.ProbeStart = %v (%v), want %v", env.ProbeStart, err, start)
	}
}
