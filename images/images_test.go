package images

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

func TestRefsAreStableAndHashTagged(t *testing.T) {
	if NodeRef() != NodeRef() || SandboxRef() != SandboxRef() {
		t.Fatal("refs differ between calls")
	}
	if !regexp.MustCompile(`^labctl/node:v1\.37\.2-[0-9a-f]{12}$`).MatchString(NodeRef()) {
		t.Errorf("NodeRef() = %q", NodeRef())
	}
	if !regexp.MustCompile(`^labctl/sandbox:[0-9a-f]{12}$`).MatchString(SandboxRef()) {
		t.Errorf("SandboxRef() = %q", SandboxRef())
	}
	if nodeHash("a") == nodeHash("b") || sandboxHash("a") == sandboxHash("b") {
		t.Error("the base image does not change the hash")
	}
	if NodeRef() == nodeRefFor(UpstreamDebianBase) {
		t.Error("the node ref ignores its base")
	}
}

func TestHashCoversRecipeFiles(t *testing.T) {
	with := hashOf([]string{"x"}, "sandbox")
	without := hashOf([]string{"x"})
	if with == without {
		t.Error("embedded recipe files do not enter the hash")
	}
	if hashOf([]string{"ab", "c"}) == hashOf([]string{"a", "bc"}) {
		t.Error("hash parts are not delimited")
	}
	for _, name := range []string{"sandbox/Dockerfile", "sandbox/labctl.sh", "node/node-base.Dockerfile", "node/kube-proxy.Dockerfile",
		"node/iptables-wrapper", "node/files/etc/cni/net.d/10-labctl.conflist", "node/pause/main.go"} {
		if _, err := recipes.ReadFile(name); err != nil {
			t.Errorf("recipe %s not embedded: %v", name, err)
		}
	}
}

// The wrapper modules are separate modules; the versions labctl's code
// names must be the ones they pin.
func TestWrapperModulesPinTheVersions(t *testing.T) {
	builds := append([]goBuild{kubernetesBuild(), etcdBuild(), corednsBuild()}, sandboxToolBuilds()...)
	for _, g := range append(builds, addonBuilds()...) {
		dir := filepath.Join(".", strings.TrimPrefix(g.dir, "images/"))
		if _, err := g.key(dir); err != nil {
			t.Errorf("%s: %v", g.name, err)
		}
		data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(string(data), "module github.com/labctl/labctl") {
			t.Errorf("%s must be its own module", dir)
		}
	}
	gomod, err := os.ReadFile("node/build/kubernetes/go.mod")
	if err != nil {
		t.Fatal(err)
	}
	staging := regexp.MustCompile(`(?m)^\s+(k8s\.io/[a-z-]+) => (k8s\.io/[a-z-]+) (v\S+)$`).FindAllStringSubmatch(string(gomod), -1)
	if len(staging) < 25 {
		t.Errorf("only %d staging replaces in the Kubernetes wrapper", len(staging))
	}
	for _, m := range staging {
		if m[1] != m[2] || m[3] != "v0.37.2" {
			t.Errorf("staging module %s pinned to %s %s, want itself at v0.37.2", m[1], m[2], m[3])
		}
	}
	bad := kubernetesBuild()
	bad.requires[1] = "v1.99.0"
	if _, err := bad.key("node/build/kubernetes"); err == nil || !strings.Contains(err.Error(), "v1.99.0") {
		t.Errorf("a version mismatch is not reported: %v", err)
	}
}

func TestKindVersionMatchesGoMod(t *testing.T) {
	data, err := os.ReadFile("../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	if !requires(string(data), "sigs.k8s.io/kind", kindVersion) {
		t.Errorf("go.mod does not require sigs.k8s.io/kind %s; update kindVersion and UpstreamNodeImage", kindVersion)
	}
}

func TestKubernetesLdflags(t *testing.T) {
	got := kubernetesLdflags("v1.37.2")
	for _, want := range []string{
		"-X k8s.io/component-base/version.gitVersion=v1.37.2",
		"-X k8s.io/component-base/version.gitMajor=1",
		"-X k8s.io/component-base/version.gitMinor=37",
		"-X k8s.io/client-go/pkg/version.gitVersion=v1.37.2",
		"-X k8s.io/client-go/pkg/version.gitTreeState=clean",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("ldflags lack %q: %s", want, got)
		}
	}
}

