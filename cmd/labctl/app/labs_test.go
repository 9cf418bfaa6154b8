package app

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/labctl/labctl"
	"github.com/labctl/labctl/cmd/labctl/e2etest"
	"github.com/labctl/labctl/grading/progress"
	"github.com/labctl/labctl/images"
	"github.com/labctl/labctl/internal/statedir"
	"github.com/labctl/labctl/lab"
	"github.com/labctl/labctl/provision/kind"
	"github.com/labctl/labctl/usecase/labstore"
)

// The fake engine's side of bundles: SaveImagesTo writes a `docker save`
// tar of the refs (e2etest.DockerSave, each image's ID fakeID), and
// LoadImagesFrom reads one and tags the images its manifest.json names; an
// image is present when the engine's list (fakeEnv.imgs) holds it.

func (f *fakeEnv) SaveImagesTo(_ context.Context, _ images.Options, w io.Writer, refs []string) error {
	f.called("save images " + strings.Join(refs, " "))
	_, err := w.Write(fakeSave(refs))
	return err
}

func (f *fakeEnv) LoadImagesFrom(_ context.Context, _ images.Options, r io.Reader, what string) ([]string, error) {
	tr := tar.NewReader(r)
	configs := map[string]string{}
	var manifest []struct {
		Config   string
		RepoTags []string
	}
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			return nil, err
		}
		configs[hdr.Name] = e2etest.ImageID(data)
		if hdr.Name == "manifest.json" {
			if err := json.Unmarshal(data, &manifest); err != nil {
				return nil, err
			}
		}
	}
	if _, err := io.Copy(io.Discard, r); err != nil {
		return nil, err
	}
	var refs []string
	for _, m := range manifest {
		for _, tag := range m.RepoTags {
			refs = append(refs, tag)
			f.imgs = append(f.imgs, images.Image{Ref: tag, ID: configs[m.Config]})
		}
	}
	f.called("load images " + strings.Join(refs, " ") + " from " + what)
	return refs, nil
}

func (f *fakeEnv) ImagesPresent(_ context.Context, _ images.Options, refs []string) (map[string]string, error) {
	ids := map[string]string{}
	for _, ref := range refs {
		for _, im := range f.imgs {
			if im.Ref == ref {
				ids[ref] = im.ID
			}
		}
	}
	return ids, nil
}

// fakeSave is `docker save` of refs in the fake engine.
func fakeSave(refs []string) []byte {
	var saved []e2etest.SavedImage
	for _, ref := range refs {
		saved = append(saved, e2etest.SavedImage{Config: e2etest.ImageConfig(ref), Tags: []string{ref}})
	}
	return e2etest.DockerSave(saved...)
}

// fakeID is the ID of the image ref in the fake engine.
func fakeID(ref string) string { return e2etest.ImageID(e2etest.ImageConfig(ref)) }

