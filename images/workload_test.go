package images

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/labctl/labctl/lab"
)

// fakeDocker is a docker command on PATH that knows the images named by
// files in its state directory (file name: the reference with / and :
// replaced, content: the image's recipe label) and logs every call.
type fakeDocker struct {
	dir, state, log string
}

const fakeDockerScript = `#!/bin/sh
state=STATE
echo "$*" >> "$state/calls"
key() { printf '%s' "$1" | tr '/:' '__'; }
case "$1 $2" in
"image inspect")
	ref=$5
	if [ -f "$state/images/$(key "$ref")" ]; then
		case "$4" in
		*OnBuild*) if [ -f "$state/onbuild-$(key "$ref")" ]; then echo 1; else echo 0; fi ;;
		*) cat "$state/images/$(key "$ref")"; echo ;;
		esac
		exit 0
	fi
	echo "Error: No such image: $ref" >&2; exit 1 ;;
"image ls")
	for f in "$state"/images/*; do [ -f "$f" ] && printf '%s\tsha256:1\t5MB\t1 hour ago\n' "$(cat "$f.ref")"; done; exit 0 ;;
esac
case "$1" in
build)
	shift; label= ref= ctx=
	while [ $# -gt 1 ]; do
		case "$1" in
		--label) label=${2#labctl.recipe=}; shift 2 ;;
		-t) ref=$2; shift 2 ;;
		--build-arg) echo "build-arg $2" >> "$state/calls"; shift 2 ;;
		*) shift ;;
		esac
	done
	ctx=$1
	ls "$ctx" | tr '\n' ' ' > "$state/context"
	[ -f "$state/fail-build" ] && { echo "Step 1/2 : FROM nowhere"; echo "failed"; exit 1; }
	mkdir -p "$state/images"
	printf '%s' "$label" > "$state/images/$(key "$ref")"
	printf '%s' "$ref" > "$state/images/$(key "$ref").ref"
	echo "Step 1/1 : FROM scratch" ;;
run)
	for a in "$@"; do
		case "$a" in type=bind,src=*,dst=/out) out=${a#type=bind,src=}; out=${out%,dst=/out} ;; esac
	done
	[ -f "$state/fail-run" ] && { echo "go: module lookup disabled by GOPROXY=off"; exit 1; }
	printf 'program' > "$out/app" ;;
rm) ;;
pull)
	[ -f "$state/registry-has-$(key "$2")" ] || { echo "pull access denied" >&2; exit 1; }
	mkdir -p "$state/images"; printf '' > "$state/images/$(key "$2")"; printf '%s' "$2" > "$state/images/$(key "$2").ref" ;;
*) echo "fake docker: unexpected $*" >&2; exit 3 ;;
esac
`