func TestComponentsFor(t *testing.T) {
	dirs := map[string]string{}
	for _, n := range []string{"kube-apiserver", "kube-controller-manager", "kube-scheduler", "kube-proxy", "coredns", "pause", "etcd"} {
		dirs[n] = "/bin/" + n
	}
	list := []string{
		"registry.k8s.io/kube-apiserver:v1.37.2", "registry.k8s.io/kube-controller-manager:v1.37.2",
		"registry.k8s.io/kube-scheduler:v1.37.2", "registry.k8s.io/kube-proxy:v1.37.2",
		"registry.k8s.io/coredns/coredns:v1.14.6", "registry.k8s.io/pause:3.10.2", "registry.k8s.io/etcd:3.7.0-0",
	}
	got, err := componentsFor(list, dirs)
	if err != nil {
		t.Fatal(err)
	}
	paths := map[string]string{}
	tools := map[string]string{}
	for _, c := range got {
		paths[c.image] = c.path
		tools[c.image] = strings.Join(c.tools, " ")
	}
	if paths["registry.k8s.io/coredns/coredns:v1.14.6"] != "/coredns" || paths["registry.k8s.io/etcd:3.7.0-0"] != "/usr/local/bin/etcd" {
		t.Errorf("paths = %v", paths)
	}
	// The etcd image ships etcdctl and etcdutl as the upstream one does;
	// no other image gets tools.
	for image, got := range tools {
		want := ""
		if image == "registry.k8s.io/etcd:3.7.0-0" {
			want = "etcdctl etcdutl"
		}
		if got != want {
			t.Errorf("%s ships tools %q, want %q", image, got, want)
		}
	}
	wrong := append([]string(nil), list...)
	wrong[6] = "registry.k8s.io/etcd:3.6.5-0"
	if _, err := componentsFor(wrong, dirs); err == nil || !strings.Contains(err.Error(), "etcd:3.6.5-0") {
		t.Errorf("an unexpected etcd version is not reported: %v", err)
	}
	if _, err := componentsFor(append(list, "registry.k8s.io/unknown:v1.37.2"), dirs); err == nil {
		t.Error("an image labctl does not build is not reported")
	}
}

func TestComponentDockerfile(t *testing.T) {
	got := strings.Join(componentDockerfile("etcd", "/usr/local/bin/etcd", etcdTools...), "\n")
	for _, want := range []string{"FROM scratch", "COPY etcd /usr/local/bin/etcd", "COPY etcdctl etcdutl /usr/local/bin/",
		`ENTRYPOINT ["/usr/local/bin/etcd"]`, "ENV PATH="} {
		if !strings.Contains(got, want) {
			t.Errorf("Dockerfile lacks %q:\n%s", want, got)
		}
	}
	if plain := strings.Join(componentDockerfile("kube-scheduler", "/usr/local/bin/kube-scheduler"), "\n"); strings.Count(plain, "COPY") != 1 {
		t.Errorf("an image without tools copies more than its binary:\n%s", plain)
	}
}

// TestEtcdBuildMakesItsTools: etcdctl and etcdutl are built from their own
// modules, which the wrapper must pin at etcd's version, and a change to
// the etcd image's tools changes the node image's tag.
func TestEtcdBuildMakesItsTools(t *testing.T) {
	g := etcdBuild()
	for _, tool := range etcdTools {
		module := "go.etcd.io/etcd/" + tool + "/v3"
		if g.outputs[tool] != module {
			t.Errorf("the etcd build makes %s from %q, want %s", tool, g.outputs[tool], module)
		}
		if !slices.Contains(g.pins, [2]string{module, etcdVersion}) {
			t.Errorf("the etcd build does not check that the wrapper pins %s %s", module, etcdVersion)
		}
	}
	dir := t.TempDir()
	gomod, err := os.ReadFile("node/build/etcd/go.mod")
	if err != nil {
		t.Fatal(err)
	}
	stale := strings.Replace(string(gomod), "go.etcd.io/etcd/etcdutl/v3 v3.7.0", "go.etcd.io/etcd/etcdutl/v3 v3.6.5", 1)
	os.WriteFile(filepath.Join(dir, "go.mod"), []byte(stale), 0o644)
	os.WriteFile(filepath.Join(dir, "go.sum"), nil, 0o644)
	if _, err := g.key(dir); err == nil || !strings.Contains(err.Error(), "etcdutl/v3 v3.7.0") {
		t.Errorf("a wrapper pinning etcdutl at another version is not reported: %v", err)
	}
	before := nodeHash("base")
	saved := etcdTools
	t.Cleanup(func() { etcdTools = saved })
	etcdTools = []string{"etcdctl"}
	if nodeHash("base") == before {
		t.Error("the node image's hash does not follow the etcd image's tools")
	}
}

