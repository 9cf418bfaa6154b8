package lab

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// probeLab is a valid lab whose step s1 has a probe; extra is YAML added
// to the step (indented four spaces).
func probeLab(checks, extra string) string {
	return strings.Replace(header, "    checks:\n", extra+"    checks:\n", 1) + checks
}

const probeChecks = "      - {name: exists, file: {path: /root/sync.sh, executable: true}}\n" +
	"      - {name: fresh, file: {path: /root/out.json, writtenDuringProbe: true}}\n"

func TestProbeDefaultsAndSummary(t *testing.T) {
	l, err := Parse("t.yaml", []byte(probeLab(probeChecks, "    probe:\n      setup: kubectl scale\n      run: /root/sync.sh\n      needs: [exists]\n"+
		"    alternatives:\n      - {name: other, script: 'true'}\n"+
		"    mistakes:\n      - {name: skipped, script: 'rm /root/sync.sh', fails: [exists, fresh, probe]}\n")))
	if err != nil {
		t.Fatal(err)
	}
	p := l.Steps[0].Probe
	if p == nil || p.Timeout.Duration != time.Minute || p.Run != "/root/sync.sh" {
		t.Fatalf("probe %+v", p)
	}
	if len(l.Steps[0].Alternatives) != 1 || l.Steps[0].Alternatives[0].Name != "other" {
		t.Errorf("alternatives %+v", l.Steps[0].Alternatives)
	}
	want := []string{`step s1: runs "/root/sync.sh" in the sandbox as the learner (deadline 1m0s); setup before it in a probe container, admin of the lab's namespaces; only when these checks pass: exists`}
	if got := l.ProbeSummary(); len(got) != 1 || got[0] != want[0] {
		t.Errorf("summary %q, want %q", got, want)
	}
}

// TestProbeBrokenWorld: a probe's broken world loads, shows in the summary
// and in the lab's powers, and is translated.
func TestProbeBrokenWorld(t *testing.T) {
	l, err := Parse("t.yaml", []byte(probeLab(probeChecks, "    probe:\n      run: /root/sync.sh\n"+
		"      broken: {description: web has no Pod, setup: kubectl scale --replicas=0, restore: kubectl scale --replicas=1}\n")))
	if err != nil {
		t.Fatal(err)
	}
	worlds := l.Steps[0].Probe.Broken
	if len(worlds) != 1 || worlds[0].Description != "web has no Pod" || worlds[0].Setup != "kubectl scale --replicas=0" {
		t.Fatalf("broken %+v, want the one world written without a list", worlds)
	}
	b := worlds[0]
	if got := l.ProbeSummary(); len(got) != 1 || !strings.Contains(got[0], "first, in a probe container, breaks the cluster (web has no Pod) and requires the run to exit non-zero there") {
		t.Errorf("summary %q", got)
	}
	if got := strings.Join(l.Powers().AdminScripts, "; "); !strings.Contains(got, "probe worlds' setup and restore") {
		t.Errorf("admin scripts %q", got)
	}
	l.Translations = map[string]Translation{"ja": {Steps: map[string]StepText{"s1": {Broken: BrokenTexts{"web の Pod がない"}}}}}
	if got := l.In("ja").Steps[0].Probe.Broken; len(got) != 1 || got[0].Description != "web の Pod がない" || got[0].Setup != b.Setup {
		t.Errorf("translated broken world %+v", got)
	}
	if l.Steps[0].Probe.Broken[0].Description != "web has no Pod" {
		t.Errorf("translating changed the lab as written: %q", l.Steps[0].Probe.Broken[0].Description)
	}
	for _, w := range l.Lint() {
		if strings.Contains(w.Path, "broken") {
			t.Errorf("lint warns of a plain run: %v", w)
		}
	}
	// A negated run's worlds are where the command must succeed: nothing
	// to warn of.
	l.Steps[0].Probe.Run = "! /root/sync.sh"
	if got := l.ProbeSummary(); len(got) != 1 || !strings.Contains(got[0], `sets the cluster up (web has no Pod) and requires "/root/sync.sh" to exit 0 there`) {
		t.Errorf("summary of a negated run %q", got)
	}
	for _, w := range l.Lint() {
		if strings.Contains(w.Path, "broken") {
			t.Errorf("lint warns of a negated run with worlds: %v", w)
		}
	}
	l.Steps[0].Probe.Run = "/root/sync.sh"
	missing := missingStepTexts(l.Steps[0], StepText{})
	if !strings.Contains(strings.Join(missing, ","), "broken") {
		t.Errorf("missing texts %v lack the broken world's description", missing)
	}
}

