package labwatch

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/labctl/labctl/lab"
)

const minimal = `apiVersion: labctl.dev/v1alpha1
kind: Lab
metadata:
  name: minimal
cluster:
  namespaces: [shop]
steps:
  - id: hello
    title: TITLE
    instructions: Write "hello" to /root/hello.txt.
    checks:
      - name: hello-file
        file: {path: /root/hello.txt, equals: hello}
    solve: echo hello > /root/hello.txt
`

// TestWatcher: each edit of the file is reported once: a good one with
// the lab, one that does not load or that changes the cluster with an
// error, and an edit back to bytes seen before not at all.
func TestWatcher(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "lab.yaml")
	write := func(s string) {
		t.Helper()
		// As editors save: a new file renamed over the old one.
		tmp := file + ".tmp"
		if err := os.WriteFile(tmp, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, file); err != nil {
			t.Fatal(err)
		}
	}
	write(strings.Replace(minimal, "TITLE", "Say hello", 1))
	running, err := lab.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	w := &Watcher{File: file, Running: running, Loaded: Sum(raw), Interval: 5 * time.Millisecond, Load: func() (*lab.Lab, string, error) {
		l, err := lab.Load(file)
		if err != nil {
			return nil, "", err
		}
		raw, err := os.ReadFile(file)
		if err != nil {
			return nil, "", err
		}
		d, err := lab.Digest(raw, nil)
		return l, d, err
	}}
	changes := make(chan Change, 16)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go w.Run(ctx, func(c Change) { changes <- c })
	next := func(what string) Change {
		t.Helper()
		select {
		case c := <-changes:
			return c
		case <-time.After(10 * time.Second):
			t.Fatalf("no change reported after %s", what)
			return Change{}
		}
	}

	write(strings.Replace(minimal, "TITLE", "Say hello again", 1))
	if c := next("a new title"); c.Err != nil || c.Lab == nil || c.Lab.Steps[0].Title != "Say hello again" || c.Digest == "" {
		t.Errorf("a new title: %+v", c)
	}
	write(strings.Replace(minimal, "TITLE", "[unclosed", 1))
	if c := next("broken YAML"); c.Err == nil || c.Lab != nil {
		t.Errorf("broken YAML: %+v, want an error and no lab", c)
	}
	write(strings.Replace(strings.Replace(minimal, "TITLE", "Say hello", 1), "[shop]", "[shop, more]", 1))
	if c := next("another namespace"); c.Err == nil || !strings.Contains(c.Err.Error(), "cluster") || !strings.Contains(c.Err.Error(), "labctl up") {
		t.Errorf("another namespace: %+v, want an error naming the cluster and labctl up", c)
	}
	write(strings.Replace(minimal, "TITLE", "Say hello again", 1))
	if c := next("the title again"); c.Err != nil || c.Lab == nil {
		t.Errorf("the title again: %+v", c)
	}
	write(strings.Replace(minimal, "TITLE", "Say hello again", 1))
	select {
	case c := <-changes:
		t.Errorf("the same bytes saved again were reported: %+v", c)
	case <-time.After(100 * time.Millisecond):
	}
}

// TestNeedsUp: steps and texts change freely; a check that reads an object
// the grader was not granted, or a first probe, needs labctl up, and
// reading less does not.
func TestNeedsUp(t *testing.T) {
	parse := func(extra string) *lab.Lab {
		t.Helper()
		l, err := lab.Parse("lab.yaml", []byte(strings.Replace(minimal, "TITLE", "Say hello", 1)+extra))
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	kube := func(name string) string {
		return `  - id: ` + name + `
    title: Look
    instructions: Look at shop/` + name + `.
    checks:
      - name: cm
        kube: {apiVersion: v1, kind: ConfigMap, namespace: shop, name: ` + name + `}
    solve: kubectl -n shop create configmap ` + name + `
`
	}
	running := parse(kube("a"))
	for _, tc := range []struct {
		name, extra string
		want        string
	}{
		{"the same", kube("a"), ""},
		{"reading less", "", ""},
		{"another object", kube("b"), "the objects its checks read"},
		{"a first probe", kube("a") + "    probe: {run: 'true'}\n", "a probe"},
	} {
		got := strings.Join(NeedsUp(running, parse(tc.extra)), "; ")
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("%s: NeedsUp says %q, want %q", tc.name, got, tc.want)
		}
	}
}
