//go:build e2e

package docker

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/network"

	"github.com/labctl/labctl/checks"
	"github.com/labctl/labctl/cmd/labctl/e2etest"
	"github.com/labctl/labctl/lab"
	"github.com/labctl/labctl/sandbox"
)

// e2eImage is the image the engine tests run: LABCTL_TEST_SANDBOX_IMAGE, or
// labctl's own sandbox image (`make images` builds it).
func e2eImage(t *testing.T) string {
	_, img := e2etest.Images()
	return img
}

// e2eLab makes a unique lab name, a labelled network for it, and removes
// everything labelled with the lab at the end.
func e2eLab(t *testing.T, e *Engine) (labName, netName string) {
	t.Helper()
	var b [4]byte
	rand.Read(b[:])
	labName = "e2e-" + hex.EncodeToString(b[:])
	netName = "labctl-" + labName
	ctx := context.Background()
	if _, err := e.cli.NetworkCreate(ctx, netName, network.CreateOptions{Labels: sandbox.Labels(labName, "network")}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		objs, _ := e.ListByLabel(ctx, map[string]string{sandbox.LabelLab: labName})
		for _, kind := range []string{"container", "volume", "network"} {
			for _, o := range objs {
				if o.Kind != kind {
					continue
				}
				switch kind {
				case "container":
					e.Remove(ctx, o.ID)
				case "volume":
					e.RemoveVolume(ctx, o.Name)
				case "network":
					e.RemoveNetwork(ctx, o.ID)
				}
			}
		}
	})
	return labName, netName
}

