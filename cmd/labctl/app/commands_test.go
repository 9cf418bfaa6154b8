package app

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/labctl/labctl/checks"
	"github.com/labctl/labctl/images"
	"github.com/labctl/labctl/internal/msg"
	"github.com/labctl/labctl/internal/preflight"
	"github.com/labctl/labctl/lab"
)

// Each command's exit codes and output on a fake environment: no Docker.

// want is what one labctl run must give: an exit code, and text each
// stream must hold ("" for anything; none for stdout means it must be
// empty).
type want struct {
	code    int
	out     []string
	noOut   bool
	errOut  []string
	noCalls bool // the environment was not touched
}

func (w want) check(t *testing.T, env *fakeEnv, args []string, code int, out, errOut string) {
	t.Helper()
	name := "labctl " + strings.Join(args, " ")
	if code != w.code {
		t.Errorf("%s: exit %d, want %d\nstdout: %s\nstderr: %s", name, code, w.code, out, errOut)
	}
	if w.noOut && out != "" {
		t.Errorf("%s: stdout %q, want nothing", name, out)
	}
	for _, s := range w.out {
		if !strings.Contains(out, s) {
			t.Errorf("%s: stdout lacks %q:\n%s", name, s, out)
		}
	}
	for _, s := range w.errOut {
		if !strings.Contains(errOut, s) {
			t.Errorf("%s: stderr lacks %q:\n%s", name, s, errOut)
		}
	}
	if w.noCalls && env != nil && len(env.calls) > 0 {
		t.Errorf("%s: the environment was touched: %v", name, env.calls)
	}
}

// usage is the answer to a command line mistake.
func usage(msg, cmd string) want {
	return want{code: 2, noOut: true, errOut: []string{msg, "Run `" + cmd + " --help` for usage."}, noCalls: true}
}

func TestUsageErrorsExit2(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want want
	}{
		{[]string{"bogus"}, usage(`unknown command "bogus" for "labctl"`, "labctl")},
		{[]string{"grade", "--bogus"}, usage("unknown flag: --bogus", "labctl grade")},
		{[]string{"check", "a", "b"}, usage("accepts at most 1 arg(s), received 2", "labctl check")},
		{[]string{"up", "extra"}, usage(`unknown command "extra" for "labctl up"`, "labctl up")},
		{[]string{"status", "-o", "yaml"}, usage(`unknown format "yaml": use text or json`, "labctl status")},
		{[]string{"test", "-o", "xml"}, usage(`unknown format "xml": use text, json or junit`, "labctl test")},
		{[]string{"images", "bogus"}, usage(`unknown command "bogus" for "labctl images"`, "labctl images")},
		{[]string{"images", "lst"}, usage("did you mean list?", "labctl images")},
		{[]string{"images", "save"}, usage("accepts 1 arg(s), received 0", "labctl images save")},
		{[]string{"images", "build", "--node", "--sandbox"}, usage("--node and --sandbox exclude each other", "labctl images build")},
		{[]string{"exec"}, usage("requires at least 1 arg(s)", "labctl exec")},
		{[]string{"down", "--no-backup"}, usage("--no-backup goes with --purge", "labctl down")},
		{[]string{"version", "-o", "junit"}, usage(`unknown format "junit": use text or json`, "labctl version")},
		{[]string{"completion", "tcsh"}, usage(`unknown command "tcsh" for "labctl completion"`, "labctl completion")},
	} {
		isolate(t)
		env := &fakeEnv{}
		code, out, errOut := runFake(t, env, tc.args...)
		tc.want.check(t, env, tc.args, code, out, errOut)
	}
}

func TestHelpExitCodes(t *testing.T) {
	isolate(t)
	code, out, _ := runFake(t, &fakeEnv{}, "help", "exit-codes")
	for _, s := range []string{"0    passed", "1    the work fails", "2    could not run: a usage error", "3    status only"} {
		if code != 0 || !strings.Contains(out, s) {
			t.Errorf("help exit-codes: exit %d, stdout lacks %q:\n%s", code, s, out)
		}
	}
	// The root's help points to it.
	if _, out, _ := runFake(t, &fakeEnv{}, "--help"); !strings.Contains(out, "exit-codes") {
		t.Errorf("labctl --help does not list the exit-codes topic:\n%s", out)
	}
}

