package grading

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/labctl/labctl/checks"
	"github.com/labctl/labctl/grading/progress"
	"github.com/labctl/labctl/internal/msg"
	"github.com/labctl/labctl/lab"
)

// localChecker runs checks with the real check engine against a directory
// standing in for the sandbox's file system.
type localChecker struct{ root string }

func (c localChecker) RunChecks(ctx context.Context, r checks.Round) ([]checks.Result, error) {
	return checks.Run(ctx, checks.Env{Root: c.root, ProbeStart: r.ProbeStart}, r.Checks), nil
}

const notesLab = `apiVersion: labctl.dev/v1alpha1
kind: Lab
metadata:
  name: notes
  title: Notes
  language: ja
steps:
  - id: write
    title: メモを書く
    instructions: Write /root/notes.txt.
    solve: echo hello > /root/notes.txt
    checks:
      - name: exists
        description: /root/notes.txt がある
        file: {path: /root/notes.txt}
      - name: greets
        points: 2
        file: {path: /root/notes.txt, contains: [hello]}
  - id: script
    title: Make a script
    instructions: Write /root/run.sh and make it executable.
    solve: printf '#!/bin/sh\n' > /root/run.sh && chmod +x /root/run.sh
    checks:
      - name: executable
        file: {path: /root/run.sh, executable: true}
      - name: shebang
        optional: true
        file: {path: /root/run.sh, matches: ["^#!"]}
`

// TestLocalLab drives Check and Grade with the real lab loader, the real
// check engine on real files, and the real progress store.
func TestLocalLab(t *testing.T) {
	l, err := lab.Parse("lab.yaml", []byte(notesLab))
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	home := filepath.Join(root, "root")
	if err := os.MkdirAll(home, 0o755); err != nil {
		t.Fatal(err)
	}
	digest, err := lab.Digest([]byte(notesLab), nil)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	s := &Grader{
		Lab: l, Digest: digest, Store: progress.NewStore(t.TempDir()),
		Checker: localChecker{root: root}, Catalog: msg.New(msg.Japanese),
		Out: &out, Err: &bytes.Buffer{},
	}
	ctx := context.Background()

	v, err := s.Check(ctx, "")
	if err != nil || v != Failed {
		t.Fatalf("before any work: %v, %v\n%s", v, err, out.String())
	}
	if !strings.Contains(out.String(), "✗ exists: /root/notes.txt がある") || !strings.Contains(out.String(), "ステップはまだ完了していません: メモを書く") {
		t.Errorf("output:\n%s", out.String())
	}

	os.WriteFile(filepath.Join(home, "notes.txt"), []byte("goodbye\n"), 0o644)
	out.Reset()
	if v, _ := s.Check(ctx, ""); v != Failed || !strings.Contains(out.String(), "✓ exists") || !strings.Contains(out.String(), "✗ greets") {
		t.Errorf("half done: %v\n%s", v, out.String())
	}

	os.WriteFile(filepath.Join(home, "notes.txt"), []byte("hello\n"), 0o644)
	out.Reset()
	if v, _ := s.Check(ctx, ""); v != Passed || !strings.Contains(out.String(), "次はステップ 2/2: Make a script") {
		t.Errorf("step done: %v\n%s", v, out.String())
	}

	r, v, err := s.Grade(ctx)
	if err != nil || v != Failed || r.Score != 3 || r.MaxScore != 5 {
		t.Fatalf("grade halfway: %v %v, score %d/%d", v, err, r.Score, r.MaxScore)
	}

	os.WriteFile(filepath.Join(home, "run.sh"), []byte("echo no shebang\n"), 0o755)
	out.Reset()
	if v, _ := s.Check(ctx, ""); v != Passed || !strings.Contains(out.String(), "全 2 ステップが完了しました") {
		t.Errorf("last step, optional check failing: %v\n%s", v, out.String())
	}
	r, v, _ = s.Grade(ctx)
	if v != Passed || !r.Passed || r.Score != 4 {
		t.Errorf("grade with the optional check failing: %v, passed %v, score %d", v, r.Passed, r.Score)
	}

	p, err := s.Store.Load("notes")
	if err != nil {
		t.Fatal(err)
	}
	if p.Attempts["write"] != 3 || p.Attempts["script"] != 1 || len(p.Grades) != 2 || p.Grades[1].Score != 4 || !p.Done(l) {
		t.Errorf("progress on disk: %+v", p)
	}
}

func TestRoundFailureIsWordedForTheLearner(t *testing.T) {
	s, _ := newGrader(t, &fakeChecker{err: errors.New("sandbox gone")})
	s.Catalog = msg.New(msg.Japanese)
	_, err := s.Check(context.Background(), "")
	if !IsEnvironmentError(err) || !strings.Contains(err.Error(), "チェックを実行できませんでした: sandbox gone") {
		t.Errorf("err = %v", err)
	}
}
