package images

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// Versions of the add-ons' programs (images/addons/build/*, modules of
// their own like the node's).
const (
	flannelVersion    = "v0.28.10"
	kubeRouterVersion = "v2.1.0"
	localPathVersion  = "v0.0.30"
)

// addonSources is the hash (addonSourcesHash) of the add-on wrapper
// modules' files: the image's tag is known without the source tree, and
// TestAddonSourcesRecorded fails until a change to them is recorded here.
const addonSources = "899e921ac43a"

// AddonsRef is the tag of the image that holds every add-on's program.
func AddonsRef() string {
	return "labctl/addons:" + hashOf([]string{baseRef(), flannelVersion, kubeRouterVersion, localPathVersion,
		addonSources, goBuildFlags}, "addons", "node/iptables-wrapper")
}

func addonBuilds() []goBuild {
	return []goBuild{{
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
	}}
}

// EnsureAddons returns the add-ons image, building it (and the Debian base)
// when the engine lacks it. Only labs that ask for an add-on, or have
// workers, need it.
func EnsureAddons(ctx context.Context, opts Options) (string, error) {
	b, err := newBuilder(opts)
	if err != nil {
		return "", err
	}
	ref := AddonsRef()
	if ok, err := b.imageExists(ctx, ref); err != nil || ok {
		return ref, err
	}
	if err := b.checkAddonSources(); err != nil {
		return "", err
	}
	base, err := b.ensureBase(ctx)
	if err != nil {
		return "", err
	}
	work, err := os.MkdirTemp("", "labctl-addons-")
	if err != nil {
		return "", fmt.Errorf("creating a build directory: %w", err)
	}
	defer os.RemoveAll(work)
	for _, g := range addonBuilds() {
		dir, err := b.binaries(ctx, g)
		if err != nil {
			return "", err
		}
		for name := range g.outputs {
			if err := linkOrCopy(filepath.Join(dir, name), filepath.Join(work, name)); err != nil {
				return "", err
			}
		}
	}
	if err := writeRecipeDir("addons", work); err != nil {
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