// Every command a user sees has an example.
func TestEveryCommandHasAnExample(t *testing.T) {
	root, _ := newRoot(Streams{In: strings.NewReader(""), Out: io.Discard, Err: io.Discard}, &fakeEnv{})
	walk(root, func(c *cobra.Command) {
		if c.Hidden || c.Name() == "__complete" || c.Name() == "__completeNoDesc" {
			return
		}
		if strings.TrimSpace(c.Example) == "" {
			t.Errorf("%s has no Example", c.CommandPath())
		}
	})
}

func TestVersion(t *testing.T) {
	isolate(t)
	for _, args := range [][]string{{"version"}, {"--version"}} {
		code, out, errOut := runFake(t, &fakeEnv{}, args...)
		lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
		if code != 0 || errOut != "" || len(lines) != 8 || lines[0] != "labctl "+Version {
			t.Fatalf("labctl %s: exit %d, stderr %q, stdout\n%s", args[0], code, errOut, out)
		}
		for i, s := range []string{"commit:", "go:", "kubernetes:    " + images.KubernetesVersion,
			"helm:          " + images.HelmVersion, "yq:            " + images.YqVersion, "node image:    " + images.NodeRef(), "sandbox image: " + images.SandboxRef()} {
			if !strings.HasPrefix(lines[i+1], s) {
				t.Errorf("labctl %s: line %q, want it to start %q", args[0], lines[i+1], s)
			}
		}
	}
	code, out, _ := runFake(t, &fakeEnv{}, "version", "-o", "json")
	var v versionInfo
	decode(t, out, &v)
	if code != 0 || v.Version != Version || v.Commit == "" || !strings.HasPrefix(v.Go, "go") ||
		v.Kubernetes != images.KubernetesVersion || v.Helm != images.HelmVersion || v.Yq != images.YqVersion || v.NodeImage != images.NodeRef() || v.SandboxImage != images.SandboxRef() {
		t.Errorf("version -o json: exit %d, %+v", code, v)
	}
}

func TestCommitFallsBackToBuildInfo(t *testing.T) {
	info := func(settings ...debug.BuildSetting) func() (*debug.BuildInfo, bool) {
		return func() (*debug.BuildInfo, bool) { return &debug.BuildInfo{Settings: settings}, true }
	}
	for _, tc := range []struct {
		stamped string
		info    func() (*debug.BuildInfo, bool)
		want    string
	}{
		{"abc123", info(debug.BuildSetting{Key: "vcs.revision", Value: "fff"}), "abc123"},
		{"", info(debug.BuildSetting{Key: "vcs.revision", Value: "fff"}), "fff"},
		{"", info(debug.BuildSetting{Key: "vcs.revision", Value: "fff"}, debug.BuildSetting{Key: "vcs.modified", Value: "true"}), "fff-dirty"},
		{"", info(), "unknown"},
		{"", func() (*debug.BuildInfo, bool) { return nil, false }, "unknown"},
	} {
		if got := commit(tc.stamped, tc.info); got != tc.want {
			t.Errorf("commit(%q) = %q, want %q", tc.stamped, got, tc.want)
		}
	}
}

func TestSchemaAndLintExitCodes(t *testing.T) {
	isolate(t)
	env := &fakeEnv{}
	code, out, _ := runFake(t, env, "schema")
	if code != 0 || out != string(lab.Schema()) {
		t.Errorf("schema: exit %d", code)
	}
	for file, code := range map[string]int{twoSteps: 0, testdata + "broken.yaml": 1, "testdata/none.yaml": 2} {
		if got, _, errOut := runFake(t, env, "lint", file); got != code {
			t.Errorf("lint %s: exit %d, want %d (%s)", file, got, code, errOut)
		}
	}
	if len(env.calls) > 0 {
		t.Errorf("schema and lint touched the environment: %v", env.calls)
	}
}

func TestUp(t *testing.T) {
	isolate(t)
	env := &fakeEnv{}
	code, out, errOut := runFake(t, env, "--lab", twoSteps, "up")
	want{code: 0, noOut: true, errOut: []string{"two-steps"}}.check(t, env, nil, code, out, errOut)
	if !slices.Equal(env.calls, []string{"up two-steps"}) || !env.lab.closed {
		t.Errorf("up: calls %v, closed %v", env.calls, env.lab.closed)
	}

	env = &fakeEnv{upErr: errors.New("creating cluster: kind failed")}
	code, out, errOut = runFake(t, env, "--lab", twoSteps, "up")
	want{code: 2, noOut: true, errOut: []string{"labctl: creating cluster: kind failed"}}.check(t, env, nil, code, out, errOut)

	env = &fakeEnv{upErr: context.Canceled}
	code, _, errOut = runFake(t, env, "--lab", twoSteps, "up", "--retain")
	want{code: 130, errOut: []string{"up was interrupted; what it created was kept (--retain)"}}.check(t, env, nil, code, "", errOut)
}

