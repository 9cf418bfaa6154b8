package images

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"
)

// goBuildFlags describes how every binary is built (part of the image hash).
const goBuildFlags = "CGO_ENABLED=0 -trimpath -ldflags=-s -w; kubernetes version stamped in component-base and client-go"

// goBuild is one `go build` of static binaries in a module of the source
// tree, cached under the cache directory by a hash of its inputs.
type goBuild struct {
	name     string            // phase name, e.g. "Kubernetes binaries"
	dir      string            // module directory, relative to the source tree
	requires [2]string         // module and version the wrapper must require ("" for none)
	pins     [][2]string       // further modules and versions the wrapper must require
	outputs  map[string]string // binary name -> package
	files    []moduleFiles     // files of a required module the image ships beside the binaries
	ldflags  string
}

// moduleFiles are files of a module the build requires (CRDs, say), copied
// from the module cache into the directory dest.
type moduleFiles struct {
	module string
	globs  []string // relative to the module's root
	dest   string
}

func kubernetesBuild() goBuild {
	outputs := map[string]string{}
	for _, name := range []string{"kubeadm", "kubelet", "kubectl", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kube-proxy"} {
		outputs[name] = "k8s.io/kubernetes/cmd/" + name
	}
	return goBuild{
		name:     "Kubernetes " + KubernetesVersion + " binaries",
		dir:      "images/node/build/kubernetes",
		requires: [2]string{"k8s.io/kubernetes", KubernetesVersion},
		outputs:  outputs,
		ldflags:  kubernetesLdflags(KubernetesVersion),
	}
}

// etcdTools are the commands the etcd image ships beside the server, in
// /usr/local/bin as the upstream image does, each from its own module at
// etcd's version.
var etcdTools = []string{"etcdctl", "etcdutl"}

func etcdBuild() goBuild {
	g := goBuild{
		name:     "etcd " + etcdVersion,
		dir:      "images/node/build/etcd",
		requires: [2]string{"go.etcd.io/etcd/server/v3", etcdVersion},
		outputs:  map[string]string{"etcd": "go.etcd.io/etcd/server/v3"},
		ldflags:  "-s -w",
	}
	for _, tool := range etcdTools {
		module := "go.etcd.io/etcd/" + tool + "/v3"
		g.pins = append(g.pins, [2]string{module, etcdVersion})
		g.outputs[tool] = module
	}
	return g
}

func corednsBuild() goBuild {
	return goBuild{
		name:     "CoreDNS " + corednsVersion,
		dir:      "images/node/build/coredns",
		requires: [2]string{"github.com/coredns/coredns", corednsVersion},
		outputs:  map[string]string{"coredns": "github.com/coredns/coredns"},
		ldflags:  "-s -w",
	}
}

func helmBuild() goBuild {
	return goBuild{
		name:     "helm " + HelmVersion,
		dir:      "images/sandbox/build/helm",
		requires: [2]string{"helm.sh/helm/v4", HelmVersion},
		outputs:  map[string]string{"helm": "helm.sh/helm/v4/cmd/helm"},
		ldflags:  helmLdflags(HelmVersion),
	}
}

// helmLdflags stamps version into helm as its own Makefile does; unstamped,
// `helm version` says only the minor version its source names.
func helmLdflags(version string) string {
	return "-s -w -X helm.sh/helm/v4/internal/version.version=" + version +
		" -X helm.sh/helm/v4/internal/version.gitTreeState=clean"
}

func yqBuild() goBuild {
	return goBuild{
		name:     "yq " + YqVersion,
		dir:      "images/sandbox/build/yq",
		requires: [2]string{"github.com/mikefarah/yq/v4", YqVersion},
		outputs:  map[string]string{"yq": "github.com/mikefarah/yq/v4"},
		ldflags:  "-s -w",
	}
}

func pauseBuild() goBuild {
	return goBuild{
		name:    "pause",
		dir:     ".",
		outputs: map[string]string{"pause": "./images/node/pause"},
		ldflags: "-s -w",
	}
}

// kubernetesLdflags stamps version into the binaries as Kubernetes' own
// build does; kubeadm refuses to work with an unstamped kubelet.
func kubernetesLdflags(version string) string {
	major, minor, _ := strings.Cut(strings.TrimPrefix(version, "v"), ".")
	minor, _, _ = strings.Cut(minor, ".")
	flags := []string{"-s", "-w"}
	for _, pkg := range []string{"k8s.io/component-base/version", "k8s.io/client-go/pkg/version"} {
		flags = append(flags,
			"-X", pkg+".gitVersion="+version,
			"-X", pkg+".gitMajor="+major,
			"-X", pkg+".gitMinor="+minor,
			"-X", pkg+".gitTreeState=clean",
			"-X", pkg+".gitCommit=0000000000000000000000000000000000000000",
			"-X", pkg+".buildDate=1970-01-01T00:00:00Z",
		)
	}
	return strings.Join(flags, " ")
}

// binaries builds g (unless its cache entry is complete) and returns the
// directory holding its outputs.
func (b *builder) binaries(ctx context.Context, g goBuild) (string, error) {
	src, err := b.sourceDir()
	if err != nil {
		return "", err
	}
	modDir := filepath.Join(src, g.dir)
	key, err := g.key(modDir)
	if err != nil {
		return "", err
	}
	out := filepath.Join(b.cacheDir, "bin", strings.Fields(g.name)[0]+"-"+key)
	if _, err := os.Stat(filepath.Join(out, ".complete")); err == nil {
		return out, nil
	}
	err = b.progress.phase(ctx, "Building "+g.name, func(ctx context.Context) error {
		return b.goBuild(ctx, g, modDir, out)
	})
	return out, err
}

