// Package bundle owns the lab bundle: one tar file that carries a lab and
// the images it runs to a machine without a registry. The first entry is a
// JSON manifest (format version, the lab's name, version and digest, the
// labctl that wrote it, every entry with its size and SHA-256, the image
// references); then the lab's files under lab/; then, last, one
// `docker save` tar of the images. Writing and reading both stream, so the
// memory used does not grow with the images (the node image alone is over
// 1 GB); reading checks every entry against the manifest before anything
// is used.
package bundle

import (
	"encoding/hex"
	"fmt"
	"path"
	"strings"
	"time"
)

// FormatVersion is the bundle format this labctl writes and reads.
const FormatVersion = 1

// Entry names inside a bundle.
const (
	// ManifestName is the first entry.
	ManifestName = "labctl-bundle.json"
	// ImagesName is the last entry, a `docker save` tar, when the bundle
	// holds images.
	ImagesName = "images.tar"
	// LabPrefix is the directory every file of the lab is under.
	LabPrefix = "lab/"
)

// maxManifest bounds the manifest a reader accepts.
const maxManifest = 4 << 20

// Kinds of entries.
const (
	KindDir    = "dir"
	KindFile   = "file"
	KindImages = "images"
)

// Manifest describes a bundle: the first entry, as JSON.
type Manifest struct {
	// Format is the bundle format version (FormatVersion).
	Format int `json:"format"`
	Lab    Lab `json:"lab"`
	// Labctl is the version of the labctl that wrote the bundle.
	Labctl  string    `json:"labctl"`
	Created time.Time `json:"created"`
	// Entries are the entries after the manifest, in the order they come.
	Entries []Entry `json:"entries"`
	// Images are the images in the images entry.
	Images []Image `json:"images"`
}

// Lab identifies the bundle's lab.
type Lab struct {
	Name    string `json:"name"`
	Title   string `json:"title,omitempty"`
	Version string `json:"version,omitempty"`
	// Digest identifies the lab's installed content (labstore's digest).
	Digest string `json:"digest"`
}

// Entry is one entry of the bundle after the manifest.
type Entry struct {
	Path string `json:"path"`
	Kind string `json:"kind"`
	// Size and SHA256 are the content's, for files and the images.
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256,omitempty"`
	// Executable files get mode 0755, others 0644.
	Executable bool `json:"executable,omitempty"`
}

// Image is one image the bundle holds.
type Image struct {
	Ref string `json:"ref"`
	// ID is the image's ID in the engine that saved it, when known.
	ID string `json:"id,omitempty"`
}

// ImageRefs are the references of m's images.
func (m *Manifest) ImageRefs() []string {
	refs := make([]string, len(m.Images))
	for i, im := range m.Images {
		refs[i] = im.Ref
	}
	return refs
}

// check reports the first thing wrong with m's entries, which a reader
// trusts only after this: relative clean paths under lab/ (or the images
// entry, last), no duplicates, known kinds, sizes and hashes well formed.
func (m *Manifest) check() error {
	seen := map[string]bool{}
	for i, e := range m.Entries {
		if seen[e.Path] {
			return fmt.Errorf("the manifest lists %s twice", e.Path)
		}
		seen[e.Path] = true
		switch e.Kind {
		case KindImages:
			if e.Path != ImagesName || i != len(m.Entries)-1 {
				return fmt.Errorf("the manifest's images entry %q is not %s, last", e.Path, ImagesName)
			}
		case KindDir, KindFile:
			rel, ok := strings.CutPrefix(e.Path, LabPrefix)
			if !ok || rel == "" || path.Clean(rel) != rel || !localPath(rel) {
				return fmt.Errorf("the manifest lists %q, which is not a path inside the lab", e.Path)
			}
		default:
			return fmt.Errorf("the manifest lists %s of unknown kind %q", e.Path, e.Kind)
		}
		if e.Kind != KindDir {
			if e.Size < 0 {
				return fmt.Errorf("the manifest gives %s a negative size", e.Path)
			}
			if b, err := hex.DecodeString(e.SHA256); err != nil || len(b) != 32 {
				return fmt.Errorf("the manifest gives %s no SHA-256", e.Path)
			}
		}
	}
	if len(m.Images) > 0 && !seen[ImagesName] {
		return fmt.Errorf("the manifest names images but no %s entry", ImagesName)
	}
	if !seen[LabPrefix+"lab.yaml"] {
		return fmt.Errorf("the manifest lists no %slab.yaml", LabPrefix)
	}
	return nil
}

// localPath reports whether p (slash-separated, clean) stays inside its
// root: not absolute, no "..", no backslashes or NULs.
func localPath(p string) bool {
	if p == "." || strings.HasPrefix(p, "/") || strings.ContainsAny(p, "\\\x00") {
		return false
	}
	for _, seg := range strings.Split(p, "/") {
		if seg == ".." {
			return false
		}
	}
	return true
}
