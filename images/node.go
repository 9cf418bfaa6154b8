package images

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/labctl/labctl/internal/fsx"
)

// nodeRefFor is the tag of the node image built on base.
func nodeRefFor(base string) string {
	return "labctl/node:" + KubernetesVersion + "-" + nodeHash(base)
}

// ensureNode returns a present node image: this recipe's image, or the
// upstream kindest/node when pulling is allowed and a registry answers, or
// a fresh local build.
func (b *builder) ensureNode(ctx context.Context) (string, error) {
	if ok, err := b.imageExists(ctx, NodeRef()); err != nil || ok {
		return NodeRef(), err
	}
	if b.opts.Pull {
		if ok, err := b.imageExists(ctx, UpstreamNodeImage); err != nil || ok {
			return UpstreamNodeImage, err
		}
		if ok, _ := b.tryPull(ctx, UpstreamNodeImage); ok {
			return UpstreamNodeImage, nil
		}
	}
	base, err := b.ensureBase(ctx)
	if err != nil {
		return "", err
	}
	ref := nodeRefFor(base)
	if ok, err := b.imageExists(ctx, ref); err != nil || ok {
		return ref, err
	}
	return ref, b.buildNode(ctx, base, ref)
}

// component is one control-plane image kubeadm runs.
type component struct {
	image  string   // as kubeadm names it, e.g. registry.k8s.io/etcd:3.7.0-0
	binary string   // file in a binaries directory
	dir    string   // that directory
	path   string   // where the image keeps the binary (its entrypoint)
	tools  []string // further binaries of dir the image keeps in /usr/local/bin
}