func TestDown(t *testing.T) {
	isolate(t)
	env := &fakeEnv{state: upState()}
	code, out, errOut := runFake(t, env, "--lab", twoSteps, "down")
	want{code: 0, noOut: true}.check(t, env, nil, code, out, errOut)
	if !slices.Equal(env.calls, []string{"down keeping home two-steps"}) {
		t.Errorf("down: calls %v", env.calls)
	}

	env = &fakeEnv{state: upState()}
	code, out, errOut = runFake(t, env, "--lab", twoSteps, "down", "--purge")
	want{code: 0, out: []string{"root-test.tar"}}.check(t, env, nil, code, out, errOut)
	if !slices.Equal(env.calls, []string{"save home two-steps", "down two-steps"}) {
		t.Errorf("down --purge: calls %v", env.calls)
	}

	env = &fakeEnv{state: upState()}
	code, out, errOut = runFake(t, env, "--lab", twoSteps, "down", "--purge", "--no-backup")
	want{code: 0, noOut: true}.check(t, env, nil, code, out, errOut)
	if !slices.Equal(env.calls, []string{"down two-steps"}) {
		t.Errorf("down --purge --no-backup: calls %v", env.calls)
	}
}

func TestStatus(t *testing.T) {
	isolate(t)
	env := &fakeEnv{state: upState()}
	code, out, errOut := runFake(t, env, "--lab", twoSteps, "status")
	want{code: 0, out: []string{"lab:      two-steps\n", "cluster:  labctl-two-steps running\n", "sandbox:  running\n", "grader:   running\n"}}.
		check(t, env, nil, code, out, errOut)

	env = &fakeEnv{}
	code, out, errOut = runFake(t, env, "--lab", twoSteps, "status")
	want{code: 3, out: []string{"cluster:  labctl-two-steps missing\n", "sandbox:  missing\n"}}.check(t, env, nil, code, out, errOut)

	for _, env := range []*fakeEnv{{state: upState()}, {}} {
		code, out, _ := runFake(t, env, "--lab", twoSteps, "status", "-o", "json")
		var s labStatus
		decode(t, out, &s)
		up := env.state.Up()
		if (code == 0) != up || s.Up != up || s.Lab != "two-steps" || s.Cluster.Name != "labctl-two-steps" ||
			s.Sandbox.Name != "labctl-two-steps-sandbox" || s.Grader.Name != "labctl-two-steps-grader" ||
			s.Sandbox.Exists != up || s.Objects == nil {
			t.Errorf("status -o json (up %v): exit %d, %+v", up, code, s)
		}
	}
}

func TestDoctor(t *testing.T) {
	isolate(t)
	finding := func(name string, ok bool, said, fix msg.Text) preflight.Finding {
		f := preflight.Finding{Name: name, OK: ok, Said: said, Message: said.String(), FixSaid: fix}
		if fix.Key != "" {
			f.Fix = fix.String()
		}
		return f
	}
	ok := finding("cgroup", true, msg.T(msg.PreflightCgroup, "v2"), msg.Text{})
	bad := finding("docker", false, msg.T(msg.PreflightDockerDown, msg.Detail("no socket")), msg.T(msg.PreflightDockerFix, "hack/docker-engine.sh"))
	env := &fakeEnv{findings: []preflight.Finding{ok}}
	code, out, errOut := runFake(t, env, "--lab", twoSteps, "doctor")
	want{code: 0, out: []string{"✓ cgroup        " + ok.Message + "\n"}}.check(t, env, nil, code, out, errOut)

	env = &fakeEnv{findings: []preflight.Finding{ok, bad}}
	code, out, errOut = runFake(t, env, "--lab", twoSteps, "doctor")
	want{code: 1, out: []string{"✓ cgroup", "✗ docker        " + bad.Message + "\n", "fix: " + bad.Fix}, errOut: []string{"1"}}.
		check(t, env, nil, code, out, errOut)

	code, out, _ = runFake(t, env, "--lab", twoSteps, "doctor", "-o", "json")
	var rep doctorReport
	decode(t, out, &rep)
	if code != 1 || rep.OK || len(rep.Findings) != 2 || rep.Findings[1] != (doctorFinding{Name: "docker", Message: bad.Message, Fix: bad.Fix}) ||
		rep.Findings[0] != (doctorFinding{Name: "cgroup", OK: true, Message: ok.Message}) {
		t.Errorf("doctor -o json: exit %d, %+v", code, rep)
	}
}

