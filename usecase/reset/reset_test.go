package reset

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"github.com/labctl/labctl/grading"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/labctl/labctl/grading/progress"
	"github.com/labctl/labctl/internal/msg"
	"github.com/labctl/labctl/lab"
)

// fakeEnv records every call in order. A script "exit N" exits N; fail
// names a method that returns an error. The sandbox and the namespaces are
// reset at once, so they are recorded in a fixed order: "sandbox
// namespaces".
type fakeEnv struct {
	mu    sync.Mutex
	calls []string
	fail  string
}

func (f *fakeEnv) call(name string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, name)
	if n := len(f.calls); n > 1 && f.calls[n-2] == "namespaces" && name == "sandbox" {
		f.calls[n-2], f.calls[n-1] = "sandbox", "namespaces"
	}
	if f.fail == name {
		return fmt.Errorf("%s broke", name)
	}
	return nil
}

func (f *fakeEnv) BackupHome(_ context.Context, w io.Writer) error {
	if err := f.call("backup"); err != nil {
		w.Write([]byte("half a tar"))
		return err
	}
	tw := tar.NewWriter(w)
	body := "echo hi\n"
	tw.WriteHeader(&tar.Header{Name: "root/notes.sh", Mode: 0o644, Size: int64(len(body))})
	tw.Write([]byte(body))
	return tw.Close()
}

func (f *fakeEnv) RecreateSandbox(context.Context) error { return f.call("sandbox") }
func (f *fakeEnv) ResetNamespaces(context.Context) error { return f.call("namespaces") }
func (f *fakeEnv) RecreateCluster(context.Context) error { return f.call("cluster") }

// RunScripts runs each script with RunScript, in order, as the sandbox does
// in one exec.
func (f *fakeEnv) RunScripts(ctx context.Context, scripts []string, stdout, stderr io.Writer, started func(int)) (int, int, error) {
	for i, s := range scripts {
		started(i)
		code, err := f.RunScript(ctx, s, stdout, stderr)
		if err != nil {
			return -1, code, err
		}
		if code != 0 {
			return i, code, nil
		}
	}
	return -1, 0, nil
}

func (f *fakeEnv) RunScript(_ context.Context, script string, stdout, _ io.Writer) (int, error) {
	if err := f.call("script:" + script); err != nil {
		return -1, err
	}
	fmt.Fprintf(stdout, "ran %s\n", script)
	var code int
	if _, err := fmt.Sscanf(script, "exit %d", &code); err == nil {
		return code, nil
	}
	return 0, nil
}

type recorder struct{ lines []string }

func (r *recorder) Start(msg string) { r.lines = append(r.lines, "start "+msg) }
func (r *recorder) End(ok bool)      { r.lines = append(r.lines, fmt.Sprintf("end %v", ok)) }

func testLab() *lab.Lab {
	return &lab.Lab{
		Metadata: lab.Metadata{Name: "lab1"},
		Steps: []lab.Step{
			{ID: "one", Setup: "setup-one", Solve: "solve-one"},
			{ID: "two", Solve: "solve-two"},
			{ID: "three", Setup: "setup-three", Solve: "solve-three"},
		},
	}
}

func options(t *testing.T) Options {
	at := time.Date(2026, 11, 30, 7, 8, 9, 0, time.UTC)
	return Options{
		Lab:   testLab(),
		Store: progress.NewStore(t.TempDir()),
		Now:   func() time.Time { return at },
	}
}

func seedProgress(t *testing.T, o Options) {
	t.Helper()
	p := progress.New("lab1")
	l := o.Lab
	p.Record(l, "one", true, time.Now())
	p.Record(l, "two", true, time.Now())
	p.AddGrade(progress.Grade{Time: time.Now(), Score: 2, MaxScore: 3})
	if err := o.Store.Save(p); err != nil {
		t.Fatal(err)
	}
}

func TestResetOrder(t *testing.T) {
	o := options(t)
	seedProgress(t, o)
	rec := &recorder{}
	o.Status = rec
	env := &fakeEnv{}
	res, err := Run(context.Background(), env, o)
	if err != nil {
		t.Fatal(err)
	}
	want := "backup sandbox namespaces script:setup-one"
	if got := strings.Join(env.calls, " "); got != want {
		t.Errorf("calls %q, want %q", got, want)
	}
	wantPath := filepath.Join(o.Store.Dir(), "backups", "root-20261130T070809Z.tar")
	if res.Backup != wantPath {
		t.Errorf("backup %q, want %q", res.Backup, wantPath)
	}
	f, err := os.Open(res.Backup)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	hdr, err := tar.NewReader(f).Next()
	if err != nil || hdr.Name != "root/notes.sh" {
		t.Errorf("backup tar: %v %v", hdr, err)
	}
	if res.Current.ID != "one" {
		t.Errorf("current %s, want one", res.Current.ID)
	}
	p, _ := o.Store.Load("lab1")
	if len(p.Passed) != 0 || p.Current != "" || len(p.Grades) != 1 {
		t.Errorf("progress after reset: %+v", p)
	}
	if len(rec.lines) != 6 || rec.lines[0] != "start Saving your /root" || strings.Contains(strings.Join(rec.lines, ","), "false") {
		t.Errorf("status lines %q", rec.lines)
	}
}

