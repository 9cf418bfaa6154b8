//go:build e2e

package images

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/labctl/labctl/lab"
)

// These tests build lab recipes on the real Docker engine; they need the
// Debian base (labctl images build) and Go on PATH, and no cluster.

// hostileRecipe writes a Go recipe into labDir/web whose .git/config runs
// a script through core.fsmonitor (any git status in the directory runs
// it), with a go.env whose GOFLAGS would run the same script as the
// compiler's wrapper, and a toolchain line naming a Go that does not
// exist. The script writes marker. It returns the recipe's directory.
func hostileRecipe(t *testing.T, labDir, marker string) string {
	t.Helper()
	dir := filepath.Join(labDir, "web")
	script := filepath.Join(t.TempDir(), "payload.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\necho ran >> "+marker+"\nexec \"$@\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeRecipe(t, labDir, map[string]string{
		"web/go.mod":     "module example.test/web\n\ngo 1.22\n\ntoolchain go1.99.0\n",
		"web/main.go":    "package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(\"hello from the recipe\") }\n",
		"web/Dockerfile": "FROM scratch\nCOPY app /app\nENTRYPOINT [\"/app\"]\n",
		"web/go.env":     "GOFLAGS=-toolexec=" + script + "\nGOTOOLCHAIN=go1.99.0\n",
	})
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+t.TempDir())
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("init", "-q")
	git("config", "core.fsmonitor", script)
	return dir
}