func TestImagesList(t *testing.T) {
	isolate(t)
	env := &fakeEnv{imgs: []images.Image{
		{Ref: images.NodeRef(), ID: "0123456789ab", Size: "1.2GB", Created: "2 days ago", Current: true},
		{Ref: "labctl/node:old", ID: "ba9876543210", Size: "980MB", Created: "3 weeks ago"},
	}}
	code, out, errOut := runFake(t, env, "images", "list")
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if code != 0 || len(lines) < 3 || !strings.HasPrefix(lines[0], "  IMAGE") || !strings.HasPrefix(lines[1], "* "+images.NodeRef()) ||
		!strings.HasPrefix(lines[2], "  labctl/node:old") {
		t.Fatalf("images list: exit %d, stdout\n%s", code, out)
	}
	// The columns line up: ID starts at the same place on every line.
	col := strings.Index(lines[0], "ID")
	for i, id := range []string{"0123456789ab", "ba9876543210"} {
		if l := lines[i+1]; len(l) < col+len(id) || l[col:col+len(id)] != id || l[col-2:col] != "  " {
			t.Errorf("misaligned row %q (ID column at %d)", l, col)
		}
	}
	if !strings.Contains(errOut, "missing: "+images.SandboxRef()) || strings.Contains(errOut, "missing: "+images.NodeRef()) {
		t.Errorf("stderr %q, want the sandbox image alone missing", errOut)
	}

	code, out, _ = runFake(t, env, "images", "list", "-o", "json")
	var l imageList
	decode(t, out, &l)
	if code != 0 || len(l.Images) != 2 || !l.Images[0].Current || l.Images[1].Ref != "labctl/node:old" ||
		!slices.Equal(l.Missing, []string{images.SandboxRef()}) {
		t.Errorf("images list -o json: exit %d, %+v", code, l)
	}
}

func TestExec(t *testing.T) {
	isolate(t)
	env := &fakeEnv{}
	code, out, errOut := runFake(t, env, "--lab", twoSteps, "exec", "true")
	want{code: 2, noOut: true, errOut: []string{"the lab is not up: run `labctl up`"}}.check(t, env, nil, code, out, errOut)

	var ran []string
	env = &fakeEnv{lab: solved(t, twoSteps, "hello")}
	env.lab.exec = func(cmd []string, _ io.Reader, out, _ io.Writer) int {
		ran = cmd
		io.WriteString(out, "pod/web\n")
		return 3
	}
	code, out, errOut = runFake(t, env, "--lab", twoSteps, "exec", "kubectl", "get", "pods", "-A")
	want{code: 3, out: []string{"pod/web\n"}}.check(t, env, nil, code, out, errOut)
	if !slices.Equal(ran[len(ran)-4:], []string{"kubectl", "get", "pods", "-A"}) || ran[0] != "bash" {
		t.Errorf("exec ran %q", ran)
	}
}

func TestShellNeedsATerminalBeforeTouchingAnything(t *testing.T) {
	isolate(t)
	env := &fakeEnv{}
	code, out, errOut := runFake(t, env, "--lab", twoSteps, "shell")
	want{code: 2, noOut: true, errOut: []string{"labctl shell needs a terminal; use labctl exec for scripts"}, noCalls: true}.
		check(t, env, nil, code, out, errOut)
}

