package app

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/labctl/labctl/checks"
	"github.com/labctl/labctl/images"
	"github.com/labctl/labctl/internal/preflight"
	"github.com/labctl/labctl/lab"
	"github.com/labctl/labctl/provision"
	"github.com/labctl/labctl/provision/class"
	"github.com/labctl/labctl/provision/kind"
)

// fakeEnv is the machine as a command's unit test sets it: no Docker. A
// method the test did not prepare for panics through the nil embedded
// interface, which labctl reports as an internal error (exit 2).
type fakeEnv struct {
	environment

	// state is what Inspect reports; lab is the live lab Up and Connect
	// return (nil: Connect says the lab is not up).
	state kind.State
	lab   *fakeLab
	// upErr fails Up; findings are doctor's; imgs are the engine's images.
	upErr    error
	findings []preflight.Finding
	imgs     []images.Image
	// classClusters are the class clusters CreateClassCluster made, by
	// name; clusterErr fails it.
	classClusters map[string]*kind.ClassCluster
	clusterErr    error
	// class is the class OpenClass opens (class_test.go); nil is one with
	// learner-1 ready on lab.
	class *fakeClass

	mu    sync.Mutex
	calls []string // what the command asked for, in order
	// fixtures are the fixtures the last Up was given.
	fixtures fs.FS
}

func (f *fakeEnv) called(format string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, format)
}

func (f *fakeEnv) Up(_ context.Context, o kind.Options) (liveLab, error) {
	f.called("up " + o.Lab.Metadata.Name)
	f.fixtures = o.Fixtures
	if f.upErr != nil {
		return nil, f.upErr
	}
	if f.lab == nil {
		f.lab = newFakeLab(o.Lab)
	}
	f.state = upState()
	return f.lab, nil
}

func (f *fakeEnv) CreateClassCluster(_ context.Context, o kind.ClassClusterOptions) (*kind.ClassCluster, error) {
	f.called(fmt.Sprintf("class cluster create %s %d", o.Name, o.Workers))
	if f.clusterErr != nil {
		return nil, f.clusterErr
	}
	if c, ok := f.classClusters[o.Name]; ok {
		again := *c
		again.Created = false
		return &again, nil
	}
	if f.classClusters == nil {
		f.classClusters = map[string]*kind.ClassCluster{}
	}
	c := &kind.ClassCluster{Name: o.Name, Kubeconfig: "/state/" + o.Name + "/kubeconfig", Context: "kind-" + o.Name, Created: true, Workers: o.Workers}
	f.classClusters[o.Name] = c
	return c, nil
}

func (f *fakeEnv) DeleteClassCluster(_ context.Context, name string) (bool, error) {
	f.called("class cluster delete " + name)
	_, ok := f.classClusters[name]
	delete(f.classClusters, name)
	return ok, nil
}

func (f *fakeEnv) Connect(_ context.Context, up kind.Options) (liveLab, error) {
	f.called("connect " + up.Lab.Metadata.Name)
	if f.state.Stopped {
		return nil, fmt.Errorf("lab %s: %w", up.Lab.Metadata.Name, kind.ErrStopped)
	}
	if f.lab == nil {
		return nil, provision.ErrNotUp
	}
	return f.lab, nil
}

func (f *fakeEnv) OpenClass(_ context.Context, cfg class.Config) (classCluster, error) {
	f.called("open class " + cfg.Lab.Metadata.Name)
	if f.class == nil {
		f.class = &fakeClass{}
		if f.lab != nil {
			f.class.add("learner-1", f.lab)
		}
	}
	return f.class.open(cfg)
}

func (f *fakeEnv) Inspect(_ context.Context, l *lab.Lab) (kind.State, error) {
	f.called("inspect " + l.Metadata.Name)
	return f.state, nil
}

func (f *fakeEnv) Down(_ context.Context, l *lab.Lab, keepHome bool) error {
	if keepHome {
		f.called("down keeping home " + l.Metadata.Name)
	} else {
		f.called("down " + l.Metadata.Name)
	}
	f.state = kind.State{}
	return nil
}

func (f *fakeEnv) Stop(_ context.Context, l *lab.Lab, _ kind.Options) error {
	f.called("stop " + l.Metadata.Name)
	if f.lab == nil && !f.state.Sandbox.Exists {
		return provision.ErrNotUp
	}
	f.state = stoppedState()
	f.lab = nil
	return nil
}

func (f *fakeEnv) Start(_ context.Context, o kind.Options) (liveLab, error) {
	f.called("start " + o.Lab.Metadata.Name)
	if !f.state.Stopped {
		return nil, provision.ErrNotUp
	}
	f.lab = newFakeLab(o.Lab)
	f.state = upState()
	return f.lab, nil
}

func (f *fakeEnv) SaveHome(_ context.Context, l *lab.Lab, dir string) (string, error) {
	f.called("save home " + l.Metadata.Name)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	path := filepath.Join(dir, "root-test.tar")
	return path, os.WriteFile(path, homeTar(), 0o600)
}

func (f *fakeEnv) Preflight(context.Context) []preflight.Finding { return f.findings }

func (f *fakeEnv) ListImages(context.Context, images.Options) ([]images.Image, error) {
	return f.imgs, nil
}

// stoppedState is what Inspect reports of a lab `labctl stop` stopped.
func stoppedState() kind.State {
	var s kind.State
	s.ClusterExists, s.Stopped = true, true
	s.Sandbox.Exists, s.Sandbox.Status = true, "exited"
	s.Grader.Exists, s.Grader.Status = true, "exited"
	return s
}