func e2eContext(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// e2eOptions builds with a cache of the test's own, so that a build of
// labctl's images holding the machine's cache lock does not hold the test.
func e2eOptions(t *testing.T) Options {
	return Options{CacheDir: t.TempDir()}
}

func removeImage(t *testing.T, ref string) {
	t.Helper()
	exec.Command("docker", "rmi", "-f", ref).Run()
	t.Cleanup(func() { exec.Command("docker", "rmi", "-f", ref).Run() })
}

// A recipe whose .git/config runs the author's command, with a go.env and
// a toolchain line, is refused with what to remove, and nothing of it runs
// on the host. Built anyway (the refusal taken away), its program is
// compiled in the container by the host's Go: the marker is still never
// written, and the toolchain line makes Go fetch or pick nothing.
func TestE2EWorkloadRecipeRunsNothingOnTheHost(t *testing.T) {
	ctx := e2eContext(t)
	// Go's default, which a user's go env file may have changed: Go stamps
	// the version control state, running git status in the directory.
	t.Setenv("GOFLAGS", "-buildvcs=auto")
	labDir := t.TempDir()
	marker := filepath.Join(t.TempDir(), "marker")
	dir := hostileRecipe(t, labDir, marker)
	ref := fmt.Sprintf("labctl.local/e2e-hostile-%d:1", time.Now().UnixNano()%100000)
	removeImage(t, ref)

	_, err := EnsureWorkloads(ctx, e2eOptions(t), labWithImages(lab.Image{Name: ref, Build: "web"}), labDir)
	if err == nil || !strings.Contains(err.Error(), ".git is configuration that host tools (git, go, credential helpers) read and run: remove it from the recipe") ||
		!strings.Contains(err.Error(), "go.env is configuration") {
		t.Errorf("EnsureWorkloads of the hostile recipe: %v; want it refused naming .git and go.env", err)
	}
	if data, err := os.ReadFile(marker); err == nil {
		t.Fatalf("the recipe's command ran on the host: %q", data)
	}

	// Past the refusal: the build itself reads nothing of the recipe on
	// the host.
	b, err := newBuilder(e2eOptions(t))
	if err != nil {
		t.Fatal(err)
	}
	tc, err := b.hostGo(ctx)
	if err != nil {
		t.Fatal(err)
	}
	r := recipe{dir: dir, tree: "hostile", goMod: true, goVersion: "1.22"}
	if err := b.buildWorkload(ctx, ref, r, tc, "hostile"); err != nil {
		t.Fatalf("building the recipe in a container: %v", err)
	}
	if data, err := os.ReadFile(marker); err == nil {
		t.Fatalf("the recipe's command ran on the host: %q", data)
	}
	out, err := exec.CommandContext(ctx, "docker", "run", "--rm", "--network", "none", ref).CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "hello from the recipe" {
		t.Errorf("running the built program: %v: %q", err, out)
	}
	// The program was built by the host's Go, not the one the toolchain
	// line and go.env name.
	app := filepath.Join(t.TempDir(), "app")
	cid, err := exec.CommandContext(ctx, "docker", "create", ref).Output()
	if err != nil {
		t.Fatal(err)
	}
	id := strings.TrimSpace(string(cid))
	defer exec.Command("docker", "rm", "-f", id).Run()
	if out, err := exec.CommandContext(ctx, "docker", "cp", id+":/app", app).CombinedOutput(); err != nil {
		t.Fatalf("docker cp: %v: %s", err, out)
	}
	out, err = exec.CommandContext(ctx, "go", "version", app).CombinedOutput()
	if err != nil || !strings.Contains(string(out), ": "+tc.version) {
		t.Errorf("go version of the program: %v: %q, want %s", err, out, tc.version)
	}
}

// A lab's docker build has no network: a build step sees only a loopback
// interface, and cannot connect to a listener on the host's; ADD of a URL
// (which the builder itself would fetch, from the host) is refused before
// the builder is asked, and the host's listener sees no request.
func TestE2EWorkloadBuildIsOffline(t *testing.T) {
	ctx := e2eContext(t)
	var hits atomic.Int32
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "payload\n")
	})}
	go srv.Serve(countingListener{ln, &hits})
	t.Cleanup(func() { srv.Close() })
	port := ln.Addr().(*net.TCPAddr).Port

	labDir := t.TempDir()
	writeRecipe(t, labDir, map[string]string{
		"run/Dockerfile": fmt.Sprintf("ARG BASE_IMAGE\nFROM ${BASE_IMAGE}\n"+
			"RUN ls /sys/class/net > /interfaces\n"+
			"RUN bash -c 'if exec 3<>/dev/tcp/127.0.0.1/%d; then echo connected; else echo refused; fi' > /tcp 2>/dev/null\n", port),
		"add/Dockerfile": fmt.Sprintf("FROM scratch\nADD http://127.0.0.1:%d/payload /payload\n", port),
	})
	ref := fmt.Sprintf("labctl.local/e2e-offline-%d:1", time.Now().UnixNano()%100000)
	removeImage(t, ref)
	if _, err := EnsureWorkloads(ctx, e2eOptions(t), labWithImages(lab.Image{Name: ref, Build: "run"}), labDir); err != nil {
		t.Fatalf("building the recipe: %v", err)
	}
	out, err := exec.CommandContext(ctx, "docker", "run", "--rm", "--network", "none", ref, "cat", "/interfaces", "/tcp").CombinedOutput()
	if err != nil || strings.Join(strings.Fields(string(out)), " ") != "lo refused" {
		t.Errorf("the build step's interfaces and connection: %v: %q, want only lo, refused", err, out)
	}

	addRef := ref + "-add"
	removeImage(t, addRef)
	_, err = EnsureWorkloads(ctx, e2eOptions(t), labWithImages(lab.Image{Name: addRef, Build: "add"}), labDir)
	want := fmt.Sprintf("line 2: ADD http://127.0.0.1:%d/payload makes the builder fetch it from the network, outside the build's containers: put the file into the recipe's directory and COPY it", port)
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("ADD of a URL: %v\nwant %s", err, want)
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the host's loopback listener saw %d connections from the builds", n)
	}
}

// countingListener counts the connections it accepts.
type countingListener struct {
	net.Listener
	n *atomic.Int32
}

func (l countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.n.Add(1)
	}
	return c, err
}

// The debug-rollout lab's web image builds from its recipe (in a container,
// offline) and its program runs.
func TestE2EWorkloadDebugRollout(t *testing.T) {
	ctx := e2eContext(t)
	l, err := lab.Load("../labs/debug-rollout/lab.yaml")
	if err != nil {
		t.Fatal(err)
	}
	ref := l.Cluster.Images[0].Name
	exec.Command("docker", "rmi", "-f", ref).Run()
	got, err := EnsureWorkloads(ctx, e2eOptions(t), l, "../labs/debug-rollout")
	if err != nil || len(got) != 1 || got[0] != ref {
		t.Fatalf("EnsureWorkloads = %v, %v", got, err)
	}
	out, err := exec.CommandContext(ctx, "docker", "run", "--rm", "--network", "none", ref).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "GREETING") {
		t.Errorf("the web app without GREETING: %v: %q, want it to exit naming GREETING", err, out)
	}
}