func (b *builder) goBuild(ctx context.Context, g goBuild, modDir, out string) error {
	tmp := out + ".tmp"
	if err := os.RemoveAll(tmp); err != nil {
		return fmt.Errorf("cleaning %s: %w", tmp, err)
	}
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		return fmt.Errorf("creating %s: %w", tmp, err)
	}
	names := slices.Sorted(maps.Keys(g.outputs))
	for i, name := range names {
		pkg := g.outputs[name]
		if len(names) > 1 {
			b.progress.step("%s (%d of %d)", name, i+1, len(names))
		}
		_, err := (command{
			args: []string{"go", "build", "-trimpath", "-ldflags", g.ldflags, "-o", filepath.Join(tmp, name), pkg},
			dir:  modDir,
			env: []string{"CGO_ENABLED=0", "GOOS=linux", "GOARCH=" + runtime.GOARCH, "GOWORK=off",
				"GOFLAGS=-buildvcs=false"},
			timeout: 90 * time.Minute,
			log:     b.opts.Log,
		}).run(ctx)
		if err != nil {
			return fmt.Errorf("building %s: %w", name, err)
		}
	}
	for _, f := range g.files {
		if err := b.copyModuleFiles(ctx, modDir, f, filepath.Join(tmp, f.dest)); err != nil {
			return err
		}
	}
	if err := os.WriteFile(filepath.Join(tmp, ".complete"), []byte(g.name+"\n"), 0o644); err != nil {
		return fmt.Errorf("marking %s complete: %w", tmp, err)
	}
	if err := os.RemoveAll(out); err != nil {
		return fmt.Errorf("replacing %s: %w", out, err)
	}
	if err := os.Rename(tmp, out); err != nil {
		return fmt.Errorf("storing binaries: %w", err)
	}
	return nil
}

// copyModuleFiles copies f's files from the module cache into dest.
func (b *builder) copyModuleFiles(ctx context.Context, modDir string, f moduleFiles, dest string) error {
	var out bytes.Buffer
	_, err := (command{
		args:    []string{"go", "list", "-m", "-f", "{{.Dir}}", f.module},
		dir:     modDir,
		env:     []string{"GOWORK=off", "GOFLAGS=-buildvcs=false"},
		timeout: 10 * time.Minute,
		log:     b.opts.Log,
		stdout:  &out,
	}).run(ctx)
	if err != nil {
		return fmt.Errorf("finding module %s: %w", f.module, err)
	}
	root := strings.TrimSpace(out.String())
	if err := os.MkdirAll(dest, 0o755); err != nil {
		return err
	}
	for _, glob := range f.globs {
		matches, _ := filepath.Glob(filepath.Join(root, glob))
		if len(matches) == 0 {
			return fmt.Errorf("module %s has no %s", f.module, glob)
		}
		for _, m := range matches {
			data, err := os.ReadFile(m)
			if err != nil {
				return err
			}
			if err := os.WriteFile(filepath.Join(dest, filepath.Base(m)), data, 0o644); err != nil {
				return err
			}
		}
	}
	return nil
}

// key hashes what decides g's outputs: the module's go.mod, go.sum and own
// Go files (or the package sources for the main module's pause), flags, and
// platform.
// It also checks that the wrapper module requires the expected version.
func (g goBuild) key(modDir string) (string, error) {
	h := sha256.New()
	fmt.Fprintf(h, "%s\n%s\n%s/%s\n", g.name, g.ldflags, runtime.GOOS, runtime.GOARCH)
	for _, f := range g.files {
		fmt.Fprintf(h, "files %s %s -> %s\n", f.module, strings.Join(f.globs, ","), f.dest)
	}
	files := []string{"go.mod", "go.sum"}
	// A wrapper module's command of its own (tools.go only pins what
	// go.mod already says).
	own, _ := filepath.Glob(filepath.Join(modDir, "*.go"))
	for _, f := range own {
		if filepath.Base(f) != "tools.go" {
			files = append(files, filepath.Base(f))
		}
	}
	if g.dir == "." {
		files = nil
		for _, pkg := range g.outputs {
			matches, _ := filepath.Glob(filepath.Join(modDir, pkg, "*.go"))
			for _, m := range matches {
				rel, _ := filepath.Rel(modDir, m)
				files = append(files, rel)
			}
		}
	}
	for _, f := range files {
		data, err := os.ReadFile(filepath.Join(modDir, f))
		if err != nil {
			return "", fmt.Errorf("reading the build recipe %s: %w", filepath.Join(modDir, f), err)
		}
		for _, pin := range append([][2]string{g.requires}, g.pins...) {
			if f == "go.mod" && pin[0] != "" && !requires(string(data), pin[0], pin[1]) {
				return "", fmt.Errorf("%s does not require %s %s: the recipe and labctl's versions disagree (update the wrapper module's go.mod)",
					filepath.Join(modDir, f), pin[0], pin[1])
			}
		}
		fmt.Fprintf(h, "%s %d:%s\n", f, len(data), data)
	}
	return hex.EncodeToString(h.Sum(nil))[:12], nil
}

// requires reports whether go.mod text requires module at version.
func requires(gomod, module, version string) bool {
	for _, line := range strings.Split(gomod, "\n") {
		fields := strings.Fields(strings.TrimPrefix(strings.TrimSpace(line), "require "))
		if len(fields) >= 2 && fields[0] == module && fields[1] == version {
			return true
		}
	}
	return false
}
