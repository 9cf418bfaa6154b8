package images

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// Versions of the add-ons' programs (images/addons/build/*, modules of
// their own like the node's).
const (
	flannelVersion    = "v0.28.10"
	kubeRouterVersion = "v2.1.0"
	localPathVersion  = "v0.0.30"
	metricsVersion    = "v0.8.0"
	gatewayAPIVersion = "v1.6.3"
)

// addonSources is the hash (addonSourcesHash) of the add-on wrapper
// modules' files: the images' tags are known without the source tree, and
// TestAddonSourcesRecorded fails until a change to them is recorded here.
const addonSources = "5052cadc10fa"

// addonImage is one image of add-on programs, built on the Debian base
// from its recipe directory and the binaries of its builds.
type addonImage struct {
	repo, recipe string
	versions     []string
	builds       []goBuild
	scratch      bool // static programs only: no Debian base
}

// nodeAddons are the add-ons every node runs or that run anywhere:
// flanneld (Pod routes), kube-router's firewall (NetworkPolicy),
// local-path-provisioner (storage), and the reach checks' Pods.
var nodeAddons = addonImage{
	repo: "labctl/addons", recipe: "addons",
	versions: []string{flannelVersion, kubeRouterVersion, localPathVersion},
	builds: []goBuild{{
		name:     "flanneld " + flannelVersion,
		dir:      "images/addons/build/flannel",
		requires: [2]string{"github.com/flannel-io/flannel", flannelVersion},
		outputs:  map[string]string{"flanneld": "."},
		ldflags:  "-s -w",
	}, {
		name:     "kube-router " + kubeRouterVersion,
		dir:      "images/addons/build/netpol",
		requires: [2]string{"github.com/cloudnativelabs/kube-router/v2", kubeRouterVersion},
		outputs:  map[string]string{"kube-router": "github.com/cloudnativelabs/kube-router/v2/cmd/kube-router"},
		ldflags:  "-s -w",
	}, {
		name:     "local-path-provisioner " + localPathVersion,
		dir:      "images/addons/build/localpath",
		requires: [2]string{"github.com/rancher/local-path-provisioner", localPathVersion},
		outputs:  map[string]string{"local-path-provisioner": "github.com/rancher/local-path-provisioner"},
		ldflags:  "-s -w",
	}},
}

// serveAddons are the add-ons that serve the cluster's users from the
// control-plane node: labctl-ingress (Ingress and Gateway API, with the
// Gateway API's CRDs) and metrics-server. An image of their own, from
// scratch, keeps their 100 MB off labs that only ask for policies or
// storage, and loads nothing else.
var serveAddons = addonImage{
	repo: "labctl/addons-serve", recipe: "addons-serve", scratch: true,
	versions: []string{metricsVersion, gatewayAPIVersion},
	builds: []goBuild{{
		name:     "labctl-ingress",
		dir:      "images/addons/build/ingress",
		requires: [2]string{"sigs.k8s.io/gateway-api", gatewayAPIVersion},
		outputs:  map[string]string{"labctl-ingress": "."},
		files: []moduleFiles{{
			module: "sigs.k8s.io/gateway-api", dest: "gateway-crds",
			globs: []string{"config/crd/standard/gateway.networking.k8s.io_gatewayclasses.yaml",
				"config/crd/standard/gateway.networking.k8s.io_gateways.yaml",
				"config/crd/standard/gateway.networking.k8s.io_httproutes.yaml",
				"config/crd/standard/gateway.networking.k8s.io_referencegrants.yaml"},
		}},
		ldflags: "-s -w",
	}, {
		name:     "metrics-server " + metricsVersion,
		dir:      "images/addons/build/metrics",
		requires: [2]string{"sigs.k8s.io/metrics-server", metricsVersion},
		outputs:  map[string]string{"metrics-server": "sigs.k8s.io/metrics-server/cmd/metrics-server"},
		ldflags:  "-s -w",
	}},
}

func (a addonImage) ref() string {
	base := "scratch"
	if !a.scratch {
		base = baseRef()
	}
	return a.repo + ":" + hashOf(append([]string{base, addonSources, goBuildFlags}, a.versions...), a.recipe, "node/iptables-wrapper")
}

// AddonsRef is the tag of the image that holds the node add-ons' programs.
func AddonsRef() string { return nodeAddons.ref() }

