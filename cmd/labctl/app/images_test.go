package app

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/labctl/labctl"
	"github.com/labctl/labctl/images"
	"github.com/labctl/labctl/lab"
	"github.com/labctl/labctl/provision/kind"
)

func TestImagesBuildRejectsBothSelections(t *testing.T) {
	code, out, errOut := runLabctl(t, "images", "build", "--node", "--sandbox")
	if code == 0 || out != "" || !strings.Contains(errOut, "--node and --sandbox exclude each other") {
		t.Errorf("code %d, stdout %q, stderr %q", code, out, errOut)
	}
}

func TestImagesSaveNeedsAFile(t *testing.T) {
	code, _, errOut := runLabctl(t, "images", "save")
	if code == 0 || !strings.Contains(errOut, "accepts 1 arg") {
		t.Errorf("code %d, stderr %q", code, errOut)
	}
}

// doctor prints one line per probe on stdout, each problem followed by its
// fix, and exits 1 exactly when a probe failed.
func TestDoctorReportsEveryProbe(t *testing.T) {
	t.Setenv("LC_ALL", "")
	t.Setenv("LC_MESSAGES", "")
	t.Setenv("LANG", "en_US.UTF-8")
	code, out, errOut := runLabctl(t, "doctor")
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	probes, problems := 0, 0
	for i, l := range lines {
		switch {
		case strings.HasPrefix(l, "✓ "):
			probes++
		case strings.HasPrefix(l, "✗ "):
			probes++
			problems++
			if i+1 >= len(lines) || !strings.Contains(lines[i+1], "fix: ") {
				t.Errorf("problem without a fix: %q", l)
			}
		}
	}
	if probes != 5 {
		t.Errorf("doctor printed %d probes, want 5:\n%s", probes, out)
	}
	if (problems > 0) != (code == 1) || (problems == 0 && code != 0) {
		t.Errorf("%d problems but exit code %d (stderr %q)", problems, code, errOut)
	}
}

func TestImagesKindConfigPrintsTheClusterFile(t *testing.T) {
	state := t.TempDir()
	t.Setenv("LABCTL_STATE_DIR", state)
	code, out, _ := runLabctl(t, "images", "kind-config", "labctl/node:test")
	if code != 0 || !strings.Contains(out, "image: labctl/node:test") || !strings.Contains(out, "disableDefaultCNI: true") ||
		!strings.Contains(out, "leader-elect") || !strings.Contains(out, "audit-policy-file") {
		t.Errorf("code %d, stdout %q", code, out)
	}
	// The file names the audit policy, which must exist for the API server to start.
	policies, _ := filepath.Glob(filepath.Join(state, "*", "audit", "policy.yaml"))
	if len(policies) != 1 || !strings.Contains(out, "hostPath: "+filepath.Dir(policies[0])) {
		t.Errorf("audit policies written: %v; stdout %q", policies, out)
	}
	if code, _, errOut := runLabctl(t, "images", "kind-config", "a", "b"); code == 0 {
		t.Errorf("two node images were accepted: %q", errOut)
	}
}

// doctor speaks the learner's language: the built-in lab is Japanese, so
// with no locale its lines are Japanese, with an English locale English.
func TestDoctorSpeaksTheLabsLanguage(t *testing.T) {
	t.Setenv("LABCTL_LANG", "")
	t.Setenv("LC_ALL", "")
	t.Setenv("LC_MESSAGES", "")
	for lang, want := range map[string]string{"": "空き容量", "en_US.UTF-8": "free"} {
		t.Setenv("LANG", lang)
		_, out, _ := runLabctl(t, "doctor")
		disk := ""
		for _, l := range strings.Split(out, "\n") {
			if strings.Contains(l, " disk ") {
				disk = l
			}
		}
		if !strings.Contains(disk, want) {
			t.Errorf("LANG=%q: disk line %q, want it to say %q\n%s", lang, disk, want, out)
		}
		if lang == "" && strings.Contains(out, "fix: ") {
			t.Errorf("LANG unset: an English fix in a Japanese lab:\n%s", out)
		}
	}
	// --lang (LABCTL_LANG) wins over the locale, either way; an unknown
	// language is refused.
	for _, tc := range []struct{ lang, flag, want string }{{"en_US.UTF-8", "ja", "空き容量"}, {"ja_JP.UTF-8", "en", "free"}} {
		t.Setenv("LANG", tc.lang)
		_, out, _ := runLabctl(t, "doctor", "--lang", tc.flag)
		if !strings.Contains(out, tc.want) {
			t.Errorf("LANG=%s --lang %s: want %q in\n%s", tc.lang, tc.flag, tc.want, out)
		}
	}
	t.Setenv("LANG", "en_US.UTF-8")
	t.Setenv("LABCTL_LANG", "ja")
	if _, out, _ := runLabctl(t, "doctor"); !strings.Contains(out, "空き容量") {
		t.Errorf("LABCTL_LANG=ja: want Japanese in\n%s", out)
	}
	code, _, errOut := runLabctl(t, "doctor", "--lang", "ko")
	if code != 2 || !strings.Contains(errOut, `--lang "ko": labctl speaks ja and en`) {
		t.Errorf("--lang ko: exit %d, %s", code, errOut)
	}
}