func TestKindSettingsFor(t *testing.T) {
	own := KindSettingsFor("labctl/node:v1.37.2-abc")
	if !own.DisableDefaultCNI || len(own.KubeadmConfigPatches) != 2 {
		t.Errorf("labctl's node image: %+v", own)
	}
	if up := KindSettingsFor(UpstreamNodeImage); up.DisableDefaultCNI {
		t.Errorf("the upstream image brings kindnetd; settings %+v", up)
	}
}

func TestDebianMirror(t *testing.T) {
	tests := []struct{ name, sources, want string }{
		{"deb822", "Types: deb\n# comment\nURIs: http://mirror.example/debian\nSuites: bookworm\n", "http://mirror.example/debian"},
		{"one line with options", "deb [arch=amd64 signed-by=/k.gpg] https://m.example/debian/ bookworm main\n", "https://m.example/debian"},
		{"security only and others", "deb http://deb.debian.org/debian-security bookworm-security main\ndeb https://packages.example/apt stable main\n", defaultDebianMirror},
		{"commented", "# deb http://x.example/debian bookworm main\n", defaultDebianMirror},
		{"empty", "", defaultDebianMirror},
	}
	for _, tt := range tests {
		if got := debianMirror(tt.sources); got != tt.want {
			t.Errorf("%s: debianMirror = %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestParseImageList(t *testing.T) {
	out := NodeRef() + "\tsha256:1\t1.1GB\t2 hours ago\nlabctl/sandbox:old\t2\t200MB\t3 days ago\nnginx:1.27\t3\t180MB\t1 day ago\nbroken line\n"
	got := parseImageList(out)
	if len(got) != 2 {
		t.Fatalf("parseImageList = %+v, want the two labctl images", got)
	}
	if !got[0].Current || got[1].Current {
		t.Errorf("current marks wrong: %+v", got)
	}
}

func TestCommandErrorCarriesOutput(t *testing.T) {
	_, err := command{args: []string{"sh", "-c", "echo out; echo boom >&2; exit 3"}}.run(t.Context())
	if err == nil || !strings.Contains(err.Error(), "boom") || !strings.Contains(err.Error(), "exit status 3") {
		t.Errorf("error = %v, want the output and status", err)
	}
	out, err := command{args: []string{"sh", "-c", "echo fine"}}.run(t.Context())
	if err != nil || strings.TrimSpace(out) != "fine" {
		t.Errorf("run = %q, %v", out, err)
	}
}

func TestRegistryAnswers(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusUnauthorized) // what a registry says to anonymous /v2/
	}))
	url := srv.URL + "/v2/"
	if !registryAnswers(t.Context(), url) {
		t.Error("a registry answering 401 was not recognised")
	}
	srv.Close()
	if registryAnswers(t.Context(), url) {
		t.Error("a closed registry was reported as answering")
	}
}

