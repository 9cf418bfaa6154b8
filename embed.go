// Package labctl holds the default lab, embedded into the binary: the
// GitOps drift lab's lab.yaml and the fixtures it mounts read-only in the
// sandbox.
package labctl

import (
	"bytes"
	"embed"
	"io/fs"
)

//go:embed lab.yaml
var defaultLab []byte

//go:embed all:fixtures
var defaultFixtures embed.FS

// DefaultLab returns a copy of the embedded lab.yaml.
func DefaultLab() []byte { return bytes.Clone(defaultLab) }

// DefaultFixtures returns the embedded fixtures/ directory, rooted at its
// content (fixtures/gitops/... is gitops/...).
func DefaultFixtures() fs.FS {
	sub, err := fs.Sub(defaultFixtures, "fixtures")
	if err != nil {
		// fs.Sub fails only for an invalid directory name; "fixtures" is valid.
		panic(err)
	}
	return sub
}