func TestResetHardRecreatesTheCluster(t *testing.T) {
	o := options(t)
	o.Hard = true
	env := &fakeEnv{}
	if _, err := Run(context.Background(), env, o); err != nil {
		t.Fatal(err)
	}
	want := "backup cluster"
	if got := strings.Join(env.calls, " "); got != want {
		t.Errorf("calls %q, want %q (the fresh environment ran the first setup)", got, want)
	}

	o = options(t)
	o.Hard = true
	o.To = "three"
	env = &fakeEnv{}
	if _, err := Run(context.Background(), env, o); err != nil {
		t.Fatal(err)
	}
	want = "backup cluster script:solve-one script:solve-two script:setup-three"
	if got := strings.Join(env.calls, " "); got != want {
		t.Errorf("hard --to: calls %q, want %q", got, want)
	}
}

func TestResetToReplaysEarlierSteps(t *testing.T) {
	o := options(t)
	o.To = "three"
	var out bytes.Buffer
	o.ScriptOutput = &out
	env := &fakeEnv{}
	res, err := Run(context.Background(), env, o)
	if err != nil {
		t.Fatal(err)
	}
	want := "backup sandbox namespaces script:setup-one script:solve-one script:solve-two script:setup-three"
	if got := strings.Join(env.calls, " "); got != want {
		t.Errorf("calls %q, want %q", got, want)
	}
	if !strings.Contains(out.String(), "ran solve-two") {
		t.Errorf("script output not passed through: %q", out.String())
	}
	p, _ := o.Store.Load("lab1")
	if p.Current != "three" || !p.IsPassed("one") || !p.IsPassed("two") || p.IsPassed("three") || res.Current.ID != "three" {
		t.Errorf("progress after --to three: %+v", p)
	}
}

func TestResetWithoutBackupSavesNothing(t *testing.T) {
	o := options(t)
	o.NoBackup = true
	o.To = "two"
	env := &fakeEnv{}
	res, err := Run(context.Background(), env, o)
	if err != nil {
		t.Fatal(err)
	}
	want := "sandbox namespaces script:setup-one script:solve-one"
	if got := strings.Join(env.calls, " "); got != want {
		t.Errorf("calls %q, want %q", got, want)
	}
	if res.Backup != "" {
		t.Errorf("backup %q made without one asked for", res.Backup)
	}
	if _, err := os.Stat(filepath.Join(o.Store.Dir(), "backups")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("backups directory: %v, want none", err)
	}
}

func TestResetToFailsLoudlyOnAFailingSolve(t *testing.T) {
	o := options(t)
	o.To = "three"
	o.Lab.Steps[1].Solve = "exit 7"
	env := &fakeEnv{}
	_, err := Run(context.Background(), env, o)
	var se *grading.ScriptError
	if !errors.As(err, &se) || se.Code != 7 || se.Step != "two" || se.Kind != "solve" {
		t.Fatalf("err = %v, want the solve script of two exiting 7", err)
	}
	if !strings.Contains(err.Error(), "ran exit 7") {
		t.Errorf("the error must carry the script's output: %v", err)
	}
	if !strings.Contains(err.Error(), "`labctl reset --to three` runs it again") {
		t.Errorf("the error must say what runs the script again: %v", err)
	}
	if last := env.calls[len(env.calls)-1]; last != "script:exit 7" {
		t.Errorf("went on after the failing script: %v", env.calls)
	}
	p, _ := o.Store.Load("lab1")
	if p.Current == "three" {
		t.Errorf("progress must not claim step three after a failed replay")
	}
}

func TestResetUnknownStepTouchesNothing(t *testing.T) {
	o := options(t)
	o.To = "four"
	env := &fakeEnv{}
	_, err := Run(context.Background(), env, o)
	if err == nil || !strings.Contains(err.Error(), `no step "four"`) {
		t.Errorf("err = %v", err)
	}
	if len(env.calls) != 0 {
		t.Errorf("an unknown step must stop before anything runs: %v", env.calls)
	}
}

