package app

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// strangerLab writes the two-step lab with extra lab.yaml text (cluster:
// and metadata: fields) into a directory of its own and returns the
// directory.
func strangerLab(t *testing.T, cluster, title string) string {
	t.Helper()
	data, err := os.ReadFile(twoSteps)
	if err != nil {
		t.Fatal(err)
	}
	s := strings.Replace(string(data), "steps:\n", cluster+"steps:\n", 1)
	if title != "" {
		s = strings.Replace(s, "  language: en\n", "  language: en\n  title: "+title+"\n", 1)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "lab.yaml"), []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

const privilegedCluster = "cluster:\n  namespaces: [work]\n  podSecurity: privileged\n"

// A lab asking for privileged Pod Security is refused by install unless
// --allow-host-access, and nothing lands; with it, it lands and records the
// consent, so that `up --lab NAME` brings it up without the flag.
func TestInstallRefusesPrivilegeWithoutConsent(t *testing.T) {
	isolate(t)
	src := strangerLab(t, privilegedCluster, "")
	env := &fakeEnv{}
	code, out, errOut := runFake(t, env, "install", src)
	if code != 2 || out != "" || !strings.Contains(errOut, "lab two-steps asks for what reaches beyond its own cluster, to this machine, so it was not installed:\n"+
		"  cluster.podSecurity: privileged (") || !strings.Contains(errOut, "run the command again with --allow-host-access") {
		t.Errorf("install: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(os.Getenv("LABCTL_LABS_DIR"), "two-steps")); err == nil {
		t.Error("a refused lab was installed")
	}

	code, out, errOut = runFake(t, env, "install", "--allow-host-access", src)
	if code != 0 || !strings.Contains(out, "\n  Pod Security in its namespaces: privileged\n") ||
		!strings.Contains(out, "It reaches this machine (--allow-host-access):\n  cluster.podSecurity: privileged (") {
		t.Fatalf("install --allow-host-access: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	code, _, errOut = runFake(t, env, "--lab", "two-steps", "up")
	if code != 0 || !slices.Contains(env.calls, "up two-steps") {
		t.Errorf("up of the lab installed with consent: exit %d, stderr %q, calls %q", code, errOut, env.calls)
	}
}

// `up --lab DIR` of a directory that is not installed is the same
// stranger's code: refused without --allow-host-access, before anything
// is created; the built-in labs need no flag.
func TestUpRefusesPrivilegeWithoutConsent(t *testing.T) {
	isolate(t)
	for _, cluster := range []string{
		privilegedCluster,
		"cluster:\n  nodeImage: evil/node:1\n",
		"cluster:\n  nodeAccess: true\n",
		"sandbox:\n  image: evil/sandbox:1\n",
		"access:\n  clusterRules:\n    - {apiGroups: [\"\"], resources: [pods], verbs: [create]}\n",
		"access:\n  clusterRules:\n    - {apiGroups: [\"*\"], resources: [\"*\"], verbs: [get]}\n",
	} {
		src := strangerLab(t, cluster, "")
		env := &fakeEnv{}
		code, _, errOut := runFake(t, env, "--lab", src, "up")
		if code != 2 || !strings.Contains(errOut, "so it was not brought up") || len(env.calls) != 0 {
			t.Errorf("up of %q: exit %d, stderr %q, calls %q", cluster, code, errOut, env.calls)
		}
		env = &fakeEnv{}
		if code, _, errOut = runFake(t, env, "--lab", src, "up", "--allow-host-access"); code != 0 || !slices.Contains(env.calls, "up two-steps") {
			t.Errorf("up --allow-host-access of %q: exit %d, stderr %q", cluster, code, errOut)
		}
		env = &fakeEnv{}
		if code, _, errOut = runFake(t, env, "--lab", src, "test"); code != 2 || !strings.Contains(errOut, "so it was not tested") || len(env.calls) != 0 {
			t.Errorf("test of %q: exit %d, stderr %q, calls %q", cluster, code, errOut, env.calls)
		}
	}
	// Reading cluster-wide needs no consent.
	src := strangerLab(t, "access:\n  clusterRules:\n    - {apiGroups: [\"\"], resources: [nodes], verbs: [get, list]}\n", "")
	env := &fakeEnv{}
	if code, _, errOut := runFake(t, env, "--lab", src, "up"); code != 0 {
		t.Errorf("up of a lab reading nodes: exit %d, stderr %q", code, errOut)
	}
	for _, l := range []string{"gitops-drift", "../../../labs/debug-rollout"} {
		env := &fakeEnv{}
		if code, _, errOut := runFake(t, env, "--lab", l, "up"); code != 0 {
			t.Errorf("up of built-in lab %s: exit %d, stderr %q", l, code, errOut)
		}
	}
}

// osc52 writes "pwned" to the terminal's clipboard, ended by BEL.
const osc52 = "\x1b]52;c;cHduZWQ=\x07"

// An OSC 52 sequence in a lab's title reaches no terminal raw: install,
// labs and lint show it escaped.
func TestAuthorTextIsEscaped(t *testing.T) {
	isolate(t)
	src := strangerLab(t, "", `"Lab `+strings.ReplaceAll(osc52, "\x1b", `\e`)+`"`)
	// YAML's double-quoted \e is ESC and \a is BEL; write the BEL too.
	data, _ := os.ReadFile(filepath.Join(src, "lab.yaml"))
	data = []byte(strings.Replace(string(data), "\x07", `\a`, 1))
	if err := os.WriteFile(filepath.Join(src, "lab.yaml"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	shown := `Lab \x1b]52;c;cHduZWQ=\x07`
	env := &fakeEnv{}
	code, out, errOut := runFake(t, env, "install", src)
	if code != 0 || !strings.HasPrefix(out, "installed two-steps ("+shown+") from "+src+"\n") {
		t.Errorf("install: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	code, out, _ = runFake(t, env, "labs")
	if code != 0 || !strings.Contains(out, "  "+shown+"\n") {
		t.Errorf("labs: exit %d, stdout %q", code, out)
	}
	// lint: a title in a problem's message, and the lab's own values.
	bad := strangerLab(t, "cluster:\n  namespaces: [\"a\\e]52;c;cHduZWQ=\\a\"]\n", "")
	code, out, errOut = runFake(t, env, "lint", filepath.Join(bad, "lab.yaml"))
	if code != 1 || !strings.Contains(errOut, `"a\x1b]52;c;cHduZWQ=\a" is not a DNS label`) {
		t.Errorf("lint: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	for _, s := range []string{out, errOut} {
		if strings.ContainsAny(s, "\x1b\x07") {
			t.Errorf("raw control characters reached the terminal: %q", s)
		}
	}
	// A verb of a cluster-wide rule, which lint -v and up's refusal quote.
	img := strangerLab(t, "access:\n  clusterRules:\n    - {apiGroups: [\"\"], resources: [pods], verbs: [\"create\\e]52;c;cHduZWQ=\\a\"]}\n", "")
	code, out, errOut = runFake(t, env, "lint", "-v", filepath.Join(img, "lab.yaml"))
	if code != 0 || !strings.Contains(out, "  cluster-wide rules for the learner: create"+shown[4:]+" pods (core) (beyond reading)\n") ||
		strings.ContainsAny(out+errOut, "\x1b\x07") {
		t.Errorf("lint -v: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	code, out, errOut = runFake(t, env, "--lab", img, "up")
	if code != 2 || !strings.Contains(errOut, "  access.clusterRules[0]: create"+shown[4:]+" pods (core) (") || strings.ContainsAny(out+errOut, "\x1b\x07") {
		t.Errorf("up: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

// allViews is the learner's default reading of the cluster, as lint -v
// shows it.
const allViews = "nodes; persistentvolumes; storageclasses; csidrivers; csinodes; ingressclasses; gatewayclasses; customresourcedefinitions; runtimeclasses; priorityclasses; nodemetrics"

// lint -v and install print what each built-in lab may do.
func TestPowersOfBuiltInLabs(t *testing.T) {
	isolate(t)
	for _, tt := range []struct{ lab, want string }{{"../../../lab.yaml", "What the lab may do:\n" +
		"  Pod Security in its namespaces: baseline\n" +
		"  namespaces: gitops-lab (the learner is admin there)\n" +
		"  cluster-wide rules for the learner: none\n" +
		"  cluster-wide reading for the learner (nothing that holds a secret): " + allViews + "\n" +
		"  probe scripts in a container of the sandbox image, admin of the lab's namespaces, nothing cluster-wide: step sync-script: probe setup, probe restore\n" +
		"  setup scripts as root in the sandbox: none\n" +
		"  command checks in the grader (programs of the sandbox image, as a user of their own, that read every file of the learner's home, run what the learner wrote when they run it, and reach the cluster's network): none\n" +
		"  workload images built from the lab's directory: none\n" +
		"  workload images taken from this machine's Docker engine: nginx:1.27 (optional)\n" +
		"  node image: labctl's; sandbox image: labctl's\n",
	}, {"../../../labs/debug-rollout/lab.yaml", "What the lab may do:\n" +
		"  Pod Security in its namespaces: restricted\n" +
		"  namespaces: rollout (the learner is admin there)\n" +
		"  cluster-wide rules for the learner: none\n" +
		"  cluster-wide reading for the learner (nothing that holds a secret): " + allViews + "\n" +
		"  probe scripts in a container of the sandbox image, admin of the lab's namespaces, nothing cluster-wide: step smoke: probe setup, probe worlds' setup and restore; step smoke-catches: probe setup, probe restore, probe worlds' setup and restore\n" +
		"  setup scripts as root in the sandbox: step crash-loop; step readiness; step service\n" +
		"  command checks in the grader (programs of the sandbox image, as a user of their own, that read every file of the learner's home, run what the learner wrote when they run it, and reach the cluster's network): none\n" +
		"  workload images built from the lab's directory: labctl.local/rollout-web:1 from images/web\n" +
		"  workload images taken from this machine's Docker engine: none\n" +
		"  node image: labctl's; sandbox image: labctl's\n",
	}} {
		code, out, errOut := runFake(t, &fakeEnv{}, "lint", "-v", tt.lab)
		if code != 0 || !strings.HasSuffix(out, tt.want) {
			t.Errorf("lint -v %s: exit %d, stdout %q, stderr %q, want it to end with %q", tt.lab, code, out, errOut, tt.want)
		}
	}
	code, out, errOut := runFake(t, &fakeEnv{}, "install", "../../../labs/debug-rollout")
	if code != 0 || !strings.Contains(out, "\n  Pod Security in its namespaces: restricted\n") || strings.Contains(out, "reaches this machine") {
		t.Errorf("install debug-rollout: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}