func TestTryPullWithoutRegistryBuildsLocally(t *testing.T) {
	var status strings.Builder
	b, err := newBuilder(Options{Status: plainStatus(&status), CacheDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	b.registry = func(context.Context) bool { return false }
	ok, err := b.tryPull(t.Context(), UpstreamNodeImage)
	if ok || err != nil {
		t.Errorf("tryPull without a registry = %v, %v; want false, nil", ok, err)
	}
	if !strings.Contains(status.String(), "no container registry answers") {
		t.Errorf("status = %q", status.String())
	}
}

func TestOptionsSelection(t *testing.T) {
	if o := (Options{}); !o.wantNode() || !o.wantSandbox() {
		t.Error("no selection should mean both images")
	}
	if o := (Options{Node: true}); !o.wantNode() || o.wantSandbox() {
		t.Error("Node alone selects the sandbox too")
	}
	if o := (Options{Sandbox: true}); o.wantNode() || !o.wantSandbox() {
		t.Error("Sandbox alone selects the node too")
	}
}

func TestLockCacheExcludesASecondHolder(t *testing.T) {
	dir := t.TempDir()
	first, _ := newBuilder(Options{CacheDir: dir})
	unlock, err := first.lockCache(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var status strings.Builder
	second, _ := newBuilder(Options{CacheDir: dir, Status: plainStatus(&status)})
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := second.lockCache(ctx); err == nil {
		t.Fatal("a second holder took the lock while the first held it")
	}
	if !strings.Contains(status.String(), "waiting for another labctl") {
		t.Errorf("status = %q", status.String())
	}
	unlock()
	unlock2, err := second.lockCache(t.Context())
	if err != nil {
		t.Fatalf("lock not free after unlock: %v", err)
	}
	unlock2()
}

func TestSourceDir(t *testing.T) {
	b, _ := newBuilder(Options{CacheDir: t.TempDir()})
	got, err := b.sourceDir()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(got, "images", "node", "build", "kubernetes", "go.mod")); err != nil {
		t.Errorf("sourceDir() = %s, which lacks the wrapper module", got)
	}
	t.Chdir(t.TempDir())
	if _, err := b.sourceDir(); err == nil || !strings.Contains(err.Error(), "--source") {
		t.Errorf("outside a checkout: %v, want an error naming --source", err)
	}
}

// TestAddonSourcesRecorded holds addonSources to the add-on wrapper
// modules' files, so the add-ons image's tag changes with them.
func TestAddonSourcesRecorded(t *testing.T) {
	got, err := addonSourcesHash("..")
	if err != nil {
		t.Fatal(err)
	}
	if got != addonSources {
		t.Fatalf("images/addons/build hashes to %s but images/addons.go records %s; set addonSources to %s", got, addonSources, got)
	}
}

// TestBinariesKeyFollowsOwnCommand: a wrapper module's own command is part
// of its binaries' cache key (a change to it builds them anew); tools.go,
// which only pins, is not.
func TestBinariesKeyFollowsOwnCommand(t *testing.T) {
	dir := t.TempDir()
	for name, text := range map[string]string{"go.mod": "module x\n", "go.sum": "", "main.go": "package main\n", "tools.go": "//go:build tools\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	g := goBuild{name: "x", dir: "x", outputs: map[string]string{"x": "."}}
	before, err := g.key(dir)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "tools.go"), []byte("//go:build tools\n// pins\n"), 0o644)
	if same, _ := g.key(dir); same != before {
		t.Error("tools.go changed the key")
	}
	os.WriteFile(filepath.Join(dir, "main.go"), []byte("package main\n\nfunc main() {}\n"), 0o644)
	if after, _ := g.key(dir); after == before {
		t.Error("a changed main.go left the key unchanged: the old binary would be reused")
	}
}

// TestSandboxShipsItsTools: every tool the sandbox build makes is copied
// into the image, executable by every user (command checks run it as a
// user of their own), and helm's version is stamped.
func TestSandboxShipsItsTools(t *testing.T) {
	data, err := recipes.ReadFile("sandbox/Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	dockerfile := string(data)
	for _, g := range sandboxToolBuilds() {
		for name := range g.outputs {
			if !regexp.MustCompile(`(?m)^COPY kubectl( \S+)* ` + name + `( \S+)* /usr/local/bin/$`).MatchString(dockerfile) {
				t.Errorf("the sandbox's Dockerfile does not copy %s into /usr/local/bin", name)
			}
			if !regexp.MustCompile(`for tool in kubectl( \S+)* ` + name + `( \S+)*; do test "\$\(stat -c %a`).MatchString(dockerfile) {
				t.Errorf("the sandbox's Dockerfile does not check that %s is executable by every user", name)
			}
		}
	}
	if !strings.Contains(helmBuild().ldflags, "version.version="+HelmVersion) {
		t.Errorf("helm is built without its version stamped: %s", helmBuild().ldflags)
	}
}
