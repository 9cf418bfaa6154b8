package lab

import (
	"strings"
	"testing"
	"testing/fstest"
	"time"
)

func TestDigest(t *testing.T) {
	base := func() fstest.MapFS {
		return fstest.MapFS{
			"gitops/seed/deployment.yaml": {Data: []byte("kind: Deployment\n"), Mode: 0o644},
			"gitops/seed/service.yaml":    {Data: []byte("kind: Service\n"), Mode: 0o644},
			"bin/tool.sh":                 {Data: []byte("#!/bin/sh\n"), Mode: 0o755},
		}
	}
	labFile := []byte("apiVersion: labctl.dev/v1alpha1\n")
	d0, err := Digest(labFile, base())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(d0, "sha256:") || len(d0) != len("sha256:")+64 {
		t.Fatalf("digest %q is not sha256:<64 hex>", d0)
	}
	again, _ := Digest(labFile, base())
	if again != d0 {
		t.Errorf("the digest is not stable")
	}
	mtime := base()
	mtime["bin/tool.sh"].ModTime = time.Unix(1, 0)
	if d, _ := Digest(labFile, mtime); d != d0 {
		t.Errorf("a modification time changed the digest")
	}
	changes := map[string]func(fstest.MapFS){
		"content": func(m fstest.MapFS) { m["gitops/seed/service.yaml"].Data = []byte("kind: Service \n") },
		"rename": func(m fstest.MapFS) {
			m["gitops/seed/svc.yaml"] = m["gitops/seed/service.yaml"]
			delete(m, "gitops/seed/service.yaml")
		},
		"exec bit": func(m fstest.MapFS) { m["bin/tool.sh"].Mode = 0o644 },
		"new file": func(m fstest.MapFS) { m["extra"] = &fstest.MapFile{Data: nil} },
	}
	for name, change := range changes {
		m := base()
		change(m)
		if d, _ := Digest(labFile, m); d == d0 {
			t.Errorf("%s: the digest did not change", name)
		}
	}
	if d, _ := Digest(append(labFile, ' '), base()); d == d0 {
		t.Errorf("a changed lab file did not change the digest")
	}
	if d, _ := Digest(labFile, nil); d == d0 {
		t.Errorf("no fixtures must differ from some fixtures")
	}
}