func e2eEngine(t *testing.T) *Engine {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	e, err := NewEngine(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

func e2eRun(t *testing.T, e *Engine, name string, o ExecOptions) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	o.Stdout, o.Stderr = &out, &errOut
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	code, err := e.Exec(ctx, name, o)
	if err != nil {
		t.Fatalf("exec %v: %v", o.Cmd, err)
	}
	return code, out.String(), errOut.String()
}

// e2eCheckerRound runs one checker round of req in the grader container
// name as provision.RunChecker does, without its bounds and messages (this
// package's tests cannot import provision): the request on stdin, the
// answer read by checks.ReadResponse and held to the request as
// checks.RunRound does (checks.Reconcile).
func e2eCheckerRound(ctx context.Context, e *Engine, name, bin string, req checks.Request) ([]checks.Result, error) {
	in, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	var out, errOut bytes.Buffer
	code, err := e.ExecChecker(ctx, name, bin, []string{"__check"}, bytes.NewReader(in), &out, &errOut)
	if err != nil {
		return nil, err
	}
	if code != 0 {
		return nil, fmt.Errorf("the checker exited with status %d: %s", code, errOut.String())
	}
	rs, err := checks.ReadResponse(out.Bytes())
	if err != nil {
		return nil, err
	}
	return checks.Reconcile(req.Checks, rs)
}

func TestE2ESandboxLifecycle(t *testing.T) {
	e := e2eEngine(t)
	labName, netName := e2eLab(t, e)
	ctx := context.Background()
	fixtures := t.TempDir()
	os.WriteFile(filepath.Join(fixtures, "hello.txt"), []byte("hello fixtures\n"), 0o644)
	os.Chmod(fixtures, 0o755)
	settings := sandbox.Settings{Lab: labName, Image: e2eImage(t), FixturesDir: fixtures,
		FixturesMount: "/opt/lab/fixtures", WorkDir: "/root", Network: netName}
	spec, err := sandbox.BuildSpec(settings)
	if err != nil {
		t.Fatal(err)
	}

	// Volume and container are created once, then reused.
	for i, want := range []bool{true, false} {
		made, err := e.EnsureVolume(ctx, sandbox.VolumeName(labName), sandbox.Labels(labName, sandbox.RoleHome))
		if err != nil || made != want {
			t.Fatalf("EnsureVolume #%d: created %v, err %v; want created %v", i, made, err, want)
		}
		made, err = e.EnsureSandbox(ctx, spec)
		if err != nil || made != want {
			t.Fatalf("EnsureSandbox #%d: created %v, err %v; want created %v", i, made, err, want)
		}
	}
	objs, err := e.ListByLabel(ctx, map[string]string{sandbox.LabelLab: labName})
	if err != nil {
		t.Fatal(err)
	}
	counts := map[string]int{}
	for _, o := range objs {
		counts[o.Kind+"/"+o.Labels[sandbox.LabelRole]]++
	}
	if counts["container/sandbox"] != 1 || counts["volume/home"] != 1 || len(objs) != 3 {
		t.Fatalf("objects after two ensures: %+v", objs)
	}
	got, err := e.SandboxSettings(ctx, spec.Name)
	if err != nil || got != settings {
		t.Fatalf("SandboxSettings = %+v, %v; want %+v", got, err, settings)
	}

	// The container runs hardened.
	code, out, _ := e2eRun(t, e, spec.Name, ExecOptions{Cmd: []string{"bash", "-c",
		`grep -E '^(CapEff|NoNewPrivs)' /proc/self/status; hostname; echo "LANG=$LANG HOME=$HOME"; id -u; pwd`}})
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	// CHOWN DAC_OVERRIDE FOWNER FSETID KILL SETGID SETUID = bits 0,1,3,4,5,6,7.
	for _, want := range []string{"CapEff:\t00000000000000fb", "NoNewPrivs:\t1", labName + "\n", "LANG=C.UTF-8 HOME=/root", "\n0\n/root\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("hardening: %q missing from\n%s", want, out)
		}
	}
	code, _, errOut := e2eRun(t, e, spec.Name, ExecOptions{Cmd: []string{"bash", "-c", "cat /opt/lab/fixtures/hello.txt >&2; touch /opt/lab/fixtures/new"}})
	if code == 0 || !strings.Contains(errOut, "hello fixtures") || !strings.Contains(errOut, "Read-only file system") {
		t.Errorf("fixtures: exit %d, stderr %q; want readable and read-only", code, errOut)
	}

	// Exit codes, stdin, stdout and stderr pass through.
	code, out, errOut = e2eRun(t, e, spec.Name, ExecOptions{Cmd: []string{"bash", "-c", "tr a-z A-Z; echo oops >&2; exit 7"},
		Stdin: strings.NewReader("piped in")})
	if code != 7 || out != "PIPED IN" || errOut != "oops\n" {
		t.Errorf("exec: code %d out %q err %q", code, out, errOut)
	}

	// CopyFile creates parents and sets the mode; CopyOut returns a tar.
	data := "apiVersion: v1\nkind: Config\n"
	if err := e.CopyFile(ctx, spec.Name, "/root/.kube/config", 0o600, strings.NewReader(data), int64(len(data))); err != nil {
		t.Fatal(err)
	}
	code, out, _ = e2eRun(t, e, spec.Name, ExecOptions{Cmd: []string{"stat", "-c", "%a %U %s", "/root/.kube/config"}})
	if code != 0 || out != "600 root 28\n" {
		t.Errorf("copied file: %q", out)
	}
	if err := e.CopyFile(ctx, spec.Name, "relative/path", 0o600, strings.NewReader(""), 0); err == nil {
		t.Error("CopyFile accepted a relative path")
	}
	rc, err := e.CopyOut(ctx, spec.Name, "/root")
	if err != nil {
		t.Fatal(err)
	}
	found := false
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Name == "root/.kube/config" {
			b, _ := io.ReadAll(tr)
			found = string(b) == data
		}
	}
	rc.Close()
	if !found {
		t.Error("CopyOut of /root lacks .kube/config with its content")
	}

	// A changed spec recreates the container; the home volume survives.
	settings.WorkDir = "/tmp"
	spec2, _ := sandbox.BuildSpec(settings)
	if made, err := e.EnsureSandbox(ctx, spec2); err != nil || !made {
		t.Fatalf("changed spec: created %v, err %v; want a new container", made, err)
	}
	code, out, _ = e2eRun(t, e, spec.Name, ExecOptions{Cmd: []string{"bash", "-c", "pwd; cat /root/.kube/config"}})
	if code != 0 || out != "/tmp\n"+data {
		t.Errorf("after recreation: %q", out)
	}

	// Cancelling an exec kills its process, and what it left in the
	// background, in its process group or out of it (a timed-out probe's
	// port-forward must not hold its port for the next run), but nothing
	// another exec started.
	count := `n=0; for f in /proc/[0-9]*/cmdline; do tr '\0' ' ' <"$f" 2>/dev/null | grep -q '^sleep 123[4-7]' && n=$((n+1)); done; echo $n`
	other, stopOther := context.WithCancel(ctx)
	otherDone := make(chan error, 1)
	go func() {
		_, err := e.Exec(other, spec.Name, ExecOptions{Cmd: []string{"sleep", "1237"}})
		otherDone <- err
	}()
	cctx, cancel := context.WithCancel(ctx)
	go func() { time.Sleep(2 * time.Second); cancel() }()
	_, err = e.Exec(cctx, spec.Name, ExecOptions{Cmd: []string{"bash", "-c", "sleep 1235 & setsid sleep 1236 & sleep 1234"}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled exec: err = %v", err)
	}
	if _, out, _ = e2eRun(t, e, spec.Name, ExecOptions{Cmd: []string{"bash", "-c", count}}); out != "1\n" {
		t.Errorf("after a cancelled exec, %q of its processes and the other exec's run, want the other exec's alone", out)
	}
	stopOther()
	if err := <-otherDone; !errors.Is(err, context.Canceled) {
		t.Fatalf("the other exec, cancelled: err = %v", err)
	}
	if _, out, _ = e2eRun(t, e, spec.Name, ExecOptions{Cmd: []string{"bash", "-c", count}}); out != "0\n" {
		t.Errorf("the cancelled execs' processes still run (%q instances)", out)
	}

	// A Bare exec carries no mark: cancelling it kills its process through
	// the host PID the engine reports, which is in the container's control
	// groups.
	bctx, bcancel := context.WithCancel(ctx)
	go func() { time.Sleep(2 * time.Second); bcancel() }()
	if _, err = e.Exec(bctx, spec.Name, ExecOptions{Bare: true, Cmd: []string{"sleep", "1234"}}); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled bare exec: err = %v", err)
	}
	if _, out, _ = e2eRun(t, e, spec.Name, ExecOptions{Cmd: []string{"bash", "-c", count}}); out != "0\n" {
		t.Errorf("a cancelled bare exec's process still runs (%q instances)", out)
	}

	// A missing image says how to get it.
	bad := settings
	bad.Image = "labctl-test/absent:never"
	spec3, _ := sandbox.BuildSpec(bad)
	if _, err := e.EnsureSandbox(ctx, spec3); !errors.Is(err, ErrImageMissing) {
		t.Errorf("missing image: err = %v", err)
	}

	if err := e.Remove(ctx, spec.Name); err != nil {
		t.Fatal(err)
	}
	if err := e.Remove(ctx, spec.Name); err != nil {
		t.Fatalf("second Remove: %v", err)
	}
	if st, err := e.State(ctx, spec.Name); err != nil || st.Exists {
		t.Fatalf("after Remove: %+v %v", st, err)
	}
}