func TestCheck(t *testing.T) {
	isolate(t)
	code, out, errOut := runFake(t, &fakeEnv{}, "--lab", twoSteps, "check")
	want{code: 2, errOut: []string{"run `labctl up`"}}.check(t, nil, nil, code, out, errOut)

	env := &fakeEnv{lab: solved(t, twoSteps, "hello")}
	code, out, errOut = runFake(t, env, "--lab", twoSteps, "check")
	want{code: 1, out: []string{"hello-file"}}.check(t, env, nil, code, out, errOut)

	env.lab.ran["echo hello > /root/hello.txt"] = true
	code, out, errOut = runFake(t, env, "--lab", twoSteps, "check")
	want{code: 0, out: []string{"hello-file"}}.check(t, env, nil, code, out, errOut)
	// The learner moved on: the current step is now the second.
	code, out, errOut = runFake(t, env, "--lab", twoSteps, "check")
	want{code: 1, out: []string{"bye-file"}}.check(t, env, nil, code, out, errOut)

	env.lab.checks = func([]lab.Check) ([]checks.Result, error) { return nil, errors.New("the checker exited with status 2") }
	code, _, errOut = runFake(t, env, "--lab", twoSteps, "check", "hello")
	want{code: 2, errOut: []string{"the checker exited with status 2"}}.check(t, env, nil, code, "", errOut)
}

func TestGrade(t *testing.T) {
	isolate(t)
	env := &fakeEnv{lab: solved(t, twoSteps, "goodbye")}
	code, out, errOut := runFake(t, env, "--lab", twoSteps, "grade")
	want{code: 1, out: []string{"hello-file", "bye-file"}}.check(t, env, nil, code, out, errOut)

	env.lab.ran["echo bye > /root/bye.txt"] = true
	code, out, errOut = runFake(t, env, "--lab", twoSteps, "grade", "-o", "json")
	var rep struct {
		Score, MaxScore int
	}
	if err := jsonUnmarshal(out, &rep); err != nil || code != 0 || rep.Score != 2 || rep.MaxScore != 2 {
		t.Errorf("grade -o json: exit %d (%v), stdout %s, stderr %s", code, err, out, errOut)
	}

	file := filepath.Join(t.TempDir(), "report.xml")
	code, out, errOut = runFake(t, env, "--lab", twoSteps, "grade", "-o", "junit", "--output-file", file)
	want{code: 0, noOut: true, errOut: []string{file}}.check(t, env, nil, code, out, errOut)
	if b, err := os.ReadFile(file); err != nil || !strings.Contains(string(b), "<testsuites") {
		t.Errorf("--output-file wrote %q (%v)", b, err)
	}

	// The old spelling still works, with a notice on stderr only.
	code, out, errOut = runFake(t, env, "--lab", twoSteps, "grade", "--format", "json")
	if err := jsonUnmarshal(out, &rep); err != nil || code != 0 || !strings.Contains(errOut, "--format is deprecated: use -o, --output FORMAT") {
		t.Errorf("grade --format json: exit %d (%v), stderr %q", code, err, errOut)
	}
}

func TestReset(t *testing.T) {
	isolate(t)
	env := &fakeEnv{lab: solved(t, twoSteps, "goodbye")}
	code, out, errOut := runFake(t, env, "--lab", twoSteps, "reset", "--to", "goodbye")
	want{code: 0, out: []string{"root-", ".tar", "2/2"}}.check(t, env, nil, code, out, errOut)
	if !env.lab.ran["echo hello > /root/hello.txt"] || env.lab.ran["echo bye > /root/bye.txt"] {
		t.Errorf("reset --to goodbye did not replay exactly the first step's solve: %v", env.lab.ran)
	}
	code, out, errOut = runFake(t, env, "--lab", twoSteps, "reset", "--no-backup")
	want{code: 0, out: []string{"1/2"}}.check(t, env, nil, code, out, errOut)
	if strings.Contains(out, ".tar") || len(env.lab.ran) != 0 {
		t.Errorf("reset --no-backup: stdout %q, scripts kept %v", out, env.lab.ran)
	}

	code, _, errOut = runFake(t, &fakeEnv{}, "--lab", twoSteps, "reset")
	want{code: 2, errOut: []string{"run `labctl up`"}}.check(t, nil, nil, code, "", errOut)
}

