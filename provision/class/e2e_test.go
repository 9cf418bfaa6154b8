//go:build e2e

package class

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/labctl/labctl/checks"
	"github.com/labctl/labctl/cmd/labctl/e2etest"
	"github.com/labctl/labctl/grading"
	"github.com/labctl/labctl/grading/progress"
	"github.com/labctl/labctl/internal/msg"
	"github.com/labctl/labctl/internal/podexec"
	"github.com/labctl/labctl/lab"
	"github.com/labctl/labctl/provision"
)

// classLab is the repository's lab, as a class runs it.
func classLab(t testing.TB) (*lab.Lab, string) {
	t.Helper()
	root := e2etest.Root(t)
	l, err := lab.Load(filepath.Join(root, "lab.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return l, filepath.Join(root, "fixtures")
}

// openClass opens a class of the repository's lab on h.
func openClass(t testing.TB, h *classHost, prefix string) *Class {
	t.Helper()
	l, fixtures := classLab(t)
	cfg := h.config(prefix)
	cfg.Lab, cfg.Fixtures = l, os.DirFS(fixtures)
	cfg.CheckerBinary = os.Getenv("LABCTL_TEST_CHECKER") // a static labctl, else built here
	if cfg.CheckerBinary == "" {
		cfg.CheckerBinary = e2etest.BuildLabctl(t)
	}
	c, err := Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// upAll brings the learners up at once.
func upAll(t testing.TB, c *Class, learners []string) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make([]error, len(learners))
	for i, name := range learners {
		wg.Go(func() { errs[i] = c.Up(context.Background(), name) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("up %s: %v", learners[i], err)
		}
	}
}

// solveAll walks a learner through every step: the solve, then the step's
// checks recorded as `labctl check` records them (which runs the next
// step's setup), and returns the grade's results.
func solveAll(ctx context.Context, e *provision.Live) ([]checks.Result, error) {
	dir, err := StateDir(e.Lab.Metadata.Name, learnerOf(e))
	if err != nil {
		return nil, err
	}
	var log bytes.Buffer
	g := &grading.Grader{Lab: e.Lab, Store: progress.NewStore(dir), Checker: e, Scripts: e, Catalog: msg.New(msg.English), Out: &log, Err: &log}
	// The first round begins the first step, as the learner's first
	// command in their shell does: it records where the step's
	// repositories were, which a check of the commits since then needs.
	if _, err := g.Check(ctx, ""); err != nil {
		return nil, fmt.Errorf("%s: the first round: %v:\n%s", learnerOf(e), err, log.String())
	}
	for i := range e.Lab.Steps {
		s := &e.Lab.Steps[i]
		var out bytes.Buffer
		code, err := e.RunScript(ctx, s.Solve, &out, &out)
		if err != nil || code != 0 {
			return nil, fmt.Errorf("%s: solve of %s: exit %d, %v: %s", learnerOf(e), s.ID, code, err, out.String())
		}
		v, err := g.Check(ctx, "")
		if err != nil || v != grading.Passed {
			return nil, fmt.Errorf("%s: check after the solve of %s: %v, %v:\n%s", learnerOf(e), s.ID, v, err, log.String())
		}
	}
	return gradeAll(ctx, e)
}

// solveAllAtOnce runs solveAll for every learner at once; each must pass
// every check.
func solveAllAtOnce(t *testing.T, ls []*provision.Live, names []string) {
	t.Helper()
	var wg sync.WaitGroup
	res := make([][]checks.Result, len(ls))
	errs := make([]error, len(ls))
	for i := range ls {
		wg.Go(func() { res[i], errs[i] = solveAll(context.Background(), ls[i]) })
	}
	wg.Wait()
	for i := range ls {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		if f := failed(res[i]); len(f) > 0 || len(res[i]) == 0 {
			t.Fatalf("%s after every solve:\n%s", names[i], strings.Join(f, "\n"))
		}
	}
}

// gradeAll grades every step as `labctl grade` does, probes included.
func gradeAll(ctx context.Context, e *provision.Live) ([]checks.Result, error) {
	// The audit windows come from the learner's progress, as the
	// instructor's grade reads it.
	var p *progress.Progress
	if dir, err := e.Runtime().StateDir(); err == nil {
		p, _ = progress.NewStore(dir).Load(e.Lab.Metadata.Name)
	}
	per, err := grading.RunAll(ctx, e, e, e.Lab, p, msg.New(msg.English))
	if err != nil {
		return nil, err
	}
	var all []checks.Result
	for _, s := range e.Lab.Steps {
		all = append(all, per[s.ID]...)
	}
	return all, nil
}

func failed(rs []checks.Result) []string {
	var out []string
	for _, r := range rs {
		if r.Status != checks.Pass && !r.Optional {
			out = append(out, r.Name+": "+string(r.Status)+": "+r.Message)
		}
	}
	return out
}

// TestE2EClass: three learners of the repository's lab on one kind
// cluster, each with a virtual control plane and a sandbox Pod. Every
// solve passes in all three at once; a mistake in learner 2 fails only
// learner 2; the shell over the exec API carries resizes, OSC 133 marks and
// the exit code; the learner cannot reach the checker or the cluster
// that hosts the class; one learner's token is refused by another's API
// server; an invite may exec into its own sandbox and nothing else, expires
// and can be revoked; each namespace is walled off (attacks); a soft reset
// empties /root and the lab's namespaces; 3 GiB in learner 3's sandbox
// evicts that sandbox only; a hard reset of learner 3 leaves 1 and 2
// untouched.
//
//	flock /tmp/labctl-e2e.lock go test -tags e2e -count=1 -run TestE2EClass ./provision/class/ -timeout 30m -v
func TestE2EClass(t *testing.T) {
	t.Setenv("LABCTL_STATE_DIR", t.TempDir())
	ctx := context.Background()
	h := newClassHost(t)
	c := openClass(t, h, "e2e-")
	names := []string{"learner-1", "learner-2", "learner-3"}
	start := time.Now()
	upAll(t, c, names)
	t.Logf("3 learners up in %s", time.Since(start).Round(time.Millisecond))
	t.Cleanup(func() {
		for _, n := range names {
			if err := c.Down(context.Background(), n); err != nil {
				t.Error(err)
			}
		}
	})

	uids := podUIDs(t, h, c, names)
	upAll(t, c, names) // idempotent: nothing is made again
	if again := podUIDs(t, h, c, names); !maps.Equal(uids, again) {
		t.Fatalf("a second up replaced pods: %v, then %v", uids, again)
	}
	list, err := c.Learners(ctx)
	if err != nil || len(list) != 3 || !list[0].Ready || !list[2].Ready || list[1].Name != "learner-2" {
		t.Fatalf("Learners: %+v, %v", list, err)
	}
	// The class cluster bounds Pods' processes; its local-path storage
	// does not bound a claim's size, and class up would say so.
	if cv := strings.Join(c.Caveats(ctx), "\n"); !strings.Contains(cv, "(rancher.io/local-path) does not enforce a claim's size") ||
		strings.Contains(cv, "podPidsLimit") || strings.Contains(cv, "could not read") {
		t.Errorf("caveats of the class cluster:\n%s", cv)
	}

	// The Pods go to nodes of the checker's architecture; a checker of
	// another leaves no node to count.
	if c.arch != runtime.GOARCH {
		t.Errorf("the class's checker architecture is %q, want %s", c.arch, runtime.GOARCH)
	}
	if cap, err := c.Capacity(ctx); err != nil || cap.Nodes != 1 || len(cap.OtherArch) != 0 {
		t.Errorf("capacity: %+v, %v, want the one node", cap, err)
	}
	other := *c
	other.arch = "s390x"
	if cap, err := other.Capacity(ctx); err != nil || cap.Nodes != 0 || cap.OtherArch[runtime.GOARCH] != 1 {
		t.Errorf("capacity for an s390x checker: %+v, %v, want no node and one of %s left out", cap, err, runtime.GOARCH)
	}

	t.Run("class cluster create again reuses the cluster, and leaves a kind cluster of its own alone", func(t *testing.T) {
		testClassClusterAgain(t, h)
	})

	ls := make([]*provision.Live, len(names))
	for i, n := range names {
		if ls[i], err = c.Connect(ctx, n); err != nil {
			t.Fatal(err)
		}
		defer func() { ls[i].Close() }()
	}

	t.Run("every solve passes in all three at once", func(t *testing.T) { solveAllAtOnce(t, ls, names) })
	if t.Failed() {
		return
	}

	t.Run("a mistake in learner 2 fails only learner 2", func(t *testing.T) {
		mustRun(t, ls[1], "rm -rf /root/gitops/out") // the drift step's evidence
		for i, e := range ls {
			rs, err := gradeAll(ctx, e)
			if err != nil {
				t.Fatal(err)
			}
			f := failed(rs)
			if i == 1 && !slices.ContainsFunc(f, func(s string) bool { return strings.HasPrefix(s, "drift-diff:") }) {
				t.Errorf("learner 2's grade misses the removed drift evidence: %v", f)
			}
			if i != 1 && len(f) > 0 {
				t.Errorf("%s fails for learner 2's mistake: %v", names[i], f)
			}
		}
	})

	t.Run("the class commands", func(t *testing.T) {
		var stderr bytes.Buffer // the last command's
		labctl := func(want int, args ...string) string {
			t.Helper()
			root := e2etest.Root(t)
			full := append([]string{"--lab", filepath.Join(root, "lab.yaml"), "class"}, args...)
			full = append(full, "--kubeconfig", h.kubeconfig, "--prefix", "e2e-", "--sandbox-image", c.cfg.SandboxImage)
			cmd := exec.Command(c.cfg.CheckerBinary, full...)
			cmd.Env = append(os.Environ(), "NO_COLOR=1", "LANG=en_US.UTF-8", "LC_ALL=", "LC_MESSAGES=")
			stderr.Reset()
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			code := 0
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
				err = nil
			}
			if err != nil || code != want {
				t.Fatalf("labctl %s: exit %d, %v, want %d:\n%s%s", strings.Join(args, " "), code, err, want, out, stderr.String())
			}
			return string(out)
		}
		labctl(0, "up", "--learners", "3") // all three are up: nothing to do
		// class up tries the walls, and says what the cluster leaves open.
		for _, want := range []string{"✓ The learners are walled off from each other",
			"⚠ Not enforced by the class cluster: StorageClass standard (rancher.io/local-path) does not enforce a claim's size"} {
			if !strings.Contains(stderr.String(), want) {
				t.Errorf("class up says no %q:\n%s", want, stderr.String())
			}
		}
		// The learners' Pods are what this labctl makes from these settings.
		if strings.Contains(stderr.String(), "other settings") {
			t.Errorf("class up names learners on other settings:\n%s", stderr.String())
		}
		var status struct {
			Learners []struct {
				Name  string
				Ready bool
				Step  string
				Score *int
			}
		}
		if err := json.Unmarshal([]byte(labctl(0, "status", "-o", "json")), &status); err != nil {
			t.Fatal(err)
		}
		if len(status.Learners) != 3 || !status.Learners[0].Ready || status.Learners[0].Step != "" || status.Learners[1].Step == "" || status.Learners[0].Score == nil {
			t.Errorf("class status: %+v", status)
		}
		// Learner 2 removed the drift step's evidence after the step had
		// passed: the grade keeps the verdict of the round in which it passed.
		if out := labctl(0, "grade"); !strings.Contains(out, "3 passed") {
			t.Errorf("class grade with learner 2's evidence gone after the drift step passed:\n%s", out)
		}
		// Back at the drift step, as `class reset --to drift` records it,
		// the missing evidence fails learner 2.
		dir, err := StateDir(ls[1].Lab.Metadata.Name, learnerOf(ls[1]))
		if err != nil {
			t.Fatal(err)
		}
		if err := progress.NewStore(dir).Update(ctx, ls[1].Lab.Metadata.Name, func(p *progress.Progress) error {
			return p.StartAt(ls[1].Lab, "drift", time.Now())
		}); err != nil {
			t.Fatal(err)
		}
		junit := filepath.Join(t.TempDir(), "class.xml")
		labctl(1, "grade", "-o", "junit", "--output-file", junit) // learner 2 fails
		if b, err := os.ReadFile(junit); err != nil || strings.Count(string(b), "<testsuite ") != 3 {
			t.Errorf("class grade -o junit: %v\n%s", err, b)
		}
		invite := filepath.Join(t.TempDir(), "ada.kubeconfig")
		labctl(0, "invite", "learner-1", "--output-file", invite)
		if fi, err := os.Stat(invite); err != nil || fi.Mode().Perm() != 0o600 {
			t.Fatalf("invite file: %v, %v", fi, err)
		}
		b, _ := os.ReadFile(invite)
		if v, err := OpenInvite(ctx, b); err != nil || v.Learner() != "learner-1" {
			t.Errorf("the invite file: %v", err)
		}
	})

	t.Run("the shell over the exec API", func(t *testing.T) {
		sh, err := ls[0].AttachShell(ctx, provision.ShellOptions{Rows: 24, Cols: 80, Env: []string{"TERM=xterm"}})
		if err != nil {
			t.Fatal(err)
		}
		defer sh.Close()
		var screen e2etest.Screen
		go func() { _, _ = io.Copy(&screen, sh) }()
		sh.Write([]byte("stty size\r"))
		screen.WaitFor(t, "24 80", 1)
		if err := sh.Resize(ctx, 40, 100); err != nil {
			t.Fatal(err)
		}
		sh.Write([]byte("stty size\r"))
		screen.WaitFor(t, "40 100", 1)
		if out := screen.String(); !strings.Contains(out, "\x1b]133;A") || !strings.Contains(out, "\x1b]133;D") {
			t.Errorf("no OSC 133 prompt marks in the shell's output: %q", out)
		}
		sh.Write([]byte("exit 3\r"))
		wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		if code, err := sh.ExitCode(wctx); err != nil || code != 3 {
			t.Errorf("exit code %d, %v; want 3", code, err)
		}
	})

	t.Run("the learner reaches neither the checker nor the class cluster", func(t *testing.T) {
		mustRun(t, ls[0], `set -u
test ! -e /.labctl || { echo "/.labctl is in the sandbox"; exit 1; }
# the feedback checker is there, read-only: it can be neither replaced nor added to
test -x `+practiceDir+`/labctl || { echo "no feedback checker"; exit 1; }
if cp /bin/true `+practiceDir+`/labctl 2>/dev/null || touch `+practiceDir+`/x 2>/dev/null || mount -o remount,rw `+practiceDir+` 2>/dev/null; then
	echo "the checker's mount is writable"; exit 1
fi
test ! -e /var/run/secrets/kubernetes.io || { echo "a service-account token is in the sandbox"; exit 1; }
# the class cluster's API server is behind the namespace's wall (000: no connection)
code=$(curl -sk -m 5 -o /dev/null -w '%{http_code}' https://kubernetes.default.svc/api/v1/namespaces/e2e-learner-1/pods/vcp/exec)
[ "$code" = 000 ] || { echo "the class cluster answered $code"; exit 1; }`)
	})

	t.Run("one learner's token is refused by another's API server", func(t *testing.T) {
		cfg1, _ := ls[0].LearnerConfig(ctx)
		cfg2, _ := ls[1].LearnerConfig(ctx)
		cross := rest.CopyConfig(cfg2)
		cross.BearerToken = cfg1.BearerToken
		cs, err := kubernetes.NewForConfig(cross)
		if err != nil {
			t.Fatal(err)
		}
		_, err = cs.CoreV1().Namespaces().Get(ctx, "gitops-lab", metav1.GetOptions{})
		if !apierrors.IsUnauthorized(err) {
			t.Errorf("learner 1's token at learner 2's API server: %v, want 401", err)
		}
		own, _ := kubernetes.NewForConfig(cfg1)
		if _, err := own.CoreV1().Namespaces().Get(ctx, "gitops-lab", metav1.GetOptions{}); err != nil {
			t.Errorf("learner 1's token at its own API server: %v", err)
		}
		// Nor can the token get there: learner 2's API server is behind
		// learner 2's wall.
		mustRun(t, ls[0], `tok=$(kubectl config view --raw -o jsonpath='{.users[0].user.token}')
code=$(curl -sk -m 5 -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $tok" https://vcp.e2e-learner-2.svc:6443/api/v1/namespaces)
[ "$code" = 000 ] || { echo "learner 2's API server answered $code"; exit 1; }`)
	})

	t.Run("a script's output arrives whole, stdout and stderr on one writer", func(t *testing.T) {
		// client-go copies an exec's stdout and stderr at once: one
		// bytes.Buffer for both once lost whole outputs, about one exec in three.
		const script = `hostname; echo to-stderr >&2; echo own-home`
		for i := range 20 {
			var out bytes.Buffer
			if code, err := ls[0].RunScript(ctx, script, &out, &out); err != nil || code != 0 || !strings.Contains(out.String(), "own-home") || !strings.Contains(out.String(), "to-stderr") {
				t.Fatalf("script %d in the sandbox: %d, %v: %q", i, code, err, out.String())
			}
			out.Reset()
			if code, err := ls[0].RunAdminScript(ctx, script, &out); err != nil || code != 0 || !strings.Contains(out.String(), "own-home") || !strings.Contains(out.String(), "to-stderr") {
				t.Fatalf("probe script %d: %d, %v: %q", i, code, err, out.String())
			}
		}
	})

	t.Run("a cancelled script takes what it started with it", func(t *testing.T) {
		// A probe that times out must not leave its port-forward
		// holding the port for the next run; the exec API only closes
		// the streams.
		rctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		_, err := ls[0].RunScript(rctx, "sleep 1235 & setsid sleep 1236 & sleep 1234", io.Discard, io.Discard)
		cancel()
		if err == nil {
			t.Fatal("a script stopped by its deadline returned no error")
		}
		var out bytes.Buffer
		const count = `n=0; for f in /proc/[0-9]*/cmdline; do tr '\0' ' ' <"$f" 2>/dev/null | grep -q '^sleep 123[456]' && n=$((n+1)); done; echo $n`
		if code, err := ls[0].RunScript(ctx, count, &out, &out); err != nil || code != 0 || strings.TrimSpace(out.String()) != "0" {
			t.Errorf("after the cancelled script, %q of its processes still run (%d, %v)", out.String(), code, err)
		}
	})

	t.Run("an invite execs into its own sandbox and nowhere else", func(t *testing.T) {
		kc, expires, err := c.Invite(ctx, "learner-1", time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		v, err := OpenInvite(ctx, kc)
		if err != nil {
			t.Fatal(err)
		}
		// The token carries the expiry the class cluster gave it.
		if left := time.Until(v.Expires()); !v.Expires().Equal(expires) || left <= 50*time.Minute || left > time.Hour {
			t.Errorf("the invite expires at %v (the class cluster says %v), want in an hour", v.Expires(), expires)
		}
		if v.Learner() != "learner-1" || v.LabName() != "gitops-drift" {
			t.Errorf("invite for %s of %s", v.Learner(), v.LabName())
		}
		lv := v.Live(ls[0].Lab)
		var out bytes.Buffer
		if code, err := lv.RunScript(ctx, "hostname; test -d /root/gitops/repo && echo own-home", &out, &out); err != nil || code != 0 || !strings.Contains(out.String(), "own-home") {
			t.Fatalf("exec into the own sandbox: %d, %v: %s", code, err, out.String())
		}
		for _, target := range []struct{ ns, pod, container string }{
			{"e2e-learner-1", vcpPod, containerGrader},
			{"e2e-learner-1", vcpPod, containerAdmin},
			{"e2e-learner-2", sandboxPod, containerSandbox},
		} {
			out.Reset()
			_, err := podexec.Exec{Namespace: target.ns, Pod: target.pod, Container: target.container, Cmd: []string{"true"}, Stdout: &out}.Run(ctx, v.sandbox.cfg, v.sandbox.cs)
			if err == nil || !strings.Contains(err.Error(), "forbidden") {
				t.Errorf("invite exec into %s/%s (%s): %v, want forbidden", target.ns, target.pod, target.container, err)
			}
		}
		if _, err := v.sandbox.cs.CoreV1().Secrets("e2e-learner-1").List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
			t.Errorf("invite lists secrets: %v, want forbidden", err)
		}
		// The learner's shell on a PTY, through the invite.
		sh, err := lv.AttachShell(ctx, provision.ShellOptions{Rows: 30, Cols: 90, Env: []string{"TERM=xterm"}})
		if err != nil {
			t.Fatal(err)
		}
		var screen e2etest.Screen
		go func() { _, _ = io.Copy(&screen, sh) }()
		sh.Write([]byte("stty size; exit 4\r"))
		screen.WaitFor(t, "30 90", 1)
		wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		if code, err := sh.ExitCode(wctx); err != nil || code != 4 {
			t.Errorf("invited shell: exit %d, %v; want 4", code, err)
		}
		sh.Close()
		// The learner's own feedback: the practice lab's checks in the
		// sandbox; what only the grader judges is left to the instructor.
		practice := grading.Practice(lv.Lab)
		for _, st := range practice.Steps {
			rs, err := checks.RunRound(ctx, checks.Round{Checks: st.Checks}, grading.PracticeChecker{Checker: lv}.RunChecks)
			if err != nil {
				t.Fatal(err)
			}
			if checks.Summarize(rs).Verdict() != checks.Passed {
				t.Errorf("feedback on step %s of a solved lab: %v", st.ID, failed(rs))
			}
			for i, r := range rs {
				if grading.InstructorOnly(&st.Checks[i]) != (r.Status == checks.Error) {
					t.Errorf("%s: %s %s", r.Name, r.Status, r.Message)
				}
			}
		}
		// The learner's labctl marks a step's start through the invite;
		// the instructor's grade, whose record did not see the step
		// begin, judges the step's audit checks from that mark: a
		// request before it is not the step's, one after it is.
		testStepMarks(ctx, t, ls[0], lv)
		// Revoked, an invite opens nothing, and a new one works.
		stale, _, err := c.Invite(ctx, "learner-1", time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.RevokeInvites(ctx, "learner-1"); err != nil {
			t.Fatal(err)
		}
		sv, err := OpenInvite(ctx, stale)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := sv.Live(ls[0].Lab).RunScript(ctx, "true", io.Discard, io.Discard); err == nil || !strings.Contains(strings.ToLower(err.Error()), "unauthorized") {
			t.Errorf("a revoked invite runs a command: %v, want Unauthorized", err)
		}
		fresh := inviteOf(t, c, "learner-1")
		if code, err := fresh.Live(ls[0].Lab).RunScript(ctx, "true", io.Discard, io.Discard); err != nil || code != 0 {
			t.Errorf("a new invite after the revocation: %d, %v", code, err)
		}
	})

	t.Run("attacks", func(t *testing.T) { testClassAttacks(t, h, c, ls) })

	t.Run("a probe and the grader hold no power over the control plane", func(t *testing.T) {
		// A probe's script is the probe's service account, refused
		// cluster-wide, with no certificate of the control plane's.
		var out bytes.Buffer
		code, err := ls[1].RunAdminScript(ctx, `kubectl auth whoami -o jsonpath='{.status.userInfo.username}'; echo
if kubectl create clusterrolebinding probe-root --clusterrole=cluster-admin --serviceaccount=labctl-system:labctl-probe 2>&1; then echo BOUND; fi
ls /etc/vcp 2>&1; true`, &out)
		if err != nil || code != 0 || !strings.HasPrefix(out.String(), "system:serviceaccount:labctl-system:labctl-probe\n") ||
			!strings.Contains(out.String(), "forbidden") || strings.Contains(out.String(), "BOUND") || !strings.Contains(out.String(), "No such file") {
			t.Errorf("a probe's script: exit %d, %v:\n%s", code, err, out.String())
		}
		// What a probe's script leaves, running or written, ends with the
		// probe; the probe container itself goes on, not restarted.
		if code, err := ls[1].RunAdminScript(ctx, `touch left-behind /tmp/left-behind; (sleep 377 > /dev/null 2>&1 < /dev/null &) ; true`, &out); err != nil || code != 0 {
			t.Errorf("a probe's script that leaves a process: exit %d, %v:\n%s", code, err, out.String())
		}
		if err := ls[1].EndProbe(ctx); err != nil {
			t.Error(err)
		}
		left := `ls -A ` + provision.ProbeDir + ` /tmp; for f in /proc/[0-9]*/cmdline; do tr '\0' ' ' < "$f" 2>/dev/null; echo; done | grep -c '^sleep 377' || true`
		lcode, lgot, lerr := c.pods(c.Namespace(names[1])).run(ctx, podCommand{pod: vcpPod, container: containerProbe, cmd: []string{"sh", "-c", left}})
		if lerr != nil || lcode != 0 || strings.Contains(lgot.Text(), "left-behind") || !strings.HasSuffix(strings.TrimSpace(lgot.Text()), "0") {
			t.Errorf("the probe container after EndProbe: exit %d, %v:\n%s", lcode, lerr, lgot.Text())
		}
		if vcp, err := c.cs.CoreV1().Pods(c.Namespace(names[1])).Get(ctx, vcpPod, metav1.GetOptions{}); err != nil {
			t.Error(err)
		} else {
			for _, st := range vcp.Status.ContainerStatuses {
				if st.Name == containerProbe && st.RestartCount != 0 {
					t.Errorf("the probe container restarted %d time(s) over the probes: %+v", st.RestartCount, st.LastTerminationState.Terminated)
				}
			}
		}
		// etcd, beside the grader, takes no connection without the API
		// server's client certificate: not in plain HTTP (-f: a TLS port
		// answers a plain request with a 400), not over TLS without a
		// certificate, not on its peer port; no metrics port is left.
		script := `for u in http://127.0.0.1:2379/version https://127.0.0.1:2379/version https://127.0.0.1:2380/members http://127.0.0.1:2381/health; do
  if a=$(curl -sfk --max-time 5 "$u" 2>&1); then echo "OPEN $u: $a"; else echo "refused $u"; fi
done`
		code, got, err := c.pods(c.Namespace(names[1])).run(ctx, podCommand{pod: vcpPod, container: containerGrader, cmd: []string{"sh", "-c", script}})
		if err != nil || code != 0 || strings.Count(got.Text(), "refused ") != 4 {
			t.Errorf("etcd from the grader: exit %d, %v:\n%s", code, err, got.Text())
		}
	})

	t.Run("a soft reset empties /root and the lab's namespaces", func(t *testing.T) {
		e := ls[1]
		var backup bytes.Buffer
		if err := e.BackupHome(ctx, &backup); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(backup.String(), "root/gitops/repo/") {
			t.Errorf("the backup has no root/gitops/repo/")
		}
		if err := e.RecreateSandbox(ctx); err != nil {
			t.Fatal(err)
		}
		if err := e.ResetNamespaces(ctx); err != nil {
			t.Fatal(err)
		}
		mustRun(t, e, `test ! -e /root/gitops && test -f /root/.bashrc && kubectl get ns gitops-lab >/dev/null &&
[ -z "$(kubectl -n gitops-lab get deployments -o name)" ]`)
	})

	t.Run("3 GiB written in learner 3's sandbox evicts that sandbox only", func(t *testing.T) {
		before := podUIDs(t, h, c, names[:2])
		mustRun(t, ls[2], "echo mine > /root/kept-through-eviction")
		// The sandbox's own layer (not /root, a volume): past the sandbox
		// Pod's ephemeral-storage limit the kubelet evicts that Pod.
		var out bytes.Buffer
		_, _ = ls[2].RunScript(ctx, "fallocate -l 3G /tmp/fill || dd if=/dev/zero of=/tmp/fill bs=1M count=3072 status=none", &out, &out)
		ns := c.Namespace("learner-3")
		p, err := h.cs.CoreV1().Pods(ns).Get(ctx, sandboxPod, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		// The kubelet ends the Pod (its phase then says how its container
		// exited) and records why.
		deadline := time.Now().Add(3 * time.Minute)
		for {
			evs, err := h.cs.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.uid=" + string(p.UID) + ",reason=Evicted"})
			cur, gerr := h.cs.CoreV1().Pods(ns).Get(ctx, sandboxPod, metav1.GetOptions{})
			if err == nil && gerr == nil && len(evs.Items) > 0 && (cur.Status.Phase == corev1.PodFailed || cur.Status.Phase == corev1.PodSucceeded) {
				t.Logf("evicted: %s", evs.Items[0].Message)
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("learner 3's sandbox was not evicted: %v, %v, %+v", err, gerr, cur.Status)
			}
			time.Sleep(2 * time.Second)
		}
		othersUntouched(t, h, c, ls, names, before)
		// class up gives learner 3 a new sandbox, /root kept.
		if err := c.Up(ctx, "learner-3"); err != nil {
			t.Fatal(err)
		}
		mustRun(t, ls[2], "grep -q mine /root/kept-through-eviction && test ! -e /tmp/fill")
	})

	t.Run("3 GiB written into learner 3's /root stops that sandbox only", func(t *testing.T) { testHomeBound(t, h, c, ls, names) })

	t.Run("a hard reset of learner 3 leaves 1 and 2 untouched", func(t *testing.T) {
		before := podUIDs(t, h, c, names[:2])
		mustRun(t, ls[0], "touch /root/kept")
		if err := ls[2].RecreateCluster(ctx); err != nil {
			t.Fatal(err)
		}
		mustRun(t, ls[2], "test ! -e /root/gitops && ! kubectl -n gitops-lab get deployment web 2>/dev/null")
		if after := podUIDs(t, h, c, names[:2]); !maps.Equal(before, after) {
			t.Errorf("learners 1 and 2 changed: %v, then %v", before, after)
		}
		mustRun(t, ls[0], "test -e /root/kept")
		rs, err := gradeAll(ctx, ls[0])
		if err != nil {
			t.Fatal(err)
		}
		if f := failed(rs); len(f) > 0 {
			t.Errorf("learner 1 after learner 3's hard reset: %v", f)
		}
	})
}

// podUIDs are the UIDs of the learners' Pods.
func podUIDs(t *testing.T, h *classHost, c *Class, names []string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, n := range names {
		for _, pn := range podNames {
			pod := pn.name
			p, err := h.cs.CoreV1().Pods(c.Namespace(n)).Get(context.Background(), pod, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			out[n+"/"+pod] = string(p.UID)
		}
	}
	return out
}

// testHomeBound fills learner 3's /root past its bound on the class
// cluster's local-path storage, which does not bound a claim: the warden
// of /root stops that sandbox and says why, the other learners' Pods are
// untouched, a sandbox started again over the full home runs until it
// grows the home, and one back within the bound is left alone.
func testHomeBound(t *testing.T, h *classHost, c *Class, ls []*provision.Live, names []string) {
	ctx := context.Background()
	ns := c.Namespace("learner-3")
	before := podUIDs(t, h, c, names[:2])
	mustRun(t, ls[2], "echo mine > /root/kept-through-the-bound")
	// stopped waits until learner 3's sandbox is gone and class status
	// says why.
	stopped := func(what string) {
		t.Helper()
		deadline := time.Now().Add(2 * time.Minute)
		for {
			list, err := c.Learners(ctx)
			if err == nil && len(list) == 3 && strings.Contains(list[2].Problem, "pod sandbox is missing: /root holds") {
				t.Logf("%s: %s", what, list[2].Problem)
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: learner 3's sandbox was not stopped: %+v, %v", what, list, err)
			}
			time.Sleep(time.Second)
		}
	}
	var out bytes.Buffer
	_, _ = ls[2].RunScript(ctx, "fallocate -l 3G /root/fill || dd if=/dev/zero of=/root/fill bs=1M count=3072 status=none", &out, &out)
	stopped("3 GiB into /root")
	// The warden did not wait for its next look: the file system of the
	// home grew past what the home could still take, and it looked then.
	logs, err := h.cs.CoreV1().Pods(ns).GetLogs(homeboundPod, &corev1.PodLogOptions{Container: containerWarden}).DoRaw(ctx)
	if err != nil || !strings.Contains(string(logs), "more than the home may still take") || !strings.Contains(string(logs), "looking now") {
		t.Errorf("the warden's log: %v\n%s", err, logs)
	}
	othersUntouched(t, h, c, ls, names, before)
	// Started again over the full home: it may read and delete, and is
	// left alone for two looks and more.
	if err := c.Up(ctx, "learner-3"); err != nil {
		t.Fatal(err)
	}
	sb, err := h.cs.CoreV1().Pods(ns).Get(ctx, sandboxPod, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(3 * homeLook)
	mustRun(t, ls[2], "grep -q mine /root/kept-through-the-bound && test -e /root/fill")
	if cur, err := h.cs.CoreV1().Pods(ns).Get(ctx, sandboxPod, metav1.GetOptions{}); err != nil || cur.UID != sb.UID || cur.DeletionTimestamp != nil {
		t.Fatalf("the sandbox started again over the full home was stopped without growing it: %v", err)
	}
	// Growing the home past its bound again stops it again.
	_, _ = ls[2].RunScript(ctx, "head -c 8388608 /dev/zero > /root/more", &out, &out)
	stopped("8 MiB more")
	// Back within the bound, the home may grow again.
	if err := c.Up(ctx, "learner-3"); err != nil {
		t.Fatal(err)
	}
	mustRun(t, ls[2], "rm /root/fill /root/more")
	time.Sleep(2 * homeLook)
	mustRun(t, ls[2], "head -c 8388608 /dev/zero > /root/more")
	time.Sleep(2 * homeLook)
	if list, err := c.Learners(ctx); err != nil || !list[2].Ready {
		t.Errorf("learner 3 within the bound: %+v, %v", list, err)
	}
}

// othersUntouched checks that learners 1 and 2 kept the Pods they had
// (before, from podUIDs) and that their API servers answer.
func othersUntouched(t *testing.T, h *classHost, c *Class, ls []*provision.Live, names []string, before map[string]string) {
	t.Helper()
	if after := podUIDs(t, h, c, names[:2]); !maps.Equal(before, after) {
		t.Errorf("learners 1 and 2's Pods changed: %v, then %v", before, after)
	}
	for _, e := range ls[:2] {
		mustRun(t, e, "kubectl get namespace gitops-lab >/dev/null")
	}
}

// mustRun runs a script in the learner's sandbox; it must exit 0.
func mustRun(t *testing.T, e *provision.Live, script string) {
	t.Helper()
	var out bytes.Buffer
	code, err := e.RunScript(context.Background(), script, &out, &out)
	if err != nil || code != 0 {
		t.Fatalf("%s: %q: exit %d, %v:\n%s", learnerOf(e), script, code, err, out.String())
	}
}

// testStepMarks marks a step of learner's lab through the invite's live lab
// invited, between two writes of the learner's, and runs the instructor's
// audit checks of that step as its grade does for a step its record did
// not see begin: the window starts at the mark.
func testStepMarks(ctx context.Context, t *testing.T, learner, invited *provision.Live) {
	t.Helper()
	ns, step := learner.Lab.Cluster.Namespaces[0], learner.Lab.Steps[1].ID
	begun := time.Now().Add(-time.Second)
	kubectl := func(args string) {
		t.Helper()
		var out bytes.Buffer
		if code, err := invited.RunScript(ctx, "kubectl "+args+" -n "+ns, &out, &out); err != nil || code != 0 {
			t.Fatalf("kubectl %s: %d, %v: %s", args, code, err, out.String())
		}
	}
	kubectl("create configmap mark-before")
	if err := invited.MarkStep(ctx, step); err != nil {
		t.Fatalf("marking step %s through the invite: %v", step, err)
	}
	kubectl("create configmap mark-after")
	defer kubectl("delete configmap mark-before mark-after")
	created := func(name string, absent bool) lab.Check {
		return lab.Check{Name: name, Audit: &lab.AuditCheck{Absent: absent,
			AuditSelector: lab.AuditSelector{Verbs: []string{"create"}, Resource: "configmaps", Namespace: ns, Name: name}}}
	}
	cs := []lab.Check{created("mark-before", true), created("mark-after", false), created("mark-before", false), created("mark-before", true)}
	for i := range cs {
		cs[i].Name = fmt.Sprintf("%s-%d", cs[i].Name, i)
	}
	since := []time.Time{begun, begun, begun, begun}
	want := []checks.Status{checks.Pass, checks.Pass, checks.Fail, checks.Fail}
	var rs []checks.Result
	for try := 0; try < 10; try++ {
		var err error
		rs, err = checks.RunRound(ctx, checks.Round{Checks: cs, Windows: checks.Windows{Since: since, Marks: []string{step, step, step, ""}}}, learner.RunChecks)
		if err != nil {
			t.Fatal(err)
		}
		if rs[1].Status == checks.Pass {
			break // the API server has written the second request
		}
		time.Sleep(time.Second)
	}
	for i, r := range rs {
		if r.Status != want[i] {
			t.Errorf("%s (step to mark %q): %s %s, want %s", r.Name, []string{step, step, step, ""}[i], r.Status, r.Message, want[i])
		}
	}
}