// TestImagesKindConfigIsWhatUpUses holds the printed file to the one up
// gives kind (kind.KindConfigFile renders up's configuration; the
// provision tests hold the two together), for the lab's node image and for
// one given on the command line.
func TestImagesKindConfigIsWhatUpUses(t *testing.T) {
	t.Setenv("LABCTL_STATE_DIR", t.TempDir())
	l, err := lab.Parse(builtInLab, labctl.DefaultLab())
	if err != nil {
		t.Fatal(err)
	}
	node := l.Cluster.NodeImage
	if node == "" {
		node = images.NodeRef()
	}
	for args, ref := range map[string]string{"": node, "labctl/node:test": "labctl/node:test"} {
		code, out, errOut := runLabctl(t, strings.Fields("images kind-config "+args)...)
		want, err := kind.KindConfigFile(l, ref)
		if err != nil {
			t.Fatal(err)
		}
		if code != 0 || out != string(want) {
			t.Errorf("kind-config %s: exit %d (stderr %q), stdout\n%s\nwant up's file\n%s", args, code, errOut, out, want)
		}
	}
}

// The fake environment's workload images: the lab's images are present
// when the engine's list (fakeEnv.imgs) holds them; EnsureWorkloads
// records the lab directory it was given and builds every image with
// build.

func (f *fakeEnv) EnsureImages(_ context.Context, o images.Options) (images.Refs, error) {
	f.called(fmt.Sprintf("ensure images node=%v sandbox=%v", o.Node, o.Sandbox))
	return images.Refs{Node: "labctl/node:test", Sandbox: "labctl/sandbox:test"}, nil
}

func (f *fakeEnv) EnsureWorkloads(_ context.Context, _ images.Options, l *lab.Lab, labDir string) ([]string, error) {
	f.called(fmt.Sprintf("ensure workloads of %s in %q", l.Metadata.Name, labDir))
	var present []string
	for _, w := range f.workloadList(l) {
		if w.Present || w.Build != "" {
			present = append(present, w.Name)
		}
	}
	return present, nil
}

func (f *fakeEnv) Workloads(_ context.Context, _ images.Options, l *lab.Lab) ([]images.Workload, error) {
	return f.workloadList(l), nil
}

func (f *fakeEnv) workloadList(l *lab.Lab) []images.Workload {
	var list []images.Workload
	for _, im := range l.Cluster.Images {
		w := images.Workload{Image: im}
		for _, e := range f.imgs {
			if e.Ref == im.Name {
				w.Present, w.ID, w.Size, w.Created = true, e.ID, e.Size, e.Created
			}
		}
		list = append(list, w)
	}
	return list
}