func TestResetFailedBackupDestroysNothing(t *testing.T) {
	o := options(t)
	seedProgress(t, o)
	env := &fakeEnv{fail: "backup"}
	_, err := Run(context.Background(), env, o)
	if err == nil || !strings.Contains(err.Error(), "nothing was reset") {
		t.Fatalf("err = %v", err)
	}
	if strings.Join(env.calls, " ") != "backup" {
		t.Errorf("calls after a failed backup: %v", env.calls)
	}
	entries, _ := os.ReadDir(filepath.Join(o.Store.Dir(), "backups"))
	if len(entries) != 0 {
		t.Errorf("a failed backup left %d files", len(entries))
	}
	p, _ := o.Store.Load("lab1")
	if !p.IsPassed("two") {
		t.Errorf("progress was reset after a failed backup")
	}
}

func TestResetStopsAtFirstFailure(t *testing.T) {
	for _, stage := range []string{"sandbox", "namespaces", "cluster"} {
		o := options(t)
		o.Hard = stage == "cluster"
		env := &fakeEnv{fail: stage}
		_, err := Run(context.Background(), env, o)
		if err == nil || !strings.Contains(err.Error(), stage+" broke") {
			t.Errorf("%s: err = %v", stage, err)
		}
		if last := env.calls[len(env.calls)-1]; strings.HasPrefix(last, "script:") {
			t.Errorf("%s: went on after the failure: %v", stage, env.calls)
		}
	}
}

// barrierEnv makes the sandbox and the namespaces each wait until the
// other has begun: a reset that does one after the other never finishes.
type barrierEnv struct {
	fakeEnv
	sandbox, namespaces chan struct{}
	failNamespaces      bool
}

func (b *barrierEnv) meet(ctx context.Context, mine, theirs chan struct{}) error {
	close(mine)
	select {
	case <-theirs:
		return nil
	case <-ctx.Done():
		return errors.New("the other part of the reset never began")
	}
}

func (b *barrierEnv) RecreateSandbox(ctx context.Context) error {
	return errors.Join(b.meet(ctx, b.sandbox, b.namespaces), b.fakeEnv.RecreateSandbox(ctx))
}

func (b *barrierEnv) ResetNamespaces(ctx context.Context) error {
	err := b.meet(ctx, b.namespaces, b.sandbox)
	if b.failNamespaces {
		err = errors.Join(err, errors.New("namespaces broke"))
	}
	return errors.Join(err, b.fakeEnv.ResetNamespaces(ctx))
}

func TestResetRecreatesSandboxAndNamespacesAtOnce(t *testing.T) {
	for _, failNamespaces := range []bool{false, true} {
		o := options(t)
		env := &barrierEnv{sandbox: make(chan struct{}), namespaces: make(chan struct{}), failNamespaces: failNamespaces}
		// The deadline only ends a reset that would otherwise hang.
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		_, err := Run(ctx, env, o)
		cancel()
		if failNamespaces {
			if err == nil || !strings.Contains(err.Error(), "recreating the lab's namespaces: namespaces broke") {
				t.Errorf("err = %v, want the namespaces' failure", err)
			}
			if strings.Contains(strings.Join(env.calls, " "), "script:") {
				t.Errorf("scripts ran after a failed reset: %v", env.calls)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(env.calls, " "); got != "backup sandbox namespaces script:setup-one" {
			t.Errorf("calls %q", got)
		}
	}
}

func TestResetRepairsCorruptProgress(t *testing.T) {
	o := options(t)
	if err := os.MkdirAll(o.Store.Dir(), 0o700); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(o.Store.Path(), []byte("{broken"), 0o600)
	if _, err := Run(context.Background(), &fakeEnv{}, o); err != nil {
		t.Fatal(err)
	}
	if _, err := o.Store.Load("lab1"); err != nil {
		t.Errorf("after reset the progress must load: %v", err)
	}
}

// TestResetSpeaksTheCatalogsLanguage: with a Japanese catalogue every
// stage, scripts included, is a Japanese line; the step's id stays as it is.
func TestResetSpeaksTheCatalogsLanguage(t *testing.T) {
	o := options(t)
	seedProgress(t, o)
	rec := &recorder{}
	o.Status, o.Catalog, o.To = rec, msg.New(msg.Japanese), "two"
	if _, err := Run(context.Background(), &fakeEnv{}, o); err != nil {
		t.Fatal(err)
	}
	var starts []string
	for _, l := range rec.lines {
		if s, ok := strings.CutPrefix(l, "start "); ok {
			starts = append(starts, s)
		}
	}
	want := []string{
		"/root を保存しています",
		"サンドボックスとラボのネームスペースを作り直しています",
		"ステップ one の準備スクリプトを実行しています",
	}
	if len(starts) < len(want)+1 || !slices.Equal(starts[:len(want)], want) {
		t.Fatalf("status lines %q, want them to begin with %q", starts, want)
	}
	for _, s := range starts {
		if strings.Contains(s, "Running") || strings.Contains(s, "Saving") {
			t.Errorf("an English status line in a Japanese reset: %q", s)
		}
	}
}

// restoringEnv is a fakeEnv that can restore its sandbox in place when can
// is set.
type restoringEnv struct {
	fakeEnv
	can      bool
	restores int
	notes    int
}

func (r *restoringEnv) NotePristine(context.Context) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.notes++
}

func (r *restoringEnv) RestoreSandbox(context.Context) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.restores++
	return r.can
}

