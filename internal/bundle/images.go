package bundle

import (
	"archive/tar"
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"sort"
	"strings"
)

// ImageArchive is what the images entry, a `docker save` tar, would give
// `docker load`: every name it would tag and the image IDs each may get.
type ImageArchive struct {
	// Names are the references the archive names (manifest.json's
	// RepoTags, the legacy repositories file, index.json's image names),
	// as written, sorted and without duplicates.
	Names []string
	// IDs maps a name to the digests it may be given: its image's config
	// digest (the ID in Docker's classic image store) and, from index.json,
	// its manifest's digest (the ID in the containerd image store).
	IDs map[string][]string
}

// maxArchiveJSON bounds manifest.json, index.json and repositories.
const maxArchiveJSON = 4 << 20

// Archive entries that name images.
const (
	dockerManifest = "manifest.json"
	ociIndex       = "index.json"
	repositories   = "repositories"
	ociLayout      = "oci-layout"
)

// ReadImageArchive reads the images entry through, streaming, and returns
// the names and IDs it holds; nil, nil for a bundle without images. It
// refuses, with an *Error, what `docker load` could read otherwise than
// this reader: a compressed stream, paths that are not clean or appear
// twice, links, devices and sparse entries among the files that name
// images (a link anywhere but a legacy layer), and blobs or configs whose
// content is not the digest their names say.
func (b *Bundle) ReadImageArchive(ctx context.Context) (*ImageArchive, error) {
	rc, err := b.OpenImages()
	if err != nil || rc == nil {
		return nil, err
	}
	defer rc.Close()
	bad := func(format string, args ...any) error {
		return &Error{File: b.file, Problem: "is refused: its " + ImagesName + " " + fmt.Sprintf(format, args...),
			Fix: "nothing was installed; get the lab from its author again, packed with `labctl pack`"}
	}
	br := bufio.NewReader(ctxReader{ctx, rc})
	head, _ := br.Peek(6)
	for _, magic := range [][]byte{{0x1f, 0x8b, 0x08}, []byte("BZh"), {0xfd, '7', 'z', 'X', 'Z', 0}, {0x28, 0xb5, 0x2f, 0xfd}} {
		if bytes.HasPrefix(head, magic) {
			return nil, bad("is compressed, and `labctl pack` writes it plain")
		}
	}
	tr := tar.NewReader(br)
	seen := map[string]bool{}
	sums := map[string]string{}  // regular file -> hex SHA-256
	links := map[string]string{} // symbolic link -> its target, cleaned
	named := map[string][]byte{}
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			// Read to the entry's end: its hash is checked there.
			if _, err := io.Copy(io.Discard, br); err != nil {
				return nil, err
			}
			break
		}
		if err != nil {
			var be *Error
			if errors.As(err, &be) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
				return nil, err
			}
			return nil, bad("is no tar archive `docker save` writes (%v)", err)
		}
		name, ok := archivePath(hdr.Name)
		if !ok {
			return nil, bad("holds the path %q, which is not clean or leaves the archive", hdr.Name)
		}
		if seen[name] {
			return nil, bad("holds %s twice", name)
		}
		seen[name] = true
		for k := range hdr.PAXRecords {
			if strings.HasPrefix(k, "GNU.sparse.") {
				return nil, bad("holds %s as a sparse entry", name)
			}
		}
		special := name == dockerManifest || name == ociIndex || name == repositories || name == ociLayout
		switch hdr.Typeflag {
		case tar.TypeDir:
			if special {
				return nil, bad("holds %s as a directory", name)
			}
		case tar.TypeReg:
			h := sha256.New()
			var w io.Writer = h
			var buf bytes.Buffer
			if special {
				if hdr.Size > maxArchiveJSON {
					return nil, bad("holds a %s of %d bytes", name, hdr.Size)
				}
				w = io.MultiWriter(h, &buf)
			}
			if _, err := io.Copy(w, tr); err != nil {
				var be *Error
				if errors.As(err, &be) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
					return nil, err
				}
				return nil, bad("is truncated in %s (%v)", name, err)
			}
			sums[name] = hex.EncodeToString(h.Sum(nil))
			if special {
				named[name] = buf.Bytes()
			}
		case tar.TypeSymlink:
			// Docker's legacy format links a layer saved twice to its
			// first copy: only a layer may be a link, within the archive.
			target, ok := archivePath(path.Join(path.Dir(name), hdr.Linkname))
			if special || !ok || path.Base(name) != "layer.tar" {
				return nil, bad("holds %s as a link to %q", name, hdr.Linkname)
			}
			links[name] = target
		default:
			return nil, bad("holds %s of tar type %q (a hard link, device or FIFO)", name, hdr.Typeflag)
		}
	}
	// Every blob is the content its name says.
	for name, sum := range sums {
		if hexName, ok := strings.CutPrefix(name, "blobs/sha256/"); ok && hexName != sum {
			return nil, bad("holds %s, whose content has SHA-256 %.12s…", name, sum)
		}
	}
	a := &ImageArchive{IDs: map[string][]string{}}
	names := map[string]bool{}
	addID := func(ref, id string) {
		names[ref] = true
		if id != "" {
			a.IDs[ref] = append(a.IDs[ref], id)
		}
	}
	if data, ok := named[dockerManifest]; ok {
		var items []struct {
			Config   string
			RepoTags []string
			Layers   []string
		}
		if err := json.Unmarshal(data, &items); err != nil {
			return nil, bad("has a %s that does not decode (%v)", dockerManifest, err)
		}
		for _, it := range items {
			cfg, ok := archivePath(it.Config)
			if !ok {
				return nil, bad("names the config %q", it.Config)
			}
			sum, ok := sums[cfg]
			if !ok {
				return nil, bad("names the config %s, which it does not hold as a file", cfg)
			}
			if want := strings.TrimSuffix(path.Base(cfg), ".json"); len(want) == 64 && want != sum {
				return nil, bad("holds the config %s, whose content has SHA-256 %.12s…", cfg, sum)
			}
			for _, ref := range it.RepoTags {
				addID(ref, "sha256:"+sum)
			}
		}
	}
	if data, ok := named[repositories]; ok {
		var repos map[string]map[string]string
		if err := json.Unmarshal(data, &repos); err != nil {
			return nil, bad("has a %s file that does not decode (%v)", repositories, err)
		}
		for repo, tags := range repos {
			for tag := range tags {
				addID(repo+":"+tag, "")
			}
		}
	}
	if data, ok := named[ociIndex]; ok {
		var index struct {
			Manifests []struct {
				Digest      string
				Annotations map[string]string
			}
		}
		if err := json.Unmarshal(data, &index); err != nil {
			return nil, bad("has an %s that does not decode (%v)", ociIndex, err)
		}
		for _, m := range index.Manifests {
			image := m.Annotations["io.containerd.image.name"]
			ref := m.Annotations["org.opencontainers.image.ref.name"]
			if image != "" {
				addID(image, m.Digest)
			}
			// A ref name that is only a tag goes with the image name.
			if ref != "" && (image == "" || strings.ContainsAny(ref, "/:@")) {
				addID(ref, m.Digest)
			}
		}
	}
	for n := range names {
		a.Names = append(a.Names, n)
	}
	sort.Strings(a.Names)
	return a, nil
}

// archivePath is p as `docker load` resolves it inside the archive, and
// whether it stays there and is written cleanly (no "..", no empty or
// "." segments beyond a leading "./", no NUL or backslash).
func archivePath(p string) (string, bool) {
	p = strings.TrimSuffix(strings.TrimPrefix(p, "./"), "/")
	if p == "" || path.Clean(p) != p || !localPath(p) {
		return "", false
	}
	return p, true
}