// labWithWorkloads writes the two-step lab with workload images, one built
// from images/web, into a directory and returns its lab file.
func labWithWorkloads(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(twoSteps)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	data = []byte(strings.Replace(string(data), "steps:\n", "cluster:\n  images:\n"+
		"    - {name: \"labctl.local/web:1\", build: images/web}\n"+
		"    - {name: \"redis:7.2\"}\n"+
		"    - {name: \"nginx:1.27\", optional: true}\nsteps:\n", 1))
	if err := os.MkdirAll(filepath.Join(dir, "images", "web"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "images", "web", "Dockerfile"), []byte("FROM scratch\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "lab.yaml")
	if err := os.WriteFile(file, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return file
}

func TestImagesBuildEnsuresTheLabsWorkloads(t *testing.T) {
	isolate(t)
	file := labWithWorkloads(t)
	env := &fakeEnv{imgs: []images.Image{{Ref: "redis:7.2", ID: "1"}}}
	code, out, errOut := runFake(t, env, "--lab", file, "images", "build")
	wantOut := "node\tlabctl/node:test\nsandbox\tlabctl/sandbox:test\nworkload\tlabctl.local/web:1\nworkload\tredis:7.2\n"
	if code != 0 || out != wantOut {
		t.Errorf("images build: exit %d, stdout %q (stderr %q), want %q", code, out, errOut, wantOut)
	}
	if want := fmt.Sprintf("ensure workloads of two-steps in %q", filepath.Dir(file)); !slices.Contains(env.calls, want) {
		t.Errorf("calls %q, want %q", env.calls, want)
	}

	env = &fakeEnv{}
	if code, out, _ := runFake(t, env, "--lab", file, "images", "build", "--node"); code != 0 || strings.Contains(out, "workload") ||
		slices.ContainsFunc(env.calls, func(c string) bool { return strings.HasPrefix(c, "ensure workloads") }) {
		t.Errorf("images build --node: exit %d, stdout %q, calls %q; want no workload image", code, out, env.calls)
	}

	env = &fakeEnv{}
	if code, _, _ := runFake(t, env, "images", "build"); code != 0 || !slices.Contains(env.calls, `ensure workloads of gitops-drift in ""`) {
		t.Errorf("images build of the built-in lab: exit %d, calls %q; want no lab directory", code, env.calls)
	}
}

func TestImagesListShowsTheLabsWorkloads(t *testing.T) {
	isolate(t)
	file := labWithWorkloads(t)
	env := &fakeEnv{imgs: []images.Image{
		{Ref: images.NodeRef(), ID: "0123456789ab", Size: "1.2GB", Created: "2 days ago", Current: true},
		{Ref: "labctl.local/web:1", ID: "abcdef012345", Size: "5MB", Created: "1 hour ago"},
	}}
	code, out, errOut := runFake(t, env, "--lab", file, "images", "list")
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	want := []string{
		"  IMAGE",
		"* " + images.NodeRef(),
		"  labctl.local/web:1", // the fake engine lists every image
		"",
		"  WORKLOAD IMAGE (LAB two-steps)  PRESENT  ID            SIZE  FROM",
		"  labctl.local/web:1              yes      abcdef012345  5MB   build images/web",
		"  redis:7.2                       no       -             -     the host's engine",
		"  nginx:1.27                      no       -             -     the host's engine (optional)",
	}
	if code != 0 || len(lines) != len(want) {
		t.Fatalf("images list: exit %d, stdout\n%s", code, out)
	}
	for i, w := range want {
		if !strings.HasPrefix(lines[i], w) {
			t.Errorf("line %d %q, want it to start %q", i, lines[i], w)
		}
	}
	for _, w := range []string{
		"missing: redis:7.2 (`docker pull redis:7.2` where a registry answers, or `labctl install` a bundle that holds it)\n",
		"missing: nginx:1.27 (optional: the Pods that run it will not start; `docker pull nginx:1.27` where a registry answers)\n",
	} {
		if !strings.Contains(errOut, w) {
			t.Errorf("stderr %q lacks %q", errOut, w)
		}
	}

	code, out, _ = runFake(t, env, "--lab", file, "images", "list", "-o", "json")
	var l imageList
	decode(t, out, &l)
	wantJSON := []workloadEntry{
		{Ref: "labctl.local/web:1", Build: "images/web", Present: true, ID: "abcdef012345", Size: "5MB", Created: "1 hour ago"},
		{Ref: "redis:7.2"},
		{Ref: "nginx:1.27", Optional: true},
	}
	if code != 0 || !slices.Equal(l.Workloads, wantJSON) {
		t.Errorf("images list -o json: exit %d, workloads %+v", code, l.Workloads)
	}

	// A lab that does not load leaves the workloads out, and says so.
	broken := filepath.Join(t.TempDir(), "lab.yaml")
	if err := os.WriteFile(broken, []byte("kind: Lab\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = runFake(t, env, "--lab", broken, "images", "list")
	if code != 0 || strings.Contains(out, "WORKLOAD") || !strings.Contains(errOut, "the lab's workload images are not listed: "+broken+" does not load (run `labctl lint`)") {
		t.Errorf("images list of a broken lab: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

// upDirEnv records the lab directory up is given.
type upDirEnv struct {
	*fakeEnv
	labDirs []string
}

func (e *upDirEnv) Up(ctx context.Context, o kind.Options) (liveLab, error) {
	e.labDirs = append(e.labDirs, o.LabDir)
	return e.fakeEnv.Up(ctx, o)
}

func (e *upDirEnv) Connect(ctx context.Context, o kind.Options) (liveLab, error) {
	e.labDirs = append(e.labDirs, o.LabDir)
	return e.fakeEnv.Connect(ctx, o)
}

// up and reset (which may recreate the cluster) build the lab's workload
// images from the lab's directory; the built-in lab has none.
func TestUpAndResetPassTheLabDirectory(t *testing.T) {
	isolate(t)
	file := labWithWorkloads(t)
	env := &upDirEnv{fakeEnv: &fakeEnv{}}
	if code, _, errOut := runFake(t, env, "--lab", file, "up"); code != 0 {
		t.Fatalf("up: exit %d, stderr %q", code, errOut)
	}
	if code, _, errOut := runFake(t, env, "--lab", file, "reset", "--no-backup"); code != 0 {
		t.Fatalf("reset: exit %d, stderr %q", code, errOut)
	}
	if code, _, errOut := runFake(t, env, "up"); code != 0 {
		t.Fatalf("up of the built-in lab: exit %d, stderr %q", code, errOut)
	}
	dir := filepath.Dir(file)
	if want := []string{dir, dir, ""}; !slices.Equal(env.labDirs, want) {
		t.Errorf("lab directories %q, want %q", env.labDirs, want)
	}
}
