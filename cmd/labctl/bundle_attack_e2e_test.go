//go:build e2e

package main

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/labctl/labctl/cmd/labctl/e2etest"
	"github.com/labctl/labctl/images"
	"github.com/labctl/labctl/internal/bundle"
	"github.com/labctl/labctl/usecase/labstore"
)

// attackWeb is the workload image of the forged bundles.
const attackWeb = "labctl.local/e2e-attack-web:1"

// attackLab is a lab with one workload image built from images/web.
const attackLab = `apiVersion: labctl.dev/v1alpha1
kind: Lab
metadata:
  name: attack
  title: An attack
  language: en
cluster:
  namespaces: [attack]
  images:
    - name: ` + attackWeb + `
      build: images/web
steps:
  - id: hello
    title: Say hello
    instructions: Write hello to /root/hello.txt.
    checks:
      - name: hello-file
        file:
          path: /root/hello.txt
          equals: hello
    solve: echo hello > /root/hello.txt
`

// forgeBundle writes a bundle of attackLab, with its genuine digest, whose
// manifest names attackWeb and whose images.tar is a real `docker save`
// tar of one small image tagged tags.
func forgeBundle(t *testing.T, tags ...string) string {
	t.Helper()
	src := t.TempDir()
	for name, body := range map[string]string{
		"lab.yaml":              attackLab,
		"images/web/Dockerfile": "FROM scratch\nCOPY hello /hello\n",
	} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(src, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(src, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	read, _, err := labstore.Read(filepath.Join(src, "lab.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	files, digest := labstore.Files(read), labstore.DigestOf(read)
	cfg := e2etest.ImageConfig("attack")
	file := filepath.Join(t.TempDir(), "attack.labctl.tar")
	f, err := os.Create(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	_, err = bundle.Write(context.Background(), f, bundle.WriteOptions{
		LabDir: src, Files: files, Lab: bundle.Lab{Name: "attack", Digest: digest}, Labctl: "e2e",
		Images: []bundle.Image{{Ref: attackWeb, ID: e2etest.ImageID(cfg)}},
		SaveImages: func(_ context.Context, w io.Writer) error {
			_, err := w.Write(e2etest.DockerSave(e2etest.SavedImage{Config: cfg, Tags: tags}))
			return err
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return file
}

// imageID is ref's ID in the engine, "" when it has none.
func imageID(t *testing.T, ref string) string {
	t.Helper()
	out, err := exec.Command("docker", "image", "inspect", "--format", "{{.Id}}", ref).CombinedOutput()
	if err != nil {
		if strings.Contains(string(out), "No such image") {
			return ""
		}
		t.Fatalf("docker image inspect %s: %v\n%s", ref, err, out)
	}
	return strings.TrimSpace(string(out))
}

func removeImage(t *testing.T, ref string) {
	t.Helper()
	if out, err := exec.Command("docker", "image", "rm", ref).CombinedOutput(); err != nil && !strings.Contains(string(out), "No such image") {
		t.Fatalf("docker image rm %s: %v\n%s", ref, err, out)
	}
}

// TestE2EBundleNeverReplacesLabctlImages installs, with the real engine,
// a bundle with the genuine digest whose images.tar (a real `docker save`
// tar that the engine would load) also tags labctl's node and sandbox
// images: refused before `docker load`, and both keep their IDs (or stay
// absent). The same bundle without the extra tags installs and loads the
// lab's image; over another image of that name it is refused, and that
// image is kept.
//
//	go test -tags e2e ./cmd/labctl/ -run TestE2EBundleNeverReplacesLabctlImages -v
func TestE2EBundleNeverReplacesLabctlImages(t *testing.T) {
	bin := e2etest.BuildLabctl(t)
	work := t.TempDir()
	labs := filepath.Join(work, "labs")
	r := e2etest.NewLabctl(t, bin, "", filepath.Join(work, "state"), "LABCTL_LABS_DIR="+labs, "NO_COLOR=1", "LC_ALL=", "LC_MESSAGES=", "LANG=en_US.UTF-8")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	removeImage(t, attackWeb)
	t.Cleanup(func() { removeImage(t, attackWeb) })

	own := []string{images.NodeRef(), images.SandboxRef()}
	before := map[string]string{}
	for _, ref := range own {
		before[ref] = imageID(t, ref)
	}
	trojan := forgeBundle(t, attackWeb, images.NodeRef(), images.SandboxRef())
	code, out, errOut := r.Run(ctx, "install", trojan)
	if code == 0 || out != "" || !strings.Contains(errOut, "labctl's own") || !strings.Contains(errOut, "nothing was installed") {
		t.Errorf("install of the trojan: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	for _, ref := range own {
		if id := imageID(t, ref); id != before[ref] {
			t.Errorf("%s is now %q, was %q", ref, id, before[ref])
		}
	}
	if id := imageID(t, attackWeb); id != "" {
		t.Errorf("the refused bundle loaded %s (%s)", attackWeb, id)
	}
	if entries, _ := os.ReadDir(labs); len(entries) != 1 {
		t.Errorf("the refused install left %d entries in the labs directory, want the lock alone", len(entries))
	}

	// The genuine bundle installs and loads the lab's image.
	genuine := forgeBundle(t, attackWeb)
	out = r.Must(5*time.Minute, "install", genuine)
	if !strings.HasPrefix(out, "installed attack (An attack) from "+genuine+"; loaded 1 image: "+attackWeb) {
		t.Errorf("install of the genuine bundle printed %q", out)
	}
	if id := imageID(t, attackWeb); id != e2etest.ImageID(e2etest.ImageConfig("attack")) {
		t.Errorf("after install %s is %q", attackWeb, id)
	}

	// Another image under the lab's image's name is kept.
	removeImage(t, attackWeb)
	if out, err := exec.Command("docker", "tag", images.NodeRef(), attackWeb).CombinedOutput(); err != nil {
		// Without a node image, any image of the engine will do.
		list, lerr := exec.Command("docker", "image", "ls", "--format", "{{.ID}}").Output()
		ids := strings.Fields(string(list))
		if lerr != nil || len(ids) == 0 {
			t.Fatalf("docker tag: %v\n%s; and no image to tag instead", err, out)
		}
		if out, err := exec.Command("docker", "tag", ids[0], attackWeb).CombinedOutput(); err != nil {
			t.Fatalf("docker tag %s %s: %v\n%s", ids[0], attackWeb, err, out)
		}
	}
	mineID := imageID(t, attackWeb)
	code, out, errOut = r.Run(ctx, "install", "--force", genuine)
	if code == 0 || !strings.Contains(errOut, "has another image named "+attackWeb) || !strings.Contains(errOut, "docker rmi "+attackWeb) {
		t.Errorf("install over another image of the name: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if id := imageID(t, attackWeb); id != mineID {
		t.Errorf("%s is now %q, was %q", attackWeb, id, mineID)
	}
}