func TestE2ECheckerRound(t *testing.T) {
	e := e2eEngine(t)
	labName, netName := e2eLab(t, e)
	ctx := context.Background()
	checkerDir := t.TempDir()
	settings := sandbox.Settings{Lab: labName, Image: e2eImage(t), Network: netName, CheckerDir: checkerDir}
	sandboxSpec, err := sandbox.BuildSpec(settings)
	if err != nil {
		t.Fatal(err)
	}
	spec, err := sandbox.BuildGraderSpec(settings)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.EnsureVolume(ctx, sandbox.VolumeName(labName), sandbox.Labels(labName, sandbox.RoleHome)); err != nil {
		t.Fatal(err)
	}
	for _, s := range []sandbox.Spec{sandboxSpec, spec} {
		if _, err := e.EnsureSandbox(ctx, s); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { e.Remove(context.Background(), s.Name) })
	}
	bin := buildStatic(t)

	var stdout, stderr bytes.Buffer
	code, err := e.ExecChecker(ctx, spec.Name, bin, []string{"__check"}, strings.NewReader(`{"checks":[]}`), &stdout, &stderr)
	if err != nil {
		t.Fatal(err)
	}
	out := stdout.String()
	if code != 0 {
		t.Fatalf("round: exit %d, %s", code, stderr.String())
	}
	for _, want := range []string{`args=["__check"]`, "uid=0", "wd=/\n", `stdin={"checks":[]}`, "env=" + sandbox.CheckerPath + "\n", "env=LANG=\n", "env=HOME=/\n", "env=HOSTNAME=\n", "exe=" + sandbox.CheckerMount + "/labctl-check-"} {
		if !strings.Contains(out, want) {
			t.Errorf("%q missing from the checker's view:\n%s", want, out)
		}
	}
	for _, line := range strings.Split(out, "\n") {
		if k, v, ok := strings.Cut(strings.TrimPrefix(line, "env="), "="); ok && strings.HasPrefix(line, "env=") && k != "PATH" && k != "HOME" && v != "" {
			t.Errorf("the checker inherits %s", line)
		}
	}
	if left, _ := os.ReadDir(checkerDir); len(left) != 0 {
		t.Errorf("the checker was left behind in %s: %v", checkerDir, left)
	}
	// The learner, root in the sandbox, does not even see where the checker
	// runs from, and the grader cannot write the learner's home.
	code, _, _ = e2eRun(t, e, sandboxSpec.Name, ExecOptions{Cmd: []string{"bash", "-c", "test -e " + sandbox.CheckerMount + " && exit 4; echo x > /root/mine"}})
	if code != 0 {
		t.Errorf("the sandbox has %s, or /root is not writable there (exit %d)", sandbox.CheckerMount, code)
	}
	code, _, _ = e2eRun(t, e, spec.Name, ExecOptions{Cmd: []string{"sh", "-c",
		"test \"$(cat /root/mine)\" = x || exit 4; touch /root/forged || touch " + sandbox.CheckerMount + "/forged || touch /usr/bin/forged || exit 3"}})
	if code != 3 {
		t.Errorf("the grader could write the home, the checker mount or its own root file system, or does not see the home (exit %d)", code)
	}

	// A round that overruns its context ends with an error while the
	// context says so, and its directory goes.
	rctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	code, err = e.ExecChecker(rctx, spec.Name, bin, []string{"hang"}, nil, io.Discard, io.Discard)
	if err == nil || rctx.Err() == nil {
		t.Fatalf("hanging round: exit %d, %v; want an error past the deadline", code, err)
	}
	if left, _ := os.ReadDir(checkerDir); len(left) != 0 {
		t.Errorf("the overrun checker was left behind in %s: %v", checkerDir, left)
	}
}