func TestTestCommand(t *testing.T) {
	isolate(t)
	env := &fakeEnv{}
	code, out, errOut := runFake(t, env, "--lab", twoSteps, "test", "-o", "json")
	var rep struct{ Passed bool }
	if err := jsonUnmarshal(out, &rep); err != nil || code != 0 || !rep.Passed {
		t.Fatalf("test: exit %d (%v), stdout %s\nstderr %s", code, err, out, errOut)
	}
	if env.calls[0] != "inspect two-steps-test" || env.calls[1] != "up two-steps-test" || env.calls[len(env.calls)-1] != "down two-steps-test" {
		t.Errorf("test: calls %v", env.calls)
	}

	// A lab whose checks pass before the learner did anything does not
	// prove itself.
	env = &fakeEnv{lab: solved(t, twoSteps, "")}
	env.lab.checks = func(cs []lab.Check) ([]checks.Result, error) {
		var rs []checks.Result
		for _, c := range cs {
			rs = append(rs, checks.Result{Name: c.Name, Status: checks.Pass, Points: 1})
		}
		return rs, nil
	}
	code, out, errOut = runFake(t, env, "--lab", twoSteps, "test")
	want{code: 1, out: []string{"every check passes before the solve"}, errOut: []string{"lab two-steps does not prove itself"}}.
		check(t, env, nil, code, out, errOut)

	for _, args := range [][]string{{"--step", "hello", "--only", "nope"}, {"--only", "nope"}, {"--mistakes"}} {
		env = &fakeEnv{}
		code, out, errOut = runFake(t, env, append([]string{"--lab", twoSteps, "test"}, args...)...)
		if code != 2 || !strings.Contains(errOut, "step") || len(env.calls) != 0 {
			t.Errorf("test %q: exit %d, calls %q, stderr %q; want 2, nothing asked of the environment, and a word on the step", args, code, env.calls, errOut)
		}
	}

	env = &fakeEnv{upErr: errors.New("no Docker")}
	code, out, errOut = runFake(t, env, "--lab", twoSteps, "test", "--step", "goodbye")
	want{code: 2, noOut: true, errOut: []string{"bringing up the test environment: no Docker"}}.check(t, env, nil, code, out, errOut)
}

func TestCompletion(t *testing.T) {
	isolate(t)
	answers := filepath.Join(t.TempDir(), "lab.yaml")
	if err := os.WriteFile(answers, []byte(`apiVersion: labctl.dev/v1alpha1
kind: Lab
metadata: {name: answers, language: en}
steps:
  - id: hello
    title: Say hello
    instructions: Write "hello" to /root/hello.txt.
    checks:
      - {name: hello-file, file: {path: /root/hello.txt, equals: hello}}
    solve: echo hello > /root/hello.txt
    mistakes:
      - {name: hello-upper, description: wrote Hello, script: echo Hello > /root/hello.txt, fails: [hello-file]}
    alternatives:
      - {name: hello-printf, description: printf instead of echo, script: printf 'hello\\n' > /root/hello.txt}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, sh := range []string{"bash", "zsh", "fish"} {
		code, out, _ := runFake(t, &fakeEnv{}, "completion", sh)
		if code != 0 || !strings.Contains(out, "labctl") {
			t.Errorf("completion %s: exit %d, %d bytes", sh, code, len(out))
		}
	}
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"--lab", twoSteps, "reset", "--to", ""}, []string{"hello\tSay hello", "goodbye\tSay goodbye"}},
		{[]string{"--lab", twoSteps, "test", "--step", "go"}, []string{"goodbye\tSay goodbye"}},
		{[]string{"--lab", twoSteps, "check", ""}, []string{"hello\tSay hello", "goodbye\tSay goodbye"}},
		{[]string{"grade", "-o", ""}, []string{"text", "json", "junit"}},
		{[]string{"--lab", answers, "test", "--step", "hello", "--only", ""}, []string{"hello-upper\tmistake: wrote Hello", "hello-printf\talternative: printf instead of echo"}},
		{[]string{"--lab", answers, "test", "--step", "hello", "--only", "hello-p"}, []string{"hello-printf\talternative: printf instead of echo"}},
		{[]string{"--lab", answers, "test", "--only", ""}, nil},
		{[]string{"status", "--output", ""}, []string{"text", "json"}},
	} {
		code, out, errOut := runFake(t, &fakeEnv{}, append([]string{"__complete"}, tc.args...)...)
		got := strings.Split(strings.TrimSpace(out), "\n")
		got = got[:len(got)-1] // the directive
		if code != 0 || !slices.Equal(got, tc.want) {
			t.Errorf("completing %q: exit %d, got %q, want %q (stderr %q)", tc.args, code, got, tc.want, errOut)
		}
	}
}

func jsonUnmarshal(s string, v any) error { return json.Unmarshal([]byte(s), v) }
