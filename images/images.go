// Package images owns the two container images a lab needs: the kind node
// image the cluster runs on and the sandbox image the learner works in. It
// uses an image already present, pulls one when asked and a registry
// answers, and otherwise builds both offline: a Debian base from
// debootstrap, Kubernetes, etcd, CoreDNS and pause built from Go modules,
// and kind's node files taken from the sigs.k8s.io/kind module. Built images
// are tagged by a hash of their recipe, so an unchanged recipe is never
// rebuilt. It drives Docker through the docker CLI.
package images

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"
)

// Versions of what the node image runs. kubeadm v1.37 expects exactly these
// etcd, CoreDNS and pause tags; the build checks them against its list.
const (
	KubernetesVersion = "v1.37.2"
	etcdVersion       = "v3.7.0"
	etcdImageTag      = "3.7.0-0"
	corednsVersion    = "v1.14.6"
	pauseImageTag     = "3.10.2"
	kindVersion       = "v0.33.0"
	debianSuite       = "bookworm"
)

// Versions of the tools the sandbox ships beside kubectl, each built from
// its Go module (images/sandbox/build) and shown by `labctl version`.
const (
	HelmVersion = "v4.3.2"
	YqVersion   = "v4.54.3"
)

// Images used instead of building when a registry answers and Options.Pull
// is set: kind v0.33.0's default node image, pinned by digest, and Debian's
// official image as the sandbox's base.
const (
	UpstreamNodeImage  = "kindest/node:v1.37.0@sha256:a1ed56cfb0e7b93589bdf97c8cd566405a265939e3620fc4f5de89adff580ae5"
	UpstreamDebianBase = "debian:bookworm"
)

// Refs names the images a lab runs.
type Refs struct {
	Node    string
	Sandbox string
	// Addons and ServeAddons are the add-on images, with Options.Addons.
	Addons, ServeAddons string
}

// Options control Ensure.
type Options struct {
	// Node and Sandbox select the images to ensure; when both are false,
	// both are.
	Node, Sandbox bool
	// Pull tries a registry (bounded to a few seconds when none answers)
	// before building: kindest/node for the node, debian:bookworm as the
	// sandbox's base.
	Pull bool
	// SourceDir is the labctl source tree holding images/node/build; empty
	// finds it from the working directory. Only builds need it.
	SourceDir string
	// CacheDir keeps built binaries and the Debian root filesystem; empty
	// means $XDG_CACHE_HOME/labctl or ~/.cache/labctl.
	CacheDir string
	// Status shows each phase and what it is on; nil shows nothing.
	Status Status
	// Log, when set, receives the output of every command run.
	Log io.Writer
	// Addons ensures the two add-on images too (EnsureAddons and
	// EnsureServeAddons), which labs that ask for add-ons or workers
	// otherwise build at their first up.
	Addons bool
}

func (o Options) wantNode() bool    { return o.Node || !o.Sandbox }
func (o Options) wantSandbox() bool { return o.Sandbox || !o.Node }

// NodeRef is the tag of the node image built from this binary's recipe.
func NodeRef() string { return nodeRefFor(baseRef()) }

// SandboxRef is the tag of the sandbox image built from this binary's
// recipe on the debootstrap'd Debian base.
func SandboxRef() string { return "labctl/sandbox:" + sandboxHash(baseRef()) }

// Ensure makes the selected images present in the local Docker engine and
// returns their references. An image already present is used as it is.
func Ensure(ctx context.Context, opts Options) (Refs, error) {
	b, err := newBuilder(opts)
	if err != nil {
		return Refs{}, err
	}
	if refs, ok, err := b.present(ctx); err != nil || ok {
		return refs, err
	}
	unlock, err := b.lockCache(ctx)
	if err != nil {
		return Refs{}, err
	}
	defer unlock()
	var refs Refs
	if opts.wantNode() {
		if refs.Node, err = b.ensureNode(ctx); err != nil {
			return refs, fmt.Errorf("ensuring the node image: %w", err)
		}
	}
	if opts.wantSandbox() {
		if refs.Sandbox, err = b.ensureSandbox(ctx); err != nil {
			return refs, fmt.Errorf("ensuring the sandbox image: %w", err)
		}
	}
	if opts.Addons {
		if refs.Addons, err = b.ensureAddon(ctx, nodeAddons); err != nil {
			return refs, err
		}
		if refs.ServeAddons, err = b.ensureAddon(ctx, serveAddons); err != nil {
			return refs, err
		}
	}
	return refs, nil
}

