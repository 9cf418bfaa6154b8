package lab

import (
	"testing"
	"time"
)

func TestDefaults(t *testing.T) {
	src := header + `      - name: f
        file: {path: /root/x, field: {path: a}}
      - name: g
        git: {repo: /root/r, message: {matches: x}, field: {file: a.yaml, path: a}}
      - name: k
        kube: {apiVersion: v1, kind: Pod, name: p, field: {path: a}}
      - name: c
        command: {run: [ls]}
`
	l, err := Parse("t.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if l.Cluster.PodSecurity != PodSecurityBaseline {
		t.Errorf("cluster.podSecurity defaults to %q, want baseline", l.Cluster.PodSecurity)
	}
	if l.Cluster.Workloads != WorkloadsRun {
		t.Errorf("cluster.workloads defaults to %q, want run", l.Cluster.Workloads)
	}
	if l.Cluster.Provider != "kind" || l.Sandbox.WorkDir != "/root" || l.Sandbox.Fixtures != "/opt/lab/fixtures" || l.Metadata.Language != "en" {
		t.Errorf("lab defaults: provider %q workDir %q fixtures %q language %q",
			l.Cluster.Provider, l.Sandbox.WorkDir, l.Sandbox.Fixtures, l.Metadata.Language)
	}
	cs := l.Steps[0].Checks
	for _, c := range cs {
		if c.Timeout.Duration != 10*time.Second || c.Points != 1 {
			t.Errorf("check %s: timeout %v points %d, want 10s and 1", c.Name, c.Timeout, c.Points)
		}
	}
	isTrue := func(name string, b *bool) {
		t.Helper()
		if b == nil || !*b {
			t.Errorf("%s = %v, want true", name, b)
		}
	}
	isTrue("file.exists", cs[0].File.Exists)
	isTrue("file.field.exists", cs[0].File.Field.Exists)
	isTrue("git.exists", cs[1].Git.Exists)
	isTrue("git.field.exists", cs[1].Git.Field.Exists)
	isTrue("kube.exists", cs[2].Kube.Exists)
	isTrue("kube.field.exists", cs[2].Kube.Field.Exists)
	if w := cs[1].Git.Message.Which; w != "last" {
		t.Errorf("message.which = %q, want last", w)
	}
	if ec := cs[3].Command.ExitCode; ec == nil || *ec != 0 {
		t.Errorf("command.exitCode = %v, want 0", ec)
	}
	if d := cs[3].Command.Dir; d != "/" {
		t.Errorf("command.dir = %q, want /", d)
	}
}

func TestDefaultsKeepWhatIsWritten(t *testing.T) {
	src := `apiVersion: labctl.dev/v1alpha1
kind: Lab
metadata: {name: t, language: ko}
sandbox: {workDir: /home/learner, fixtures: /srv/fixtures}
steps:
  - id: s1
    title: T
    instructions: I
    solve: S
    checks:
      - name: f
        timeout: 2s
        points: 5
        file: {path: /root/x, exists: false}
      - name: g
        git: {repo: /root/r, exists: false, message: {which: all}}
      - name: k
        kube: {apiVersion: v1, kind: Pod, name: p, exists: false}
      - name: c
        command: {run: [ls], exitCode: 3, dir: /tmp}
`
	l, err := Parse("t.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if l.Sandbox.WorkDir != "/home/learner" || l.Sandbox.Fixtures != "/srv/fixtures" || l.Metadata.Language != "ko" {
		t.Errorf("written values replaced: %+v %+v", l.Sandbox, l.Metadata)
	}
	cs := l.Steps[0].Checks
	if cs[0].Timeout.Duration != 2*time.Second || cs[0].Points != 5 || *cs[0].File.Exists {
		t.Errorf("file check = %+v", cs[0])
	}
	if *cs[1].Git.Exists || cs[1].Git.Message.Which != "all" || *cs[2].Kube.Exists {
		t.Errorf("git/kube exists or which replaced")
	}
	if *cs[3].Command.ExitCode != 3 || cs[3].Command.Dir != "/tmp" {
		t.Errorf("command = %+v", cs[3].Command)
	}
}