func newFakeDocker(t *testing.T, withGo bool) *fakeDocker {
	t.Helper()
	f := &fakeDocker{dir: t.TempDir(), state: t.TempDir()}
	f.log = filepath.Join(f.state, "calls")
	script := strings.Replace(fakeDockerScript, "STATE", f.state, 1)
	if err := os.WriteFile(filepath.Join(f.dir, "docker"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	path := f.dir + string(os.PathListSeparator) + "/usr/bin:/bin"
	if withGo {
		goBin, err := exec.LookPath("go")
		if err != nil {
			t.Skip("no go on PATH")
		}
		path = f.dir + string(os.PathListSeparator) + filepath.Dir(goBin) + string(os.PathListSeparator) + "/usr/bin:/bin"
	}
	t.Setenv("PATH", path)
	return f
}

// has makes the engine hold ref with the recipe label.
func (f *fakeDocker) has(t *testing.T, ref, label string) {
	t.Helper()
	key := strings.NewReplacer("/", "_", ":", "_").Replace(ref)
	if err := os.MkdirAll(filepath.Join(f.state, "images"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(f.state, "images", key), []byte(label), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(f.state, "images", key+".ref"), []byte(ref), 0o644); err != nil {
		t.Fatal(err)
	}
}

func (f *fakeDocker) touch(t *testing.T, name string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(f.state, name), nil, 0o644); err != nil {
		t.Fatal(err)
	}
}

// calls returns the docker commands run since the last call, and forgets them.
func (f *fakeDocker) calls(t *testing.T) []string {
	t.Helper()
	data, err := os.ReadFile(f.log)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	os.Remove(f.log)
	return strings.Split(strings.TrimSpace(string(data)), "\n")
}

func countPrefix(lines []string, prefix string) int {
	n := 0
	for _, l := range lines {
		if strings.HasPrefix(l, prefix) {
			n++
		}
	}
	return n
}

// writeRecipe writes files (slash paths relative to dir) and returns dir.
func writeRecipe(t *testing.T, dir string, files map[string]string) string {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func labWithImages(images ...lab.Image) *lab.Lab {
	return &lab.Lab{Metadata: lab.Metadata{Name: "w"}, Cluster: lab.Cluster{Images: images}}
}

func testBuilder(t *testing.T, status *strings.Builder) *builder {
	t.Helper()
	opts := Options{CacheDir: t.TempDir()}
	if status != nil {
		opts.Status = plainStatus(status)
	}
	b, err := newBuilder(opts)
	if err != nil {
		t.Fatal(err)
	}
	b.registry = func(context.Context) bool { t.Error("a registry was asked without Pull"); return false }
	return b
}

// A recipe without Go is built once, with its label, from a copy of its
// directory; an unchanged recipe is then used as it is and a changed one
// rebuilt.
func TestEnsureWorkloadsBuildsOnlyWhenTheRecipeChanged(t *testing.T) {
	f := newFakeDocker(t, false)
	labDir := t.TempDir()
	writeRecipe(t, labDir, map[string]string{"images/web/Dockerfile": "FROM scratch\nCOPY index.html /\n", "images/web/index.html": "hello\n"})
	l := labWithImages(lab.Image{Name: "labctl.local/web:1", Build: "images/web"})
	var status strings.Builder
	b := testBuilder(t, &status)

	got, err := b.ensureWorkloads(t.Context(), l, labDir)
	if err != nil || len(got) != 1 || got[0] != "labctl.local/web:1" {
		t.Fatalf("first ensure = %v, %v", got, err)
	}
	calls := f.calls(t)
	if countPrefix(calls, "build ") != 1 || countPrefix(calls, "build-arg") != 0 {
		t.Errorf("calls %q, want one build and no build argument (the Dockerfile names no BASE_IMAGE)", calls)
	}
	if ctx, _ := os.ReadFile(filepath.Join(f.state, "context")); string(ctx) != "Dockerfile index.html " {
		t.Errorf("build context held %q", ctx)
	}
	if !strings.Contains(status.String(), "Building workload image labctl.local/web:1") {
		t.Errorf("status %q", status.String())
	}

	if _, err := b.ensureWorkloads(t.Context(), l, labDir); err != nil {
		t.Fatal(err)
	}
	if calls := f.calls(t); countPrefix(calls, "build ") != 0 {
		t.Errorf("an unchanged recipe was rebuilt: %q", calls)
	}

	writeRecipe(t, labDir, map[string]string{"images/web/index.html": "hello again\n"})
	if _, err := b.ensureWorkloads(t.Context(), l, labDir); err != nil {
		t.Fatal(err)
	}
	if calls := f.calls(t); countPrefix(calls, "build ") != 1 {
		t.Errorf("a changed recipe was not rebuilt: %q", calls)
	}
}

// A recipe with a go.mod has its program built into the context as app
// first, in a container: the host's GOROOT and the recipe's copy
// read-only, no network, no capabilities, not root, bounded, with an
// environment that fetches nothing and reads no configuration.
func TestEnsureWorkloadsBuildsTheGoProgram(t *testing.T) {
	f := newFakeDocker(t, true)
	f.has(t, baseRef(), "")
	labDir := t.TempDir()
	writeRecipe(t, labDir, map[string]string{
		"web/go.mod":     "module example.test/web\n\ngo 1.22\n",
		"web/main.go":    "package main\n\nfunc main() {}\n",
		"web/Dockerfile": "FROM scratch\nCOPY app /app\n",
	})
	b := testBuilder(t, nil)
	if _, err := b.ensureWorkloads(t.Context(), labWithImages(lab.Image{Name: "web:1", Build: "web"}), labDir); err != nil {
		t.Fatal(err)
	}
	ctx, _ := os.ReadFile(filepath.Join(f.state, "context"))
	if !strings.Contains(string(ctx), "app ") {
		t.Errorf("build context %q lacks the program app", ctx)
	}
	if _, err := os.Stat(filepath.Join(labDir, "web", "app")); err == nil {
		t.Error("go build wrote into the lab's directory")
	}
	calls := f.calls(t)
	var run, build string
	for _, c := range calls {
		switch {
		case strings.HasPrefix(c, "run "):
			run = c
		case strings.HasPrefix(c, "build "):
			build = c
		}
	}
	tc, err := b.hostGo(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"--network none", "--cap-drop ALL", "--security-opt no-new-privileges", "--user 65532:65532", "--read-only",
		"--memory 2g", "--pids-limit 512", "--tmpfs /tmp:rw,nosuid,nodev,size=1g",
		"type=bind,src=" + tc.root + ",dst=" + tc.root + ",readonly", ",dst=/src,readonly",
		"--entrypoint " + tc.root + "/bin/go",
		"--env GOFLAGS=-buildvcs=false -mod=readonly", "--env GOTOOLCHAIN=local", "--env GOENV=off", "--env GOWORK=off",
		"--env GOPROXY=off", "--env CGO_ENABLED=0", "--env GOCACHE=/tmp/cache", "--env GOPATH=/tmp/gopath",
		" " + baseRef() + " build -trimpath -ldflags=-s -w -o /out/app .",
	} {
		if !strings.Contains(run, want) {
			t.Errorf("the go build's docker run lacks %q:\n%s", want, run)
		}
	}
	if !strings.HasPrefix(build, "build --network none ") {
		t.Errorf("docker build ran with a network: %q", build)
	}
}

// A recipe that vendors its modules builds with -mod=vendor; one whose
// build needs modules anyway fails with the fix.
func TestEnsureWorkloadsVendorAndOffline(t *testing.T) {
	f := newFakeDocker(t, true)
	f.has(t, baseRef(), "")
	labDir := writeRecipe(t, t.TempDir(), map[string]string{
		"web/go.mod":             "module example.test/web\n\ngo 1.22\n\nrequire example.test/dep v1.0.0\n",
		"web/vendor/modules.txt": "# example.test/dep v1.0.0\n## explicit\nexample.test/dep\n",
		"web/main.go":            "package main\n",
		"web/Dockerfile":         "FROM scratch\nCOPY app /app\n",
	})
	b := testBuilder(t, nil)
	l := labWithImages(lab.Image{Name: "web:1", Build: "web"})
	if _, err := b.ensureWorkloads(t.Context(), l, labDir); err != nil {
		t.Fatal(err)
	}
	if calls := f.calls(t); countPrefix(calls, "run ") != 1 || !strings.Contains(strings.Join(calls, "\n"), "--env GOFLAGS=-buildvcs=false -mod=vendor") {
		t.Errorf("calls %q, want one go build with -mod=vendor", calls)
	}
	f.touch(t, "fail-run")
	writeRecipe(t, labDir, map[string]string{"web/main.go": "package main\n\nfunc main() {}\n"})
	_, err := b.ensureWorkloads(t.Context(), l, labDir)
	if err == nil || !strings.Contains(err.Error(), "needs modules it does not vendor (builds are offline): run `go mod vendor` there") {
		t.Errorf("error %v", err)
	}
	if calls := f.calls(t); countPrefix(calls, "rm -f labctl-workload-go-") != 1 {
		t.Errorf("calls %q: a failed build's container is not removed", calls)
	}
}

// Without Go, a Go recipe's present image is used as it is (a bundle's);
// a missing one is an error that names the Go it needs and the bundle.
func TestEnsureWorkloadsWithoutGo(t *testing.T) {
	f := newFakeDocker(t, false)
	if _, err := exec.LookPath("go"); err == nil {
		t.Skip("go is in /usr/bin or /bin")
	}
	labDir := t.TempDir()
	writeRecipe(t, labDir, map[string]string{"web/go.mod": "module x\n\ngo 1.23.4\n", "web/main.go": "package main\n", "web/Dockerfile": "FROM scratch\n"})
	l := labWithImages(lab.Image{Name: "labctl.local/web:1", Build: "web"})
	b := testBuilder(t, nil)
	_, err := b.ensureWorkloads(t.Context(), l, labDir)
	want := "building labctl.local/web:1 needs Go 1.23.4 or later (" + filepath.Join(labDir, "web") +
		" holds a Go program) and there is no go command on PATH: install Go, or `labctl install` a bundle that holds the image"
	if err == nil || err.Error() != want {
		t.Errorf("error %v\nwant %s", err, want)
	}
	f.has(t, "labctl.local/web:1", "from-a-bundle")
	got, err := b.ensureWorkloads(t.Context(), l, labDir)
	if err != nil || len(got) != 1 {
		t.Errorf("with the image present: %v, %v", got, err)
	}
	if calls := f.calls(t); countPrefix(calls, "build") != 0 {
		t.Errorf("built without Go: %q", calls)
	}
}

// A Go older than the recipe's go directive builds nothing: a present
// image is used, a missing one is an error naming both versions.
func TestEnsureWorkloadsWithAnOldGo(t *testing.T) {
	f := newFakeDocker(t, true)
	labDir := writeRecipe(t, t.TempDir(), map[string]string{"web/go.mod": "module x\n\ngo 9.1\n", "web/main.go": "package main\n", "web/Dockerfile": "FROM scratch\n"})
	l := labWithImages(lab.Image{Name: "web:1", Build: "web"})
	b := testBuilder(t, nil)
	_, err := b.ensureWorkloads(t.Context(), l, labDir)
	if err == nil || !strings.Contains(err.Error(), "building web:1 needs Go 9.1 or later (") || !strings.Contains(err.Error(), "and the go command on PATH is go1.") {
		t.Errorf("error %v", err)
	}
	f.has(t, "web:1", "from-a-bundle")
	if got, err := b.ensureWorkloads(t.Context(), l, labDir); err != nil || len(got) != 1 {
		t.Errorf("with the image present: %v, %v", got, err)
	}
	if calls := f.calls(t); countPrefix(calls, "build") != 0 {
		t.Errorf("built with too old a Go: %q", calls)
	}
}

func TestGoAtLeast(t *testing.T) {
	for _, c := range []struct {
		have, want string
		ok         bool
	}{
		{"go1.26.8", "1.22", true}, {"go1.26.8", "1.26", true}, {"go1.26.8", "1.26.8", true}, {"go1.26.8", "1.26.9", false},
		{"go1.26.8", "1.27", false}, {"go1.26rc1", "1.26", true}, {"go1.26rc1", "1.26.1", false}, {"go2.0", "1.30", true},
		{"devel go1.27-abc", "1.26", true}, {"go1.26", "", true},
	} {
		if got := goAtLeast(c.have, c.want); got != c.ok {
			t.Errorf("goAtLeast(%q, %q) = %v", c.have, c.want, got)
		}
	}
}

func TestEnsureWorkloadsPassesTheBaseWhenAsked(t *testing.T) {
	f := newFakeDocker(t, false)
	f.has(t, baseRef(), "")
	labDir := writeRecipe(t, t.TempDir(), map[string]string{"tools/Dockerfile": "ARG BASE_IMAGE\nFROM ${BASE_IMAGE}\n"})
	b := testBuilder(t, nil)
	if _, err := b.ensureWorkloads(t.Context(), labWithImages(lab.Image{Name: "tools:1", Build: "tools"}), labDir); err != nil {
		t.Fatal(err)
	}
	if calls := f.calls(t); countPrefix(calls, "build-arg BASE_IMAGE="+baseRef()) != 1 {
		t.Errorf("calls %q, want the Debian base as BASE_IMAGE", calls)
	}
}

func TestEnsureWorkloadsPresentMissingOptional(t *testing.T) {
	f := newFakeDocker(t, false)
	f.has(t, "nginx:1.27", "")
	l := labWithImages(lab.Image{Name: "nginx:1.27"}, lab.Image{Name: "busybox:1.36", Optional: true})
	b := testBuilder(t, nil)
	got, err := b.ensureWorkloads(t.Context(), l, "")
	if err != nil || strings.Join(got, " ") != "nginx:1.27" {
		t.Errorf("ensure = %v, %v; want only the present required image", got, err)
	}
	l.Cluster.Images = append(l.Cluster.Images, lab.Image{Name: "labctl.local/db:2"})
	_, err = b.ensureWorkloads(t.Context(), l, "")
	want := "the lab needs image labctl.local/db:2 (cluster.images), and the local Docker engine does not have it: " +
		"`docker pull labctl.local/db:2` where a registry answers, or `labctl install` a bundle that holds it; then run this again"
	if err == nil || err.Error() != want {
		t.Errorf("a missing required image: %v\nwant %s", err, want)
	}
	if calls := f.calls(t); countPrefix(calls, "pull") != 0 {
		t.Errorf("pulled without Pull: %q", calls)
	}
}

func TestEnsureWorkloadsPullsWhenAsked(t *testing.T) {
	f := newFakeDocker(t, false)
	f.touch(t, "registry-has-nginx_1.27")
	b := testBuilder(t, nil)
	b.opts.Pull = true
	asked := 0
	b.registry = func(context.Context) bool { asked++; return true }
	l := labWithImages(lab.Image{Name: "nginx:1.27"}, lab.Image{Name: "busybox:1.36", Optional: true})
	got, err := b.ensureWorkloads(t.Context(), l, "")
	if err != nil || strings.Join(got, " ") != "nginx:1.27" {
		t.Errorf("ensure = %v, %v", got, err)
	}
	if calls := f.calls(t); countPrefix(calls, "pull ") != 2 || asked != 1 {
		t.Errorf("calls %q, registry asked %d times; want two pulls and one question", calls, asked)
	}
}

func TestEnsureWorkloadsBuildNeedsADirectory(t *testing.T) {
	newFakeDocker(t, false)
	_, err := testBuilder(t, nil).ensureWorkloads(t.Context(), labWithImages(lab.Image{Name: "web:1", Build: "web"}), "")
	if err == nil || !strings.Contains(err.Error(), "image web:1 is built from web, but this lab has no directory") {
		t.Errorf("error %v", err)
	}
}

func TestEnsureWorkloadsBuildFailure(t *testing.T) {
	f := newFakeDocker(t, false)
	f.touch(t, "fail-build")
	f.has(t, "nowhere:1", "")
	labDir := writeRecipe(t, t.TempDir(), map[string]string{"web/Dockerfile": "FROM nowhere:1\n"})
	_, err := testBuilder(t, nil).ensureWorkloads(t.Context(), labWithImages(lab.Image{Name: "web:1", Build: "web"}), labDir)
	if err == nil || !strings.HasPrefix(err.Error(), "building web:1 from "+filepath.Join(labDir, "web")+": docker build") ||
		!strings.Contains(err.Error(), "FROM nowhere") {
		t.Errorf("error %v", err)
	}
}

func TestWorkloadHash(t *testing.T) {
	r := recipe{tree: "t1"}
	if workloadHash(r, "") != workloadHash(r, "") {
		t.Fatal("the hash is not stable")
	}
	other := r
	other.tree = "t2"
	withGo := r
	withGo.goMod = true
	withBase := r
	withBase.usesBase = true
	hashes := map[string]string{
		"plain": workloadHash(r, ""), "other tree": workloadHash(other, ""),
		"go1.26": workloadHash(withGo, "go1.26.0"), "go1.27": workloadHash(withGo, "go1.27.0"),
		"base": workloadHash(withBase, ""),
	}
	seen := map[string]string{}
	for name, h := range hashes {
		if first, dup := seen[h]; dup {
			t.Errorf("%s and %s hash alike", name, first)
		}
		seen[h] = name
	}
	if goDirective("module x\n\ngo 1.22.1\n\nrequire y v1\n") != "1.22.1" || goDirective("module x\n") != "" {
		t.Error("goDirective")
	}
}

func TestWorkloadsListsPresence(t *testing.T) {
	f := newFakeDocker(t, false)
	f.has(t, "nginx:1.27", "")
	l := labWithImages(lab.Image{Name: "docker.io/library/nginx:1.27", Optional: true}, lab.Image{Name: "labctl.local/web:1", Build: "web"})
	list, err := Workloads(t.Context(), Options{CacheDir: t.TempDir()}, l)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 || !list[0].Present || list[0].Size != "5MB" || !list[0].Optional || list[1].Present || list[1].Build != "web" {
		t.Errorf("list = %+v", list)
	}
}
