//go:build e2e

package reset

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/labctl/labctl/checks"
	"github.com/labctl/labctl/cmd/labctl/e2etest"
	"github.com/labctl/labctl/grading/progress"
	"github.com/labctl/labctl/internal/statusline"
	"github.com/labctl/labctl/lab"
	"github.com/labctl/labctl/provision"
	"github.com/labctl/labctl/provision/docker"
	"github.com/labctl/labctl/provision/kind"
	"github.com/labctl/labctl/sandbox"
)

// TestE2ERepairAndKeepHome breaks a real sandbox the ways a learner can
// (its pids used up from inside, paused, stopped) and shows that `up`
// repairs it quickly and keeps /root; that down keeps the home volume and
// down --purge saves it first; and that a sparse 10 GiB file makes reset
// and the purge refuse with nothing removed:
//
//	go test -tags e2e ./reset/ -run TestE2ERepairAndKeepHome -timeout 30m -v
func TestE2ERepairAndKeepHome(t *testing.T) {
	t.Setenv("LABCTL_STATE_DIR", t.TempDir())
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	node, sb := e2etest.Images()
	ctx := context.Background()
	l := e2etest.NewLab("e2e-keep", "e2e-keep", lab.Step{ID: "one", Setup: "echo setup-ran > /root/setup-marker", Checks: []lab.Check{
		{Name: "kept", File: &lab.FileCheck{Path: "/root/keep.txt", Contains: []string{"learner-work"}}},
		{Name: "missing", File: &lab.FileCheck{Path: "/root/never-written.txt"}},
	}})
	engine, err := docker.NewEngine(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer engine.Close()
	for _, ref := range []string{node, sb} {
		if ok, err := engine.ImagePresent(ctx, ref); err != nil || !ok {
			t.Fatalf("image %s is not present (%v): build it with `labctl images build` or set LABCTL_TEST_NODE_IMAGE / LABCTL_TEST_SANDBOX_IMAGE", ref, err)
		}
	}
	if err := kind.Down(ctx, l); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { kind.Down(context.Background(), l) })
	container, volume := sandbox.ContainerName(l.Metadata.Name), sandbox.VolumeName(l.Metadata.Name)
	no := false
	up := func(what string) (*provision.Live, string, time.Duration) {
		t.Helper()
		var lines bytes.Buffer
		start := time.Now()
		env, err := kind.Up(ctx, kind.Options{
			Lab: l, Fixtures: fstest.MapFS{"hello.txt": {Data: []byte("hello\n")}},
			NodeImage: node, SandboxImage: sb,
			Status: statusline.New(&lines, statusline.Options{Terminal: &no}),
		})
		took := time.Since(start)
		if err != nil {
			t.Fatalf("up %s: %v\n%s", what, err, lines.String())
		}
		t.Logf("up %s took %s", what, took.Round(time.Millisecond))
		return env, lines.String(), took
	}
	run := func(env *provision.Live, script string) (int, string) {
		t.Helper()
		var out bytes.Buffer
		sctx, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		code, err := env.RunScript(sctx, script, &out, &out)
		if err != nil {
			t.Fatalf("script %q: %v", script, err)
		}
		return code, out.String()
	}
	docker := func(args ...string) (string, error) {
		out, err := exec.CommandContext(ctx, "docker", args...).CombinedOutput()
		return string(out), err
	}
	kept := func(env *provision.Live, what string) {
		t.Helper()
		if code, out := run(env, "cat /root/keep.txt && echo runs"); code != 0 || out != "learner-work\nruns\n" {
			t.Errorf("%s: /root/keep.txt or a command: %d %q", what, code, out)
		}
	}
	repaired := func(what, lines string, took time.Duration) {
		t.Helper()
		if !strings.Contains(lines, "Repairing sandbox (it no longer runs commands)") {
			t.Errorf("%s: no repair status line:\n%s", what, lines)
		}
		if took > time.Minute {
			t.Errorf("%s: up took %s to repair the sandbox", what, took)
		}
	}

	env, _, _ := up("fresh")
	if code, out := run(env, "echo learner-work > /root/keep.txt"); code != 0 {
		t.Fatalf("writing keep.txt: %q", out)
	}
	env.Close()

	t.Log("healthy up: no repair, and what the probe costs")
	start := time.Now()
	if reason, err := engine.Probe(ctx, container); err != nil || reason != "" {
		t.Fatalf("probe of a healthy sandbox: %q %v", reason, err)
	}
	t.Logf("probe of a healthy sandbox: %s", time.Since(start).Round(time.Microsecond))
	env, lines, _ := up("again")
	if strings.Contains(lines, "Repairing sandbox") {
		t.Errorf("a healthy sandbox was repaired:\n%s", lines)
	}
	env.Close()

	t.Log("pids used up from inside")
	if out, err := docker("exec", "-d", container, "bash", "-c", "while :; do sleep 1000 & done"); err != nil {
		t.Fatalf("starting the fork loop: %v %s", err, out)
	}
	// bash stops at the first fork that fails, leaving its sleeps to hold
	// all the pids but one or two: a Go program such as kubectl, which needs
	// threads, can no longer run.
	deadline := time.Now().Add(time.Minute)
	for {
		reason, err := engine.Probe(ctx, container)
		if err != nil {
			t.Fatal(err)
		}
		if reason != "" {
			t.Logf("the probe says: %s", reason)
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the sandbox's pids are not used up a minute after the fork loop started")
		}
		time.Sleep(200 * time.Millisecond)
	}
	time.Sleep(2 * time.Second)
	if out, err := docker("exec", container, "kubectl", "version", "--client"); err == nil {
		t.Errorf("kubectl still runs in the sandbox whose pids are used up: %s", out)
	}
	// The sandbox runs no command any more, but the grade does not run
	// there: the checks still say pass and fail, in bounded time.
	checker := e2etest.BuildLabctl(t)
	genv, err := kind.Connect(ctx, l, kind.WithUpOptions(kind.Options{Lab: l, CheckerBinary: checker}))
	if err != nil {
		t.Fatalf("connecting to the lab whose sandbox's pids are used up: %v", err)
	}
	gctx, cancel := context.WithTimeout(ctx, time.Minute)
	rs, err := checks.RunRound(gctx, checks.Round{Checks: l.Steps[0].Checks}, genv.RunChecks)
	cancel()
	genv.Close()
	if err != nil || len(rs) != 2 || rs[0].Status != checks.Pass || rs[1].Status != checks.Fail {
		t.Errorf("a check round while the sandbox's pids are used up: %+v, %v; want kept to pass and missing to fail", rs, err)
	}
	env, lines, took := up("after the pids were used up")
	repaired("pids used up", lines, took)
	kept(env, "after pids were used up")
	env.Close()

	for _, how := range []string{"pause", "stop"} {
		t.Log(how)
		if out, err := docker(how, container); err != nil {
			t.Fatalf("docker %s: %v %s", how, err, out)
		}
		env, lines, took := up("after docker " + how)
		repaired(how, lines, took)
		kept(env, "after docker "+how)
		env.Close()
	}

	t.Log("down keeps the home; up resumes it")
	if err := kind.DownKeepingHome(ctx, l); err != nil {
		t.Fatal(err)
	}
	objs, err := engine.ListByLabel(ctx, map[string]string{sandbox.LabelLab: l.Metadata.Name})
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) != 1 || objs[0].Kind != "volume" || objs[0].Name != volume {
		t.Errorf("after down, want only the home volume: %+v", objs)
	}
	env, _, _ = up("after down")
	kept(env, "after down and up")

	t.Log("a sparse 10 GiB file: reset refuses and removes nothing")
	if code, out := run(env, "truncate -s 10G /root/huge.img && du -k /root/huge.img"); code != 0 {
		t.Fatalf("making a sparse file: %q", out)
	}
	before, err := engine.State(ctx, container)
	if err != nil {
		t.Fatal(err)
	}
	store := progress.NewStore(t.TempDir())
	_, err = Run(ctx, env, Options{Lab: l, Store: store})
	var tooBig *TooBigError
	if !errors.As(err, &tooBig) || !strings.Contains(err.Error(), "/root/huge.img") || !strings.Contains(err.Error(), "--no-backup") {
		t.Errorf("reset of a /root with a 10 GiB sparse file: %v", err)
	}
	after, err := engine.State(ctx, container)
	if err != nil || after.ID != before.ID {
		t.Errorf("the refused reset replaced the sandbox: %v", err)
	}
	kept(env, "after the refused reset")
	if entries, _ := os.ReadDir(filepath.Join(store.Dir(), "backups")); len(entries) != 0 {
		t.Errorf("the refused reset left %d files in the backups", len(entries))
	}
	env.Close()

	t.Log("down --purge: refused while too big, then saved and removed")
	if err := kind.DownKeepingHome(ctx, l); err != nil {
		t.Fatal(err)
	}
	purge := func() (string, error) {
		home, err := kind.OpenHome(ctx, l, sb)
		if err != nil {
			return "", err
		}
		defer home.Close()
		path, err := Backup(ctx, home, filepath.Join(store.Dir(), "backups"), time.Now())
		if err != nil {
			return "", err
		}
		return path, kind.Down(ctx, l)
	}
	if _, err := purge(); !errors.As(err, &tooBig) {
		t.Errorf("purge of a /root with a 10 GiB sparse file: %v", err)
	}
	if ok, _ := volumeExists(ctx, engine, l.Metadata.Name); !ok {
		t.Fatal("the refused purge removed the home volume")
	}
	env, _, _ = up("after the refused purge")
	kept(env, "after the refused purge")
	run(env, "rm /root/huge.img")
	env.Close()
	if err := kind.DownKeepingHome(ctx, l); err != nil {
		t.Fatal(err)
	}
	path, err := purge()
	if err != nil {
		t.Fatal(err)
	}
	if ok, _ := volumeExists(ctx, engine, l.Metadata.Name); ok {
		t.Error("the home volume is still there after the purge")
	}
	if objs, _ := engine.ListByLabel(ctx, map[string]string{sandbox.LabelLab: l.Metadata.Name}); len(objs) != 0 {
		t.Errorf("after the purge: %+v", objs)
	}
	if got, _ := e2etest.TarEntry(t, path, "root/keep.txt"); got != "learner-work\n" {
		t.Errorf("keep.txt in the purge's backup %s = %q", path, got)
	}
}

func volumeExists(ctx context.Context, engine *docker.Engine, labName string) (bool, error) {
	objs, err := engine.ListByLabel(ctx, sandbox.Labels(labName, sandbox.RoleHome))
	return len(objs) > 0, err
}