func (b *builder) buildNode(ctx context.Context, base, ref string) error {
	dirs := map[string]string{}
	for _, g := range []goBuild{kubernetesBuild(), etcdBuild(), corednsBuild(), pauseBuild()} {
		dir, err := b.binaries(ctx, g)
		if err != nil {
			return err
		}
		for name := range g.outputs {
			dirs[name] = dir
		}
	}
	work, err := os.MkdirTemp("", "labctl-node-")
	if err != nil {
		return fmt.Errorf("creating a build directory: %w", err)
	}
	defer os.RemoveAll(work)

	var components []component
	err = b.progress.phase(ctx, "Building control-plane images", func(ctx context.Context) error {
		listed, err := command{
			args:    []string{filepath.Join(dirs["kubeadm"], "kubeadm"), "config", "images", "list", "--kubernetes-version", KubernetesVersion},
			timeout: time.Minute, log: b.opts.Log,
		}.run(ctx)
		if err != nil {
			return fmt.Errorf("listing kubeadm's images: %w", err)
		}
		components, err = componentsFor(strings.Fields(listed), dirs)
		if err != nil {
			return err
		}
		for i, c := range components {
			b.progress.step("%s (%d of %d)", c.image, i+1, len(components))
			if err := b.buildComponent(ctx, base, c, filepath.Join(work, "components")); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}

	nodeBase := "labctl/node-base:" + nodeHash(base)
	err = b.progress.phase(ctx, "Building the node base "+nodeBase, func(ctx context.Context) error {
		return b.buildNodeBase(ctx, base, nodeBase, filepath.Join(work, "node-base"))
	})
	if err != nil {
		return err
	}
	return b.progress.phase(ctx, "Assembling the node image "+ref, func(ctx context.Context) error {
		return b.assembleNode(ctx, nodeBase, ref, nodeHash(base), dirs["kubeadm"], components)
	})
}

// componentsFor maps kubeadm's image list to the built binaries, and fails
// when kubeadm expects a version other than the one built.
func componentsFor(images []string, dirs map[string]string) ([]component, error) {
	want := map[string]string{
		"etcd":            etcdImageTag,
		"coredns/coredns": corednsVersion,
		"pause":           pauseImageTag,
	}
	var out []component
	for _, image := range images {
		name, tag, ok := strings.Cut(strings.TrimPrefix(image, "registry.k8s.io/"), ":")
		if !ok {
			return nil, fmt.Errorf("kubeadm listed an image without a tag: %q", image)
		}
		if v, pinned := want[name]; pinned && v != tag {
			return nil, fmt.Errorf("kubeadm %s expects %s but labctl builds %s: update the versions in images/images.go and the wrapper module", KubernetesVersion, image, v)
		}
		if !pinned(name) && tag != KubernetesVersion {
			return nil, fmt.Errorf("kubeadm listed %s, not %s", image, KubernetesVersion)
		}
		binary := strings.TrimPrefix(name, "coredns/")
		dir, ok := dirs[binary]
		if !ok {
			return nil, fmt.Errorf("kubeadm expects image %s, which labctl does not build", image)
		}
		path := "/usr/local/bin/" + binary
		if binary == "coredns" || binary == "pause" {
			path = "/" + binary
		}
		var tools []string
		if binary == "etcd" {
			tools = etcdTools
		}
		out = append(out, component{image: image, binary: binary, dir: dir, path: path, tools: tools})
	}
	if len(out) < 7 {
		return nil, fmt.Errorf("kubeadm listed only %d images (%s)", len(out), strings.Join(images, " "))
	}
	return out, nil
}

func pinned(name string) bool {
	return name == "etcd" || name == "coredns/coredns" || name == "pause"
}

// componentDockerfile is the recipe of a control-plane image holding one
// static binary at path and, in /usr/local/bin, the tools beside it.
func componentDockerfile(binary, path string, tools ...string) []string {
	entry, _ := json.Marshal([]string{path})
	lines := []string{"FROM scratch", "COPY " + binary + " " + path}
	if len(tools) > 0 {
		lines = append(lines, "COPY "+strings.Join(tools, " ")+" /usr/local/bin/")
	}
	return append(lines,
		"ENV PATH=/usr/local/bin:/usr/local/sbin:/usr/sbin:/usr/bin:/sbin:/bin",
		"ENTRYPOINT "+string(entry),
	)
}

func (b *builder) buildComponent(ctx context.Context, base string, c component, work string) error {
	ctxDir := filepath.Join(work, c.binary)
	if err := os.MkdirAll(ctxDir, 0o755); err != nil {
		return fmt.Errorf("creating %s: %w", ctxDir, err)
	}
	for _, name := range append([]string{c.binary}, c.tools...) {
		if err := linkOrCopy(filepath.Join(c.dir, name), filepath.Join(ctxDir, name)); err != nil {
			return err
		}
	}
	args := []string{"--label", "labctl.recipe=" + nodeHash(base), "-t", c.image}
	if c.binary == "kube-proxy" {
		for _, f := range []string{"kube-proxy.Dockerfile", "iptables-wrapper"} {
			if err := writeRecipeFile("node/"+f, filepath.Join(ctxDir, f)); err != nil {
				return err
			}
		}
		args = append(args, "--build-arg", "BASE_IMAGE="+base, "-f", filepath.Join(ctxDir, "kube-proxy.Dockerfile"))
	} else {
		dockerfile := strings.Join(componentDockerfile(c.binary, c.path, c.tools...), "\n") + "\n"
		if err := os.WriteFile(filepath.Join(ctxDir, "Dockerfile"), []byte(dockerfile), 0o644); err != nil {
			return fmt.Errorf("writing the %s recipe: %w", c.binary, err)
		}
	}
	if _, err := b.docker(ctx, 20*time.Minute, append(append([]string{"build"}, args...), ctxDir)...); err != nil {
		return fmt.Errorf("building %s: %w", c.image, err)
	}
	return nil
}

func (b *builder) buildNodeBase(ctx context.Context, base, tag, ctxDir string) error {
	if ok, err := b.imageExists(ctx, tag); err != nil || ok {
		return err
	}
	kindFiles, err := b.kindNodeFiles(ctx)
	if err != nil {
		return err
	}
	if err := copyKindFiles(kindFiles, filepath.Join(ctxDir, "kind")); err != nil {
		return err
	}
	if err := writeRecipeDir("node/files", filepath.Join(ctxDir, "files")); err != nil {
		return fmt.Errorf("writing the node recipe: %w", err)
	}
	if err := writeRecipeFile("node/node-base.Dockerfile", filepath.Join(ctxDir, "Dockerfile")); err != nil {
		return err
	}
	if _, err := b.dockerBuild(ctx, 30*time.Minute,
		"--build-arg", "BASE_IMAGE="+base,
		"--build-arg", "PAUSE_IMAGE=registry.k8s.io/pause:"+pauseImageTag,
		"--label", "labctl.recipe="+nodeHash(base),
		"-t", tag, ctxDir); err != nil {
		return fmt.Errorf("building %s: %w", tag, err)
	}
	return nil
}

// kindNodeFiles returns the directory of kind's node-image files in the
// sigs.k8s.io/kind module at the version labctl uses.
func (b *builder) kindNodeFiles(ctx context.Context) (string, error) {
	src, err := b.sourceDir()
	if err != nil {
		return "", err
	}
	var stdout strings.Builder
	_, err = command{
		args: []string{"go", "mod", "download", "-json", "sigs.k8s.io/kind@" + kindVersion},
		dir:  src, env: []string{"GOWORK=off"}, timeout: 5 * time.Minute, stdout: &stdout,
	}.run(ctx)
	var mod struct{ Dir, Error string }
	decodeErr := json.Unmarshal([]byte(stdout.String()), &mod)
	if err != nil || decodeErr != nil || mod.Error != "" {
		return "", fmt.Errorf("finding the sigs.k8s.io/kind module %s (needs the Go module proxy or a warm module cache): %s %w",
			kindVersion, mod.Error, errors.Join(err, decodeErr))
	}
	dir := filepath.Join(mod.Dir, "images", "base", "files")
	if _, err := os.Stat(filepath.Join(dir, "usr", "local", "bin", "entrypoint")); err != nil {
		return "", fmt.Errorf("kind's node files are not in %s: %w", dir, err)
	}
	return dir, nil
}

// copyKindFiles copies kind's node files (read-only in the module cache)
// with the modes kind's own Dockerfile gives them.
func copyKindFiles(src, dest string) error {
	return fsx.CopyTree(os.DirFS(src), dest, func(path string, _ fs.FileInfo, _ []byte) bool {
		return strings.HasPrefix(path, "usr/local/bin/") || strings.HasPrefix(path, "kind/bin/")
	})
}

// assembleNode runs the node base, adds the Kubernetes binaries and the
// control-plane images (imported into containerd's k8s.io namespace), and
// commits the result as ref.
func (b *builder) assembleNode(ctx context.Context, nodeBase, ref, recipeLabel, kubeDir string, components []component) (err error) {
	name := fmt.Sprintf("labctl-node-build-%d", time.Now().UnixNano())
	if _, err := b.docker(ctx, 2*time.Minute, "run", "-d", "--privileged", "--name", name,
		"--entrypoint", "sleep", nodeBase, "infinity"); err != nil {
		return fmt.Errorf("starting the build container: %w", err)
	}
	defer func() {
		cleanup, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer cancel()
		if _, rmErr := b.docker(cleanup, time.Minute, "rm", "-f", "-v", name); rmErr != nil && err == nil {
			err = fmt.Errorf("removing the build container: %w", rmErr)
		}
	}()
	for _, bin := range []string{"kubeadm", "kubelet", "kubectl"} {
		if _, err := b.docker(ctx, 5*time.Minute, "cp", filepath.Join(kubeDir, bin), name+":/usr/bin/"+bin); err != nil {
			return fmt.Errorf("copying %s: %w", bin, err)
		}
	}
	inNode := func(timeout time.Duration, script string) error {
		_, err := b.docker(ctx, timeout, "exec", name, "bash", "-euc", script)
		return err
	}
	if err := inNode(time.Minute, `nohup containerd >/tmp/containerd.log 2>&1 &
for i in $(seq 1 60); do ctr version >/dev/null 2>&1 && exit 0; sleep 1; done
cat /tmp/containerd.log; exit 1`); err != nil {
		return fmt.Errorf("starting containerd in the build container: %w", err)
	}
	images := make([]string, 0, len(components))
	for _, c := range components {
		images = append(images, c.image)
	}
	sort.Strings(images)
	_, err = command{
		args: []string{"bash", "-o", "pipefail", "-c",
			`docker save "${@:2}" | docker exec -i "$1" ctr --namespace=k8s.io images import --all-platforms --no-unpack --digests -`,
			"import", name},
		timeout: 20 * time.Minute, log: b.opts.Log,
	}.withArgs(images...).run(ctx)
	if err != nil {
		return fmt.Errorf("importing the control-plane images: %w", err)
	}
	listed, err := b.docker(ctx, time.Minute, "exec", name, "ctr", "--namespace=k8s.io", "images", "list", "-q")
	if err != nil {
		return fmt.Errorf("listing imported images: %w", err)
	}
	for _, image := range images {
		if !containsLine(listed, image) {
			return fmt.Errorf("%s is missing from the node's containerd after import", image)
		}
	}
	if err := inNode(time.Minute, `pkill containerd || true
for i in $(seq 1 30); do pgrep -x containerd >/dev/null || break; sleep 1; done
echo `+KubernetesVersion+` > /kind/version
rm -rf /tmp/* /var/log/*.log /run/containerd
kubeadm version -o short | grep -qx `+KubernetesVersion); err != nil {
		return fmt.Errorf("finishing the node: %w", err)
	}
	if _, err := b.docker(ctx, 20*time.Minute, "commit",
		"--change", `ENTRYPOINT [ "/usr/local/bin/entrypoint", "/sbin/init" ]`,
		"--change", `CMD []`,
		"--change", "LABEL labctl.recipe="+recipeLabel,
		name, ref); err != nil {
		return fmt.Errorf("committing %s: %w", ref, err)
	}
	return nil
}

func (c command) withArgs(args ...string) command {
	c.args = append(append([]string(nil), c.args...), args...)
	return c
}

func containsLine(text, line string) bool {
	for _, l := range strings.Split(text, "\n") {
		if strings.TrimSpace(l) == line {
			return true
		}
	}
	return false
}

// writeRecipeFile writes one embedded recipe file to dest.
func writeRecipeFile(name, dest string) error {
	data, err := recipes.ReadFile(name)
	if err != nil {
		return fmt.Errorf("reading the recipe %s: %w", name, err)
	}
	mode := os.FileMode(0o644)
	if strings.HasPrefix(string(data), "#!") {
		mode = 0o755
	}
	if err := os.WriteFile(dest, data, mode); err != nil {
		return fmt.Errorf("writing %s: %w", dest, err)
	}
	return nil
}

// linkOrCopy hard-links src to dest, copying when linking fails.
func linkOrCopy(src, dest string) error {
	if err := os.Link(src, dest); err == nil {
		return nil
	}
	data, err := os.ReadFile(src)
	if err != nil {
		return fmt.Errorf("reading %s: %w", src, err)
	}
	if err := os.WriteFile(dest, data, 0o755); err != nil {
		return fmt.Errorf("writing %s: %w", dest, err)
	}
	return nil
}