// TestProbeBrokenWorlds: several broken worlds load as a list, each
// validated and translated in its order; a translation may be one string or
// a list, never more than the worlds.
func TestProbeBrokenWorlds(t *testing.T) {
	src := probeLab(probeChecks, "    probe:\n      run: /root/sync.sh\n      broken:\n"+
		"        - {description: web has no Pod, setup: scale 0, restore: scale 1}\n"+
		"        - {description: web answers HTTP 500, setup: fail, restore: heal}\n")
	l, err := Parse("t.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	worlds := l.Steps[0].Probe.Broken
	if len(worlds) != 2 || worlds[1].Description != "web answers HTTP 500" || worlds[1].Restore != "heal" {
		t.Fatalf("broken %+v", worlds)
	}
	if got := l.ProbeSummary(); len(got) != 1 || strings.Count(got[0], "breaks the cluster") != 2 {
		t.Errorf("summary %q, want both worlds", got)
	}
	if got := missingStepTexts(l.Steps[0], StepText{Broken: BrokenTexts{"a"}}); !slices.Contains(got, "broken[1]") || slices.Contains(got, "broken[0]") {
		t.Errorf("missing texts %v, want broken[1] alone", got)
	}
	l.Translations = map[string]Translation{"ja": {Steps: map[string]StepText{"s1": {Broken: BrokenTexts{"", "web が HTTP 500 を返す"}}}}}
	if got := l.In("ja").Steps[0].Probe.Broken; got[0].Description != "web has no Pod" || got[1].Description != "web が HTTP 500 を返す" {
		t.Errorf("translated worlds %+v", got)
	}
	for _, tt := range []struct{ name, src, want string }{
		{"a world without restore", strings.Replace(src, ", restore: heal", "", 1), "steps[0].probe.broken[1].restore: missing"},
		{"a translation of three", src + "translations:\n  ja:\n    steps:\n      s1:\n        broken: [a, b, c]\n", "3 descriptions, but step s1's probe has 2 broken world(s)"},
		{"a world that is a string", strings.Replace(src, "        - {description: web answers HTTP 500, setup: fail, restore: heal}\n", "        - web answers HTTP 500\n", 1), "steps[0].probe.broken[1]"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("t.yaml", []byte(tt.src))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want %q", err, tt.want)
			}
		})
	}
	// A translation of one string stands for a list of one.
	one := src + "translations:\n  ja:\n    steps:\n      s1:\n        broken: web の Pod がない\n"
	l, err = Parse("t.yaml", []byte(one))
	if err != nil {
		t.Fatal(err)
	}
	if got := l.In("ja").Steps[0].Probe.Broken; got[0].Description != "web の Pod がない" || got[1].Description != "web answers HTTP 500" {
		t.Errorf("translated worlds %+v", got)
	}
}