// present returns the default refs when every selected one is already in
// the engine, so a ready machine never waits for the build lock.
func (b *builder) present(ctx context.Context) (Refs, bool, error) {
	var refs Refs
	if b.opts.wantNode() {
		ok, err := b.imageExists(ctx, NodeRef())
		if err != nil || !ok {
			return Refs{}, false, err
		}
		refs.Node = NodeRef()
	}
	if b.opts.wantSandbox() {
		ok, err := b.imageExists(ctx, SandboxRef())
		if err != nil || !ok {
			return Refs{}, false, err
		}
		refs.Sandbox = SandboxRef()
	}
	if b.opts.Addons {
		for _, a := range []struct {
			ref string
			to  *string
		}{{AddonsRef(), &refs.Addons}, {ServeAddonsRef(), &refs.ServeAddons}} {
			ok, err := b.imageExists(ctx, a.ref)
			if err != nil || !ok {
				return Refs{}, false, err
			}
			*a.to = a.ref
		}
	}
	return refs, true, nil
}

// builder carries what every build step shares.
type builder struct {
	opts     Options
	cacheDir string
	progress *progress
	registry func(ctx context.Context) bool
}

func newBuilder(opts Options) (*builder, error) {
	cache := opts.CacheDir
	if cache == "" {
		dir, err := os.UserCacheDir()
		if err != nil {
			return nil, fmt.Errorf("finding a cache directory: %w (set XDG_CACHE_HOME)", err)
		}
		cache = filepath.Join(dir, "labctl")
	}
	return &builder{
		opts:     opts,
		cacheDir: cache,
		progress: newProgress(opts.Status),
		registry: dockerHubAnswers,
	}, nil
}

// sourceDir returns the labctl source tree the Go builds run in.
func (b *builder) sourceDir() (string, error) {
	if b.opts.SourceDir != "" {
		return filepath.Abs(b.opts.SourceDir)
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("finding the labctl source tree: %w", err)
	}
	for dir := wd; ; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "images", "node", "build", "kubernetes", "go.mod")); err == nil {
			return dir, nil
		}
		if filepath.Dir(dir) == dir {
			break
		}
	}
	return "", errors.New("building images needs the labctl source tree (images/node/build): run from a labctl checkout or pass --source DIR, or load a bundle with `labctl images load FILE`")
}

// pullTimeout bounds a registry pull of one image once a registry answered.
const pullTimeout = 20 * time.Minute

// ControlPlane names the images of a virtual control plane (a class's per
// learner): the node image holds them, built like the rest.
type ControlPlane struct {
	Etcd, APIServer, ControllerManager string
	// Scheduler and Proxy run beside the others when a class gives each
	// learner a node; DNS runs on that node, from the node image's own
	// images.
	Scheduler, Proxy, DNS string
}

// ControlPlaneImages are the control-plane images this labctl builds.
func ControlPlaneImages() ControlPlane {
	return ControlPlane{
		Etcd:              "registry.k8s.io/etcd:" + etcdImageTag,
		APIServer:         "registry.k8s.io/kube-apiserver:" + KubernetesVersion,
		ControllerManager: "registry.k8s.io/kube-controller-manager:" + KubernetesVersion,
		Scheduler:         "registry.k8s.io/kube-scheduler:" + KubernetesVersion,
		Proxy:             "registry.k8s.io/kube-proxy:" + KubernetesVersion,
		DNS:               "registry.k8s.io/coredns/coredns:" + corednsVersion,
	}
}