// BenchmarkE2ECheckerRound measures one checker round in a grader container
// (place, exec, remove) with the real static labctl binary and an empty request.
//
//	LABCTL_TEST_SANDBOX_IMAGE=... go test -tags e2e ./sandbox/ -run '^$' -bench CheckerRound -benchtime 10x
func BenchmarkE2ECheckerRound(b *testing.B) {
	ctx := context.Background()
	e, err := NewEngine(ctx)
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	_, img := e2etest.Images()
	var rb [4]byte
	rand.Read(rb[:])
	labName := "bench-" + hex.EncodeToString(rb[:])
	netName := "labctl-" + labName
	if _, err := e.cli.NetworkCreate(ctx, netName, network.CreateOptions{Labels: sandbox.Labels(labName, "network")}); err != nil {
		b.Fatal(err)
	}
	defer e.RemoveNetwork(ctx, netName)
	spec, _ := sandbox.BuildGraderSpec(sandbox.Settings{Lab: labName, Image: img, Network: netName, CheckerDir: b.TempDir()})
	e.EnsureVolume(ctx, sandbox.VolumeName(labName), sandbox.Labels(labName, sandbox.RoleHome))
	defer e.RemoveVolume(ctx, sandbox.VolumeName(labName))
	if _, err := e.EnsureSandbox(ctx, spec); err != nil {
		b.Fatal(err)
	}
	defer e.Remove(ctx, spec.Name)
	bin := e2etest.BuildLabctl(b)
	b.ResetTimer()
	for range b.N {
		rs, err := e2eCheckerRound(ctx, e, spec.Name, bin, checks.Request{Root: "/", Checks: []lab.Check{}})
		if err != nil || len(rs) != 0 {
			b.Fatalf("%+v %v", rs, err)
		}
	}
	st, _ := os.Stat(bin)
	b.ReportMetric(float64(st.Size())/(1<<20), "MiB-binary")
}