func TestProbeValidation(t *testing.T) {
	tests := []struct{ name, src, want string }{
		{"run missing", probeLab(probeChecks, "    probe: {setup: x}\n"), "steps[0].probe.run: missing"},
		{"negative timeout", probeLab(probeChecks, "    probe: {run: x, timeout: -1s}\n"), "steps[0].probe.timeout: -1s must be positive"},
		{"unknown need", probeLab(probeChecks, "    probe: {run: x, needs: [nope]}\n"), `steps[0].probe.needs[0]: step "s1" has no check "nope"`},
		{"check named probe", probeLab(probeChecks+"      - {name: probe, file: {path: /root/x}}\n", "    probe: {run: x}\n"), `reports the probe's run as "probe"`},
		{"writtenDuringProbe without a probe", probeLab(probeChecks, ""), "steps[0].checks[1].file.writtenDuringProbe: step \"s1\" has no probe"},
		{"duringProbe without a probe", probeLab("      - {name: a, audit: {resource: deployments, duringProbe: true}}\n", ""), "steps[0].checks[0].audit.duringProbe: step \"s1\" has no probe"},
		{"mistake names probe without one", probeLab("      - {name: c, file: {path: /root/x}}\n", "    mistakes:\n      - {name: m, script: x, fails: [probe]}\n"), `step "s1" has no check "probe"`},
		{"alternative without script", probeLab(probeChecks, "    probe: {run: x}\n    alternatives:\n      - {name: a}\n"), "steps[0].alternatives[0].script: missing"},
		{"alternatives with one name", probeLab(probeChecks, "    probe: {run: x}\n    alternatives:\n      - {name: a, script: x}\n      - {name: a, script: y}\n"), `alternative name "a" is used twice`},
		{"mutant with a script", probeLab(probeChecks, "    alternatives:\n      - {name: a, mutant: 'Role ci/r: rules[0].verbs → -get', why: w, script: x}\n"), "steps[0].alternatives[0].script: an alternative with a mutant has no script"},
		{"mutant without why", probeLab(probeChecks, "    alternatives:\n      - {name: a, mutant: 'Role ci/r: rules[0].verbs → -get'}\n"), "steps[0].alternatives[0].why: missing; say why mutant"},
		{"mutant not an id", probeLab(probeChecks, "    alternatives:\n      - {name: a, mutant: verbs, why: w}\n"), `steps[0].alternatives[0].mutant: "verbs" is not a mutant id`},
		{"mutant declared twice", probeLab(probeChecks, "    alternatives:\n      - {name: a, mutant: 'Role ci/r: deleted', why: w}\n      - {name: b, mutant: 'Role ci/r: deleted', why: w}\n"), "steps[0].alternatives[1].mutant: mutant \"Role ci/r: deleted\" is declared already at steps[0].alternatives[0].mutant"},
		{"why without a mutant", probeLab(probeChecks, "    alternatives:\n      - {name: a, script: x, why: w}\n"), "steps[0].alternatives[0].why: only an alternative with a mutant takes why"},
		{"broken without setup", probeLab(probeChecks, "    probe: {run: x, broken: {description: down, restore: y}}\n"), "steps[0].probe.broken[0].setup: missing"},
		{"broken without restore", probeLab(probeChecks, "    probe: {run: x, broken: {description: down, setup: y}}\n"), "steps[0].probe.broken[0].restore: missing"},
		{"broken without description", probeLab(probeChecks, "    probe: {run: x, broken: {setup: x, restore: y}}\n"), "steps[0].probe.broken[0].description: missing"},
		{"broken with an unknown field", probeLab(probeChecks, "    probe: {run: x, broken: {description: d, setup: x, restore: y, run: z}}\n"), "run"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := strings.Join(problems(t, tt.src), "\n")
			if !strings.Contains(got, tt.want) {
				t.Errorf("problems:\n%s\nwant one containing %q", got, tt.want)
			}
		})
	}
}

// TestProbeNegated: only "! CMD" (bash's negation, a blank after the !) is
// a negated run.
func TestProbeNegated(t *testing.T) {
	for run, want := range map[string]struct {
		cmd     string
		negated bool
	}{
		"! /root/smoke.sh":    {"/root/smoke.sh", true},
		"  !\t/root/smoke.sh": {"/root/smoke.sh", true},
		"/root/smoke.sh":      {"/root/smoke.sh", false},
		"!/root/smoke.sh":     {"!/root/smoke.sh", false},
		"!":                   {"!", false},
	} {
		cmd, negated := (&Probe{Run: run}).Negated()
		if cmd != want.cmd || negated != want.negated {
			t.Errorf("Negated(%q) = %q, %v; want %q, %v", run, cmd, negated, want.cmd, want.negated)
		}
	}
}

// TestMutantAlternativeLoads: an alternative that declares a mutant right
// needs no script.
func TestMutantAlternativeLoads(t *testing.T) {
	l, err := Parse("t.yaml", []byte(probeLab("      - {name: c, file: {path: /root/x}}\n",
		"    alternatives:\n      - {name: fewer, mutant: 'Role ci/r: rules[0].verbs → -get', why: get is not needed}\n")))
	if err != nil {
		t.Fatal(err)
	}
	if a := l.Steps[0].Alternatives[0]; a.Mutant != "Role ci/r: rules[0].verbs → -get" || a.Why != "get is not needed" || a.Script != "" {
		t.Errorf("alternative %+v", a)
	}
}