// upState is what Inspect reports of a lab that is up.
func upState() kind.State {
	var s kind.State
	s.ClusterExists, s.APIReady = true, true
	s.Sandbox.Exists, s.Sandbox.Running, s.Sandbox.Status = true, true, "running"
	s.Grader.Exists, s.Grader.Running, s.Grader.Status = true, true, "running"
	return s
}

// fakeLab is a live lab whose sandbox remembers the scripts run in it: a
// check passes once the solve of its step has run, until a reset.
type fakeLab struct {
	liveLab

	solves map[string]string // check name -> its step's solve script
	mu     sync.Mutex
	ran    map[string]bool
	checks func(cs []lab.Check) ([]checks.Result, error) // overrides the above when set
	closed bool
	// exec is what ExecLogin does.
	exec func(cmd []string, in io.Reader, out, errOut io.Writer) int
	// home is the tar BackupHome writes; nil is homeTar().
	home []byte
}

func newFakeLab(l *lab.Lab) *fakeLab {
	f := &fakeLab{ran: map[string]bool{}, solves: map[string]string{}}
	for _, s := range l.Steps {
		for _, c := range s.Checks {
			f.solves[c.Name] = strings.TrimSpace(s.Solve)
		}
	}
	return f
}

// solved is a fake lab of l in which the steps before step are solved.
func solved(t *testing.T, file, step string) *fakeLab {
	t.Helper()
	l, err := lab.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	f := newFakeLab(l)
	for _, s := range l.Steps {
		if s.ID == step {
			break
		}
		f.ran[strings.TrimSpace(s.Solve)] = true
	}
	return f
}

func (f *fakeLab) RunScript(_ context.Context, script string, _, _ io.Writer) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.ran[strings.TrimSpace(script)] = true
	return 0, nil
}

func (f *fakeLab) RunScripts(ctx context.Context, scripts []string, stdout, stderr io.Writer, started func(int)) (int, int, error) {
	for i, s := range scripts {
		if started != nil {
			started(i)
		}
		if _, err := f.RunScript(ctx, s, stdout, stderr); err != nil {
			return i, 0, err
		}
	}
	return -1, 0, nil
}

func (f *fakeLab) RunAdminScript(context.Context, string, io.Writer) (int, error) { return 0, nil }

// RunChecks passes the checks whose step's solve ran.
func (f *fakeLab) RunChecks(_ context.Context, r checks.Round) ([]checks.Result, error) {
	cs := r.Checks
	if f.checks != nil {
		return f.checks(cs)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	var rs []checks.Result
	for _, c := range cs {
		st := checks.Fail
		if solve, ok := f.solves[c.Name]; ok && f.ran[solve] {
			st = checks.Pass
		}
		rs = append(rs, checks.Result{Name: c.Name, Description: c.Description, Status: st, Points: c.Points, Optional: c.Optional})
	}
	return rs, nil
}

func (f *fakeLab) forget() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.ran = map[string]bool{}
	return nil
}

func (f *fakeLab) BackupHome(_ context.Context, w io.Writer) error {
	home := f.home
	if home == nil {
		home = homeTar()
	}
	_, err := w.Write(home)
	return err
}
func (f *fakeLab) RecreateSandbox(context.Context) error { return f.forget() }
func (f *fakeLab) ResetNamespaces(context.Context) error { return nil }
func (f *fakeLab) RecreateCluster(context.Context) error { return f.forget() }

func (f *fakeLab) ExecLogin(_ context.Context, cmd []string, in io.Reader, out, errOut io.Writer) (int, error) {
	if f.exec == nil {
		return 0, errors.New("the test did not expect an exec")
	}
	return f.exec(cmd, in, out, errOut), nil
}

func (f *fakeLab) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.closed = true
	return nil
}

// homeTar is a learner's /root as the sandbox hands it out.
func homeTar() []byte {
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	body := "notes\n"
	_ = tw.WriteHeader(&tar.Header{Name: "root/notes.txt", Mode: 0o644, Size: int64(len(body))})
	_, _ = tw.Write([]byte(body))
	_ = tw.Close()
	return b.Bytes()
}

// twoSteps is the unit tests' lab file.
const twoSteps = "testdata/two-steps/lab.yaml"

// runFake runs labctl with args on env and returns the exit code and both
// streams; the test calls isolate first.
func runFake(t *testing.T, env environment, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(context.Background(), Streams{In: strings.NewReader(""), Out: &out, Err: &errOut}, args, env)
	return code, out.String(), errOut.String()
}

// isolate gives the test a clean configuration, a state directory of its
// own (the learner's progress), an empty labs directory and an English
// locale.
func isolate(t *testing.T) {
	t.Helper()
	t.Setenv("LABCTL_STATE_DIR", t.TempDir())
	t.Setenv("LABCTL_LABS_DIR", t.TempDir())
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Setenv("LABCTL_CONFIG", "")
	t.Setenv("LABCTL_LAB", "")
	t.Setenv("LC_ALL", "")
	t.Setenv("LC_MESSAGES", "")
	t.Setenv("LANG", "en_US.UTF-8")
	t.Setenv("LABCTL_LANG", "")
	t.Setenv("NO_COLOR", "1")
}

// decode parses JSON output into v or fails the test.
func decode(t *testing.T, out string, v any) {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(out))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		t.Fatalf("output is not the documented JSON: %v\n%s", err, out)
	}
}
