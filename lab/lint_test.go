package lab

import (
	"slices"
	"strings"
	"testing"
)

// lintLab is a lab file with one placeholder, %s, for the second step's
// instructions.
const lintLab = `apiVersion: labctl.dev/v1alpha1
kind: Lab
metadata:
  name: lint
  goal: Keep everything in /srv/goal.
steps:
  - id: first
    title: First
    instructions: Make a repository at /root/repo and commit README.md.
    checks:
      - name: repo
        git: {repo: /root/repo}
    solve: git init /root/repo
    mistakes:
      - name: none
        script: "true"
        fails: [repo]
        recover: git init /root/repo
  - id: second
    title: Second
    instructions: %s
    checks:
      - name: manifest
        file: {path: /root/repo/apps/web/deployment.yaml, notInside: /srv/goal}
      - name: app
        kube: {apiVersion: apps/v1, kind: Deployment, namespace: team-a, name: web}
    solve: "true"
    mistakes:
      - name: none
        script: "true"
        fails: [manifest]
        recover: "true"
`

func lint(t *testing.T, instructions string) []Warning {
	t.Helper()
	return lintSource(t, strings.Replace(lintLab, "%s", instructions, 1))
}

// lintSource parses a lab file and returns its warnings.
func lintSource(t *testing.T, src string) []Warning {
	t.Helper()
	l, err := Parse("lab.yaml", []byte(src))
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	return l.Lint()
}

// warnedPaths returns the fields the warnings name, and reports each
// warning that does not say what is.
func warnedPaths(t *testing.T, ws []Warning, what string, is func(Warning) bool) []string {
	t.Helper()
	var paths []string
	for _, w := range ws {
		paths = append(paths, w.Path)
		if !is(w) {
			t.Errorf("warning %v, want one about %s", w, what)
		}
	}
	return paths
}

func TestLintMentions(t *testing.T) {
	for _, tc := range []struct {
		name         string
		instructions string
		want         []string // fields warned about
	}{
		{"everything named whole", "Write /root/repo/apps/web/deployment.yaml; Deployment web in namespace team-a.", nil},
		{"parent directory then the rest", "Copy deployment.yaml into `/root/repo/apps/web/`, apply Deployment `web` to `team-a`.", nil},
		{"repository then a relative path", "Add apps/web/deployment.yaml to the repository; Deployment web, namespace team-a.", nil},
		{"nothing named", "Deploy it.", []string{"steps[1].checks[0].file.path", "steps[1].checks[1].kube.namespace", "steps[1].checks[1].kube.name"}},
		{"a longer word is not the name", "Write /root/repo/apps/site/deployment.yaml.bak; Deployment webapp in team-ab.",
			[]string{"steps[1].checks[0].file.path", "steps[1].checks[1].kube.namespace", "steps[1].checks[1].kube.name"}},
		{"a sentence's full stop ends the name", "Deployment web in team-a. Write /root/repo/apps/web/deployment.yaml.", nil},
		{"only a later step may not count", "Deployment web in team-a; a file under /root/other.", []string{"steps[1].checks[0].file.path"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, w := range lint(t, tc.instructions) {
				got = append(got, w.Path)
			}
			if strings.Join(got, " ") != strings.Join(tc.want, " ") {
				t.Errorf("warnings at %q, want %q", got, tc.want)
			}
		})
	}
}

func TestLintPositionAndFormat(t *testing.T) {
	ws := lint(t, "Deploy it.")
	if len(ws) == 0 {
		t.Fatal("no warnings")
	}
	w := ws[0]
	if w.File != "lab.yaml" || w.Line != 24 || w.Column != 22 {
		t.Errorf("warning at %s:%d:%d, want lab.yaml:24:22", w.File, w.Line, w.Column)
	}
	want := `lab.yaml:24:22: warning: steps[1].checks[0].file.path: check "manifest" reads path /root/repo/apps/web/deployment.yaml, which neither`
	if !strings.HasPrefix(w.String(), want) {
		t.Errorf("String() = %q, want it to start %q", w.String(), want)
	}
	if s := (Warning{Msg: "m"}).String(); s != "warning: m" {
		t.Errorf("a warning without position reads %q", s)
	}
}

func TestLintStepWithoutMistakes(t *testing.T) {
	src := strings.Replace(lintLab, "%s", "Write /root/repo/apps/web/deployment.yaml; Deployment web, team-a.", 1)
	src = src[:strings.LastIndex(src, "    mistakes:")]
	l, err := Parse("lab.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	ws := l.Lint()
	if len(ws) != 1 || ws[0].Path != "steps[1].id" || !strings.Contains(ws[0].Msg, `step "second" has no mistakes`) {
		t.Errorf("warnings %v, want one about step second's mistakes", ws)
	}
}

// A mistake needs a way back: a recover script, or an explain that sends
// the learner to a reset of its step (another step's reset is not it).
func TestLintMistakeWithoutAWayBack(t *testing.T) {
	base := strings.Replace(lintLab, "%s", "Write /root/repo/apps/web/deployment.yaml; Deployment web, team-a.", 1)
	for _, tc := range []struct {
		name, mistake string
		warned        bool
	}{
		{"recover", "        recover: \"true\"\n", false},
		{"neither", "", true},
		{"a reset of its step", "        explain: The record stays; run labctl reset --to second, then do it again.\n", false},
		{"a reset of another step", "        explain: Run labctl reset --to first.\n", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := strings.Replace(base, "        fails: [manifest]\n        recover: \"true\"\n", "        fails: [manifest]\n"+tc.mistake, 1)
			got := warnedPaths(t, lintSource(t, src), "mistake none's way back", func(w Warning) bool {
				return strings.Contains(w.Msg, `mistake "none" has no way back`) && strings.Contains(w.Msg, "labctl reset --to second")
			})
			if warned := slices.Equal(got, []string{"steps[1].mistakes[0].name"}); warned != tc.warned || (!tc.warned && len(got) > 0) {
				t.Errorf("warnings at %v, want a warning: %v", got, tc.warned)
			}
		})
	}
}

// Two mistakes that fail the same checks, neither with evidence: the
// learner who makes either is told both, and lint says so for each.
func TestLintMistakesThatLookAlike(t *testing.T) {
	src := strings.Replace(lintLab, "%s", "Write /root/repo/apps/web/deployment.yaml; Deployment web, team-a.", 1)
	src += `      - name: other
        script: "false"
        fails: [manifest]
        recover: "true"
      - name: told-by-evidence
        script: "false"
        fails: [manifest]
        recover: "true"
        evidence:
          - name: e
            file: {path: /root/repo/apps/web/deployment.yaml, exists: false}
`
	got := warnedPaths(t, lintSource(t, src), "mistakes that look alike", func(w Warning) bool {
		return strings.Contains(w.Msg, "fail the same checks")
	})
	if want := []string{"steps[1].mistakes[0].fails", "steps[1].mistakes[1].fails"}; !slices.Equal(got, want) {
		t.Errorf("warnings at %v, want %v (the mistake with evidence is told apart)", got, want)
	}
}

func TestShippedLabLintsClean(t *testing.T) {
	l, err := Load("../lab.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range l.Lint() {
		t.Errorf("%s", w)
	}
}

func BenchmarkLintShippedLab(b *testing.B) {
	l, err := Load("../lab.yaml")
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if ws := l.Lint(); len(ws) != 0 {
			b.Fatal(ws)
		}
	}
}
