//go:build e2e

package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/labctl/labctl/cmd/labctl/e2etest"
	"github.com/labctl/labctl/internal/bundle"
)

// rolloutImage is the workload image of labs/debug-rollout.
const rolloutImage = "labctl.local/rollout-web:1"

// TestE2EBundle carries the repository's second lab to a labs directory
// through one bundle file, as a machine without a registry gets it: pack,
// the lab's workload image removed from the engine, install (which loads
// it back from the bundle), `--lab debug-rollout up` with its Pods
// serving, down, and `labctl test` of an answer of the installed lab's
// first step. The bundle holds the lab's workload image and none of
// labctl's own images (the node and sandbox images never travel in a
// lab's bundle).
//
//	flock /tmp/labctl-e2e.lock go test -tags e2e ./cmd/labctl/ -run TestE2EBundle -timeout 40m -v
func TestE2EBundle(t *testing.T) {
	root := e2etest.Root(t)
	bin := e2etest.BuildLabctl(t)
	work := t.TempDir()
	labs := filepath.Join(work, "labs")
	r := e2etest.NewLabctl(t, bin, "", filepath.Join(work, "state"),
		"LABCTL_LABS_DIR="+labs, "LABCTL_CHECKER_BINARY="+bin, "NO_COLOR=1", "LC_ALL=", "LC_MESSAGES=", "LANG=en_US.UTF-8")

	bundleFile := filepath.Join(work, "debug-rollout.labctl.tar")
	out := r.Must(15*time.Minute, "--lab", filepath.Join(root, "labs", "debug-rollout"), "pack", "--output-file", bundleFile)
	if strings.TrimSpace(out) != bundleFile {
		t.Fatalf("pack printed %q, want the bundle's path", out)
	}
	if info, err := os.Stat(bundleFile); err != nil || info.Size() < 1<<20 || info.Size() > 100<<20 {
		t.Fatalf("the bundle: %v, %v; want the lab's image in it, and no other", info, err)
	}
	manifest, _ := e2etest.TarEntry(t, bundleFile, bundle.ManifestName)
	var m bundle.Manifest
	if err := json.Unmarshal([]byte(manifest), &m); err != nil || !slices.Equal(m.ImageRefs(), []string{rolloutImage}) {
		t.Fatalf("the bundle's manifest names the images %q (%v), want %s alone", m.ImageRefs(), err, rolloutImage)
	}

	// The machine without the lab's image: install must bring it.
	if b, err := exec.Command("docker", "image", "rm", rolloutImage).CombinedOutput(); err != nil && !strings.Contains(string(b), "No such image") {
		t.Fatalf("docker image rm %s: %v\n%s", rolloutImage, err, b)
	}
	out = r.Must(15*time.Minute, "install", bundleFile)
	if !strings.HasPrefix(out, "installed debug-rollout (Debug a broken rollout, version 1) from "+bundleFile) || !strings.Contains(out, rolloutImage) {
		t.Errorf("install printed %q", out)
	}
	if b, err := exec.Command("docker", "image", "inspect", "--format", "{{.Id}}", rolloutImage).CombinedOutput(); err != nil {
		t.Fatalf("after install the engine lacks %s: %v\n%s", rolloutImage, err, b)
	}
	// The same bundle again changes nothing.
	if out := r.Must(10*time.Minute, "install", bundleFile); !strings.HasPrefix(out, "debug-rollout is already installed") {
		t.Errorf("install again printed %q", out)
	}

	lab := r.With(t)
	lab.Lab = "debug-rollout"
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	lab.UpFresh(ctx)

	// The lab's web Deployment serves from the image the bundle brought:
	// its v1 Pod is Ready while the broken v2 waits for the learner.
	ready := ""
	for deadline := time.Now().Add(3 * time.Minute); time.Now().Before(deadline); time.Sleep(2 * time.Second) {
		_, ready, _ = lab.Run(ctx, "exec", "--", "kubectl", "-n", "rollout", "get", "deployment", "web", "-o", "jsonpath={.status.readyReplicas}")
		if n, err := strconv.Atoi(strings.TrimSpace(ready)); err == nil && n >= 1 {
			break
		}
	}
	if n, err := strconv.Atoi(strings.TrimSpace(ready)); err != nil || n < 1 {
		t.Fatalf("deployment web has %q ready replicas, want at least 1", ready)
	}
	images := lab.Must(time.Minute, "exec", "--", "kubectl", "-n", "rollout", "get", "pods", "-o", "jsonpath={.items[*].spec.containers[*].image}")
	if !strings.Contains(images, rolloutImage) {
		t.Errorf("the lab's Pods run %q, want %s", images, rolloutImage)
	}
	// labs gives Docker a few seconds and says "?" for a lab it did not
	// hear about in time: on a loaded machine, ask again, for up to two
	// minutes.
	var row []string
	for end := time.Now().Add(2 * time.Minute); row == nil || (row[4] == "?" && time.Now().Before(end)); {
		if row != nil {
			time.Sleep(2 * time.Second)
		}
		row = nil
		for _, line := range strings.Split(r.Must(time.Minute, "labs"), "\n") {
			if f := strings.Fields(line); len(f) >= 6 && f[0] == "debug-rollout" {
				row = f
			}
		}
		if row == nil {
			t.Fatal("labs does not list debug-rollout")
		}
	}
	if row[3] != "0/5" || row[4] != "yes" || row[5] != bundleFile {
		t.Errorf("labs while the lab is up: %q, want progress 0/5, up yes, source %s", row, bundleFile)
	}
	lab.Must(10*time.Minute, "down", "--purge", "--no-backup")

	// The installed lab proves itself on an environment of its own, from
	// its first step: the step's checks fail at its start, and one of its
	// alternatives passes on the Pods of the image the bundle brought. The
	// whole lab (five steps, 39 answers, each later step's resets
	// replaying the solves before it) took 30 to 47 minutes here beside
	// another package's clusters, and its first step alone nine, more than
	// CI can give one test; `make test-labs` proves it whole.
	lab.Must(20*time.Minute, "test", "--step", "crash-loop", "--only", "configmap-edited-live-then-committed", "--timeout", "20m")
}