func TestResetInPlaceKeepsTheSandboxOnlyWhenAskedAndAble(t *testing.T) {
	for _, c := range []struct {
		name         string
		inPlace, can bool
		want         string
		// restores and notes are how often the sandbox was asked to be
		// restored in place and kept after a recreate.
		restores, notes int
	}{
		{"in place", true, true, "namespaces script:setup-one", 1, 0},
		{"in place refused", true, false, "sandbox namespaces script:setup-one", 1, 1},
		// A learner's reset never asks, and keeps nothing: root in the
		// sandbox can leave more behind than a restore in place looks at.
		{"a learner's reset", false, true, "sandbox namespaces script:setup-one", 0, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := options(t)
			o.NoBackup, o.InPlace = true, c.inPlace
			env := &restoringEnv{can: c.can}
			if _, err := Run(context.Background(), env, o); err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(env.calls, " "); got != c.want {
				t.Errorf("calls %q, want %q", got, c.want)
			}
			if env.restores != c.restores || env.notes != c.notes {
				t.Errorf("%d restores asked for and %d sandboxes kept, want %d and %d", env.restores, env.notes, c.restores, c.notes)
			}
		})
	}
}

// checkpointEnv is a restoringEnv that keeps step starts (Checkpointer);
// its restores succeed when back is set.
type checkpointEnv struct {
	restoringEnv
	back bool
}

func (c *checkpointEnv) Checkpoint(_ context.Context, step string) {
	_ = c.call("checkpoint:" + step)
}

func (c *checkpointEnv) RestoreCheckpoint(_ context.Context, step string) bool {
	_ = c.call("back-to:" + step)
	return c.back
}

// TestResetGoesBackToTheStepsCheckpoint: labctl test's reset to a step goes
// back to the step's kept start when the environment can, replaying nothing,
// and keeps one after a full reset; the progress is the same either way. A
// learner's reset, a reset to the lab's start and a hard one never ask.
func TestResetGoesBackToTheStepsCheckpoint(t *testing.T) {
	for _, c := range []struct {
		name          string
		to            string
		inPlace, hard bool
		back          bool
		want          string
	}{
		{"back", "three", true, false, true, "back-to:three"},
		{"cannot go back", "three", true, false, false,
			"back-to:three namespaces script:setup-one script:solve-one script:solve-two script:setup-three checkpoint:three"},
		{"a learner's reset", "three", false, false, true,
			"sandbox namespaces script:setup-one script:solve-one script:solve-two script:setup-three"},
		{"to the lab's start", "", true, false, true, "namespaces script:setup-one"},
		{"hard", "three", true, true, true, "cluster script:solve-one script:solve-two script:setup-three"},
		// A node keeps what a case did there: the step's setup runs again
		// after the kept start is back.
		{"node lab back", "three", true, false, true, "back-to:three script:setup-three"},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := options(t)
			seedProgress(t, o)
			o.Lab.Cluster.NodeAccess = c.name == "node lab back"
			o.NoBackup, o.InPlace, o.To, o.Hard = true, c.inPlace, c.to, c.hard
			env := &checkpointEnv{restoringEnv: restoringEnv{can: true}, back: c.back}
			res, err := Run(context.Background(), env, o)
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(env.calls, " "); got != c.want {
				t.Errorf("calls %q, want %q", got, c.want)
			}
			p, _ := o.Store.Load("lab1")
			if p.Grades == nil || len(p.Grades) != 1 {
				t.Errorf("grades %+v, want the one kept", p.Grades)
			}
			if c.to == "three" && (p.Current != "three" || !p.IsPassed("two") || p.IsPassed("three") || res.Current.ID != "three") {
				t.Errorf("progress after a reset to three: %+v", p)
			}
		})
	}
}
