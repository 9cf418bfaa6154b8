package images

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"io/fs"
	"sort"
	"strings"

	"github.com/labctl/labctl/internal/fsx"
)

// recipes are the files the images are built from. The Go wrapper modules
// under node/build and sandbox/build are separate modules (they cannot be
// embedded); their identity enters the hash through the versions they pin,
// which the build checks against them.
//
//go:embed node/node-base.Dockerfile node/kube-proxy.Dockerfile node/iptables-wrapper node/files node/pause/main.go
//go:embed sandbox/Dockerfile sandbox/labctl.sh addons/Dockerfile addons-serve/Dockerfile
var recipes embed.FS

// assemblyRevision enters the node and sandbox hashes: raise it whenever
// the Go code that assembles the images (node.go, sandbox.go) changes what
// they contain.
const assemblyRevision = "1"

// baseRecipe identifies the Debian root filesystem.
const baseRecipe = "debootstrap --variant=minbase " + debianSuite + " main; sources: " + debianSuite + ", -updates, -security"

// hashOf returns the first 12 hex digits of the SHA-256 of the parts and
// of the embedded files under the given directories.
func hashOf(parts []string, dirs ...string) string {
	h := sha256.New()
	for _, p := range parts {
		fmt.Fprintf(h, "%d:%s\n", len(p), p)
	}
	for _, dir := range dirs {
		var files []string
		err := fs.WalkDir(recipes, dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !d.IsDir() {
				files = append(files, path)
			}
			return nil
		})
		if err != nil {
			panic(fmt.Sprintf("walking embedded recipes %s: %v", dir, err))
		}
		sort.Strings(files)
		for _, f := range files {
			data, err := recipes.ReadFile(f)
			if err != nil {
				panic(fmt.Sprintf("reading embedded recipe %s: %v", f, err))
			}
			fmt.Fprintf(h, "%s %d:%s\n", f, len(data), data)
		}
	}
	return hex.EncodeToString(h.Sum(nil))[:12]
}

// baseRef is the tag of the debootstrap'd Debian base.
func baseRef() string {
	return "labctl/debian-base:" + debianSuite + "-" + hashOf([]string{baseRecipe})
}

// nodeHash identifies the node image: its base, every version it runs, how
// the binaries are built, kind's node files and the recipe files.
func nodeHash(base string) string {
	return hashOf([]string{
		base, KubernetesVersion, etcdVersion, etcdImageTag, corednsVersion, pauseImageTag,
		kindVersion, goBuildFlags, assemblyRevision, strings.Join(componentDockerfile("x", "/x"), "\n"),
		strings.Join(componentDockerfile("etcd", "/usr/local/bin/etcd", etcdTools...), "\n"),
	}, "node")
}

// sandboxHash identifies the sandbox image built on base.
func sandboxHash(base string) string {
	return hashOf([]string{base, KubernetesVersion, "helm " + HelmVersion, "yq " + YqVersion, helmLdflags(HelmVersion),
		goBuildFlags, assemblyRevision}, "sandbox")
}

// writeRecipeDir copies the embedded directory dir into dest, keeping
// executable bits only for files whose first line says so (scripts).
func writeRecipeDir(dir, dest string) error {
	sub, err := fs.Sub(recipes, dir)
	if err != nil {
		return err
	}
	return fsx.CopyTree(sub, dest, fsx.Script)
}