// installTwoSteps installs the two-step lab with workload images into the
// test's labs directory and returns the directory it came from.
func installTwoSteps(t *testing.T) (src, installed string) {
	t.Helper()
	file := labWithWorkloads(t)
	store := labstore.New(os.Getenv("LABCTL_LABS_DIR"))
	res, err := store.Install(context.Background(), filepath.Dir(file), labstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Dir(file), res.Dir
}

// labCommands are the arguments (after --lab) that run each command that
// takes the lab on the fake environment.
var labCommands = map[string][]string{
	"up":                 {"up"},
	"down":               {"down"},
	"stop":               {"stop"},
	"start":              {"start"},
	"status":             {"status", "-o", "json"},
	"exec":               {"exec", "true"},
	"check":              {"check"},
	"grade":              {"grade"},
	"reset":              {"reset", "--no-backup", "--to", "goodbye"},
	"test":               {"test"},
	"lint":               {"lint"},
	"doctor":             {"doctor"},
	"ui":                 {"ui", "--no-browser"},
	"open":               {"open", "svc/web", "--no-browser"},
	"pack":               {"pack"},
	"images build":       {"images", "build"},
	"images list":        {"images", "list"},
	"images kind-config": {"images", "kind-config"},
	"__complete":         {"__complete", "check", ""},
	"class up":           {"class", "up", "--learners", "2"},
	"class status":       {"class", "status", "-o", "json"},
	"class grade":        {"class", "grade"},
	"class reset":        {"class", "reset", "learner-1", "--no-backup"},
	"class down":         {"class", "down", "--all"},
	"class invite":       {"class", "invite", "learner-1", "--force"},
}

// noLabCommands take no lab, or (shell) need a terminal before they load
// one.
var noLabCommands = []string{
	"version", "schema", "install", "labs", "images save", "images load", "completion bash", "completion zsh",
	"completion fish", "completion powershell", "help", "__completeNoDesc", "shell", "completion", "images",
	"class", "class shell", "class cluster", "class cluster create", "class cluster delete", "import", "import killercoda", "import instruqt",
}

// --lab NAME of an installed lab is the same as --lab PATH of its lab file,
// for every command: the same exit code, output and calls into the
// environment.
func TestLabNameWorksForEveryCommand(t *testing.T) {
	isolate(t)
	src, installed := installTwoSteps(t)
	root, _ := newRoot(Streams{In: strings.NewReader(""), Out: io.Discard, Err: io.Discard}, &fakeEnv{})
	walk(root, func(c *cobra.Command) {
		name := strings.TrimPrefix(c.CommandPath(), "labctl ")
		if c.Hidden || !c.Runnable() || c == root || slices.Contains(noLabCommands, name) {
			return
		}
		if _, ok := labCommands[name]; !ok {
			t.Errorf("labctl %s is not in labCommands: add how to run it on a lab, or to noLabCommands", name)
		}
	})
	t.Chdir(t.TempDir()) // pack writes its bundle here
	for name, args := range labCommands {
		var outs [2]string
		var calls [2][]string
		var codes [2]int
		state := t.TempDir() // the same path, emptied, for both runs
		for i, lab := range []string{filepath.Join(src, "lab.yaml"), "two-steps"} {
			if err := os.RemoveAll(state); err != nil {
				t.Fatal(err)
			}
			t.Setenv("LABCTL_STATE_DIR", state)
			env := &fakeEnv{lab: solved(t, filepath.Join(src, "lab.yaml"), "hello"), state: upState(),
				imgs: []images.Image{{Ref: "labctl/node:test", ID: "n"}, {Ref: "labctl/sandbox:test", ID: "s"}, {Ref: "labctl.local/web:1", ID: "w"}}}
			env.lab.exec = func([]string, io.Reader, io.Writer, io.Writer) int { return 0 }
			if name == "ui" || name == "open" {
				// They serve until interrupted on a lab that is up: on one
				// that is not, both stop at connecting to it, which is what
				// this test needs.
				env.lab = nil
			}
			code, out, errOut := runFake(t, env, append([]string{"--lab", lab}, args...)...)
			if code > 2 && name != "status" {
				t.Errorf("labctl --lab %s %s: exit %d\n%s", lab, name, code, errOut)
			}
			codes[i] = code
			// Timings differ from run to run on a busy machine, and so
			// does the order of the reset's parts, longest first.
			outs[i] = durations.ReplaceAllString(strings.ReplaceAll(strings.ReplaceAll(out, installed, "LABDIR"), src, "LABDIR"), "Ns")
			outs[i] = resetParts.ReplaceAllString(outs[i], "($1)")
			for _, c := range env.calls {
				calls[i] = append(calls[i], strings.ReplaceAll(strings.ReplaceAll(c, installed, "LABDIR"), src, "LABDIR"))
			}
		}
		if codes[0] != codes[1] || outs[0] != outs[1] || !slices.Equal(calls[0], calls[1]) {
			t.Errorf("labctl %s: by path exit %d, calls %q, stdout\n%s\nby name exit %d, calls %q, stdout\n%s",
				name, codes[0], calls[0], outs[0], codes[1], calls[1], outs[1])
		}
		if len(calls[1]) > 0 && !slices.ContainsFunc(calls[1], func(c string) bool { return strings.Contains(c, "two-steps") }) {
			t.Errorf("labctl --lab two-steps %s: calls %q name another lab", name, calls[1])
		}
	}
}

func TestLabFlagResolution(t *testing.T) {
	isolate(t)
	src, installed := installTwoSteps(t)
	t.Chdir(filepath.Dir(src))
	for _, tc := range []struct {
		lab  string
		want string // the lab file loadLab finds
		err  []string
	}{
		{"two-steps", filepath.Join(installed, "lab.yaml"), nil},
		{"gitops-drift", builtInLab, nil},
		{src, filepath.Join(src, "lab.yaml"), nil},
		{"./" + filepath.Base(src), filepath.Join(filepath.Base(src), "lab.yaml"), nil},
		{filepath.Join(src, "lab.yaml"), filepath.Join(src, "lab.yaml"), nil},
		{"nosuch", "", []string{"--lab nosuch: no lab has that name", "labs: gitops-drift (built in), two-steps",
			"install one with `labctl install DIR|GIT-URL|BUNDLE`", "--lab ./PATH/lab.yaml"}},
		// A directory here of that name: the message says how to use it.
		{filepath.Base(src), "", []string{"no lab has that name (a directory " + filepath.Base(src) + " is here: to use it, write --lab ./" + filepath.Base(src) + ")"}},
		{filepath.Dir(src) + "/", "", []string{"the directory holds no lab.yaml"}},
	} {
		g := &globals{cfg: newTestConfig(tc.lab)}
		l, _, source, dir, err := g.loadLab()
		if tc.err != nil {
			for _, w := range tc.err {
				if err == nil || !strings.Contains(err.Error(), w) {
					t.Errorf("--lab %s: error %v, want %q", tc.lab, err, w)
				}
			}
			continue
		}
		if err != nil || source != tc.want || l.Metadata.Name == "" {
			t.Errorf("--lab %s: source %q (%v), want %q", tc.lab, source, err, tc.want)
			continue
		}
		wantDir := ""
		if tc.want != builtInLab {
			wantDir, _ = filepath.Abs(filepath.Dir(tc.want))
		}
		if dir != wantDir {
			t.Errorf("--lab %s: lab directory %q, want %q", tc.lab, dir, wantDir)
		}
	}
	// An unknown name is a usage-like error: exit 2, nothing touched.
	env := &fakeEnv{}
	code, out, errOut := runFake(t, env, "--lab", "nosuch", "up")
	want{code: 2, noOut: true, noCalls: true, errOut: []string{"no lab has that name"}}.check(t, env, nil, code, out, errOut)

	// --lab completes with the labs there are.
	code, out, _ = runFake(t, &fakeEnv{}, "__complete", "--lab", "")
	if got := strings.Split(strings.TrimSpace(out), "\n"); code != 0 || !slices.Equal(got[:len(got)-1], []string{"gitops-drift", "two-steps"}) {
		t.Errorf("completing --lab: exit %d, %q", code, out)
	}
}

// slowEnv's Docker never answers Inspect.
type slowEnv struct{ *fakeEnv }

func (s slowEnv) Inspect(ctx context.Context, _ *lab.Lab) (kind.State, error) {
	<-ctx.Done()
	return kind.State{}, ctx.Err()
}

func TestLabsCommand(t *testing.T) {
	isolate(t)
	env := &fakeEnv{}
	code, out, errOut := runFake(t, env, "labs")
	if code != 0 || !strings.HasPrefix(out, "NAME  ") || !strings.Contains(out, "\ngitops-drift  ja ") ||
		!strings.Contains(errOut, "no lab is installed in "+os.Getenv("LABCTL_LABS_DIR")) {
		t.Errorf("labs with none installed: exit %d, stdout\n%s\nstderr %q", code, out, errOut)
	}

	src, installed := installTwoSteps(t)
	// One step of two passed.
	dir, err := statedir.Dir(os.Getenv, "two-steps")
	if err != nil {
		t.Fatal(err)
	}
	p := progress.New("two-steps")
	l, err := lab.Load(filepath.Join(installed, "lab.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Record(l, "hello", true, p.UpdatedAt); err != nil {
		t.Fatal(err)
	}
	if err := progress.NewStore(dir).Save(p); err != nil {
		t.Fatal(err)
	}
	env = &fakeEnv{state: upState()}
	code, out, _ = runFake(t, env, "labs")
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if code != 0 || len(lines) != 3 || !strings.HasPrefix(lines[0], "NAME          LANG  VERSION  PROGRESS  UP   SOURCE") ||
		!strings.HasPrefix(lines[2], "two-steps     en    -        1/2       yes  "+src+"  ") {
		t.Errorf("labs: exit %d, stdout\n%s", code, out)
	}

	code, out, _ = runFake(t, env, "labs", "-o", "json")
	var list labList
	decode(t, out, &list)
	if code != 0 || list.Dir != os.Getenv("LABCTL_LABS_DIR") || len(list.Labs) != 2 {
		t.Fatalf("labs -o json: exit %d, %+v", code, list)
	}
	got := list.Labs[1]
	if got.Name != "two-steps" || got.Language != "en" || got.Steps != 2 || got.Passed != 1 || got.Up == nil || !*got.Up ||
		got.Source.Kind != "dir" || got.Source.Location != src || got.Dir != installed || got.Error != "" || got.Source.Install.IsZero() {
		t.Errorf("labs -o json: %+v", got)
	}
	if b := list.Labs[0]; b.Name != "gitops-drift" || b.Source.Kind != "built-in" || b.Dir != "" || b.Steps == 0 {
		t.Errorf("the built-in lab: %+v", b)
	}

	// Docker that does not answer: the listing comes within seconds, up
	// unknown.
	code, out, _ = runFake(t, slowEnv{&fakeEnv{}}, "labs", "-o", "json")
	decode(t, out, &list)
	if code != 0 || list.Labs[0].Up != nil || list.Labs[1].Up != nil {
		t.Errorf("labs with Docker silent: exit %d, %+v", code, list)
	}
}

func TestInstallCommand(t *testing.T) {
	isolate(t)
	src := filepath.Dir(labWithWorkloads(t))
	env := &fakeEnv{}
	code, out, errOut := runFake(t, env, "install", src)
	if code != 0 || !strings.HasPrefix(out, "installed two-steps from "+src+"\nWhat the lab may do:\n") ||
		!strings.Contains(out, "\n  workload images built from the lab's directory: labctl.local/web:1 from images/web\n") ||
		!strings.Contains(errOut, "labctl --lab two-steps up") || len(env.calls) != 0 {
		t.Errorf("install: exit %d, stdout %q, stderr %q, calls %q", code, out, errOut, env.calls)
	}
	code, out, _ = runFake(t, env, "install", src)
	if code != 0 || out != "two-steps is already installed (from "+src+"): nothing changed\n" {
		t.Errorf("install again: exit %d, stdout %q", code, out)
	}
	if err := os.WriteFile(filepath.Join(src, "README.md"), []byte("# new\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = runFake(t, env, "install", src)
	want{code: 2, noOut: true, errOut: []string{"another lab named two-steps is installed (from " + src + "), with other files: pass --force"}}.
		check(t, env, nil, code, out, errOut)
	code, out, _ = runFake(t, env, "install", "--force", src)
	if code != 0 || !strings.HasPrefix(out, "replaced two-steps (from "+src+") with two-steps from "+src) {
		t.Errorf("install --force: exit %d, stdout %q", code, out)
	}

	for _, tc := range []struct {
		args []string
		want want
	}{
		{[]string{"install"}, usage("accepts 1 arg(s), received 0", "labctl install")},
		{[]string{"install", "a", "b"}, usage("accepts 1 arg(s), received 2", "labctl install")},
		{[]string{"install", filepath.Join(src, "none")}, want{code: 2, noOut: true, errOut: []string{"does not exist: give a lab's directory, a git URL or a bundle file"}}},
	} {
		code, out, errOut := runFake(t, env, tc.args...)
		tc.want.check(t, nil, tc.args, code, out, errOut)
	}
}

// pack, then install the bundle on a machine with another labs directory:
// the lab lands and its images are loaded from the one file.
func TestPackAndInstallABundle(t *testing.T) {
	isolate(t)
	file := labWithWorkloads(t)
	out := filepath.Join(t.TempDir(), "two-steps.labctl.tar")
	imgs := []images.Image{{Ref: "labctl/node:test", ID: "n"}, {Ref: "labctl/sandbox:test", ID: "s"}, {Ref: "labctl.local/web:1", ID: fakeID("labctl.local/web:1")}}
	env := &fakeEnv{imgs: imgs}
	code, stdout, errOut := runFake(t, env, "--lab", file, "pack", "--output-file", out)
	// labctl's own images stay out of the bundle.
	refs := "labctl.local/web:1"
	if code != 0 || stdout != out+"\n" || !strings.Contains(errOut, "packed lab two-steps (2 files, 1 image") ||
		!slices.Contains(env.calls, "save images "+refs) {
		t.Fatalf("pack: exit %d, stdout %q, stderr %q, calls %q", code, stdout, errOut, env.calls)
	}

	t.Setenv("LABCTL_LABS_DIR", t.TempDir())
	env = &fakeEnv{}
	code, stdout, errOut = runFake(t, env, "install", out)
	// The first line says what landed; what the lab may do follows.
	if code != 0 || !strings.HasPrefix(stdout, "installed two-steps from "+out+"; loaded 1 image: labctl.local/web:1\nWhat the lab may do:\n") ||
		!slices.Equal(env.calls, []string{"load images " + refs + " from two-steps.labctl.tar"}) {
		t.Errorf("install BUNDLE: exit %d, stdout %q, stderr %q, calls %q", code, stdout, errOut, env.calls)
	}
	// Again, the images present: nothing changes, nothing is loaded.
	env = &fakeEnv{imgs: imgs}
	code, stdout, _ = runFake(t, env, "install", out)
	if code != 0 || stdout != "two-steps is already installed (from "+out+"): nothing changed\n" || len(env.calls) != 0 {
		t.Errorf("install BUNDLE again: exit %d, stdout %q, calls %q", code, stdout, env.calls)
	}
	// Another image of the lab's image's name is never replaced.
	env = &fakeEnv{imgs: []images.Image{{Ref: "labctl.local/web:1", ID: "sha256:mine"}}}
	code, stdout, errOut = runFake(t, env, "install", "--force", out)
	want{code: 2, noOut: true, errOut: []string{"has another image named labctl.local/web:1", "`docker rmi labctl.local/web:1` and install again"}}.
		check(t, env, nil, code, stdout, errOut)

	body, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	body[bytes.Index(body, []byte("IMAGES-MARKER"))+3] ^= 1
	bad := filepath.Join(t.TempDir(), "bad.labctl.tar")
	if err := os.WriteFile(bad, body, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("LABCTL_LABS_DIR", t.TempDir())
	env = &fakeEnv{}
	code, stdout, errOut = runFake(t, env, "install", bad)
	want{code: 2, noOut: true, noCalls: true, errOut: []string{"the bundle " + bad + " is corrupt: images.tar has SHA-256", "download it again"}}.
		check(t, env, nil, code, stdout, errOut)
	if entries, _ := os.ReadDir(os.Getenv("LABCTL_LABS_DIR")); len(entries) != 1 {
		t.Errorf("a refused bundle left %d entries in the labs directory, want the lock alone", len(entries))
	}
}

func TestPackRefusals(t *testing.T) {
	isolate(t)
	file := labWithWorkloads(t)
	t.Chdir(t.TempDir())
	env := &fakeEnv{}
	code, out, errOut := runFake(t, env, "pack")
	want{code: 2, noOut: true, noCalls: true, errOut: []string{"lab gitops-drift is built into every labctl and needs no bundle"}}.
		check(t, env, nil, code, out, errOut)

	// An image the lab names that the engine lacks.
	env = &fakeEnv{imgs: []images.Image{{Ref: "labctl/node:test", ID: "n"}, {Ref: "labctl/sandbox:test", ID: "s"}}}
	code, out, errOut = runFake(t, env, "--lab", file, "pack")
	want{code: 2, noOut: true, errOut: []string{"image labctl.local/web:1 is not present"}}.check(t, env, nil, code, out, errOut)
	if entries, _ := os.ReadDir("."); len(entries) != 0 {
		t.Errorf("a refused pack left %v", entries)
	}
	if name := fmt.Sprint(env.calls); strings.Contains(name, "save images") {
		t.Errorf("a refused pack saved images: %s", name)
	}
}

// durations are the times `labctl test` prints (1.0s, 0.25s).
var durations = regexp.MustCompile(`\b[0-9]+\.[0-9]+s\b`)

// resetParts is the list of a reset's parts `labctl test` prints, in an
// order that follows their times.
var resetParts = regexp.MustCompile(`\((?:sandbox|namespaces) Ns, (?:sandbox|namespaces) (Ns)\)`)

// TestLabTextLanguage: the learner reads the lab in the language labctl
// speaks to them when the lab has a translation in it; lint reads the lab
// as written.
func TestLabTextLanguage(t *testing.T) {
	isolate(t)
	written, err := lab.Parse(builtInLab, labctl.DefaultLab())
	if err != nil {
		t.Fatal(err)
	}
	english := written.Translations["en"].Title
	for _, tc := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"LANG": "en_US.UTF-8"}, english},
		{map[string]string{"LANG": "C.UTF-8"}, written.Metadata.Title},
		{map[string]string{"LANG": "ja_JP.UTF-8"}, written.Metadata.Title},
		{map[string]string{"LANG": "en_US.UTF-8", "LABCTL_LANG": "ja"}, written.Metadata.Title},
		{map[string]string{"LANG": "C.UTF-8", "LABCTL_LANG": "en"}, english},
		{map[string]string{"LANG": "ko_KR.UTF-8"}, english}, // labctl speaks English to them, and so does the lab
	} {
		for _, k := range []string{"LANG", "LABCTL_LANG"} {
			t.Setenv(k, tc.env[k])
		}
		g := &globals{cfg: newTestConfig("gitops-drift")}
		l, _, _, _, err := g.loadLab()
		if err != nil {
			t.Fatal(err)
		}
		if l.Metadata.Title != tc.want {
			t.Errorf("%v: title %q, want %q", tc.env, l.Metadata.Title, tc.want)
		}
		asWritten, _, _, _, err := g.loadLabAsWritten()
		if err != nil || asWritten.Metadata.Title != written.Metadata.Title {
			t.Errorf("%v: the lab as written has title %q (%v)", tc.env, asWritten.Metadata.Title, err)
		}
	}
}