// ServeAddonsRef is the tag of the image that holds the ingress and
// metrics add-ons' programs.
func ServeAddonsRef() string { return serveAddons.ref() }

func addonBuilds() []goBuild { return append(slices.Clone(nodeAddons.builds), serveAddons.builds...) }

// EnsureAddons returns the node add-ons image, building it (and the
// Debian base) when the engine lacks it. Only labs that ask for an
// add-on, have workers or reach checks need it.
func EnsureAddons(ctx context.Context, opts Options) (string, error) {
	return ensureAddonImage(ctx, opts, nodeAddons)
}

// EnsureServeAddons returns the ingress and metrics image, building it
// when the engine lacks it.
func EnsureServeAddons(ctx context.Context, opts Options) (string, error) {
	return ensureAddonImage(ctx, opts, serveAddons)
}

func ensureAddonImage(ctx context.Context, opts Options, a addonImage) (string, error) {
	b, err := newBuilder(opts)
	if err != nil {
		return "", err
	}
	if ok, err := b.imageExists(ctx, a.ref()); err != nil || ok {
		return a.ref(), err
	}
	// Two labctl processes (or parallel tests) that both lack the image
	// build it one after the other, never into the same cache directory
	// at once; the second finds it built.
	unlock, err := b.lockCache(ctx)
	if err != nil {
		return "", err
	}
	defer unlock()
	return b.ensureAddon(ctx, a)
}

// ensureAddon builds the add-on image a unless the engine has it; the
// caller holds the cache's build lock.
func (b *builder) ensureAddon(ctx context.Context, a addonImage) (string, error) {
	ref := a.ref()
	if ok, err := b.imageExists(ctx, ref); err != nil || ok {
		return ref, err
	}
	if err := b.checkAddonSources(); err != nil {
		return "", err
	}
	base := "scratch"
	var err error
	if !a.scratch {
		if base, err = b.ensureBase(ctx); err != nil {
			return "", err
		}
	}
	work, err := os.MkdirTemp("", "labctl-addons-")
	if err != nil {
		return "", fmt.Errorf("creating a build directory: %w", err)
	}
	defer os.RemoveAll(work)
	for _, g := range a.builds {
		dir, err := b.binaries(ctx, g)
		if err != nil {
			return "", err
		}
		for name := range g.outputs {
			if err := linkOrCopy(filepath.Join(dir, name), filepath.Join(work, name)); err != nil {
				return "", err
			}
		}
		for _, f := range g.files {
			if err := os.CopyFS(filepath.Join(work, f.dest), os.DirFS(filepath.Join(dir, f.dest))); err != nil {
				return "", fmt.Errorf("copying %s: %w", f.dest, err)
			}
		}
	}
	if err := writeRecipeDir(a.recipe, work); err != nil {
		return "", fmt.Errorf("writing the add-ons recipe: %w", err)
	}
	if err := writeRecipeFile("node/iptables-wrapper", filepath.Join(work, "iptables-wrapper")); err != nil {
		return "", err
	}
	err = b.progress.phase(ctx, "Building the add-ons image "+ref, func(ctx context.Context) error {
		_, err := b.dockerBuild(ctx, 20*time.Minute,
			"--build-arg", "BASE_IMAGE="+base,
			"--label", "labctl.recipe="+ref,
			"-t", ref, work)
		return err
	})
	if err != nil {
		return "", fmt.Errorf("building %s: %w", ref, err)
	}
	return ref, nil
}

// checkAddonSources refuses to build from wrapper modules whose files are
// not the ones addonSources records: the image would carry a tag that
// does not say what it holds.
func (b *builder) checkAddonSources() error {
	src, err := b.sourceDir()
	if err != nil {
		return err
	}
	got, err := addonSourcesHash(src)
	if err != nil {
		return err
	}
	if got != addonSources {
		return fmt.Errorf("the add-on wrapper modules (images/addons/build) hash to %s but images/addons.go records %s: set addonSources to %s", got, addonSources, got)
	}
	return nil
}

// addonSourcesHash hashes every file of the add-on wrapper modules in the
// source tree src.
func addonSourcesHash(src string) (string, error) {
	root := filepath.Join(src, "images", "addons", "build")
	var parts []string
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		parts = append(parts, filepath.ToSlash(rel), string(data))
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("reading the add-on recipes: %w", err)
	}
	return hashOf(parts), nil
}
