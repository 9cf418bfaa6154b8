package bundle

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strings"
	"testing"

	"github.com/labctl/labctl/cmd/labctl/e2etest"
)

// archive is a tar of entries, in order; a nil body with a link makes a
// link of type typ.
type archiveEntry struct {
	name string
	body string
	typ  byte
	link string
}

func archive(t *testing.T, entries ...archiveEntry) []byte {
	t.Helper()
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	for _, e := range entries {
		typ := e.typ
		if typ == 0 {
			typ = tar.TypeReg
		}
		h := &tar.Header{Name: e.name, Typeflag: typ, Mode: 0o644, Linkname: e.link}
		if typ == tar.TypeReg {
			h.Size = int64(len(e.body))
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(e.body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func sha(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

func readArchive(t *testing.T, images []byte) (*ImageArchive, error) {
	t.Helper()
	b, err := Verify(context.Background(), writeBundle(t, images), t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	return b.ReadImageArchive(context.Background())
}

// A `docker save` tar gives its names and IDs from manifest.json,
// index.json and repositories.
func TestReadImageArchive(t *testing.T) {
	cfg := e2etest.ImageConfig("web")
	a, err := readArchive(t, e2etest.DockerSave(e2etest.SavedImage{Config: cfg, Tags: []string{"labctl.local/b:1", "labctl/node:v1"}}))
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"docker.io/labctl/node:v1", "labctl.local/b:1", "labctl/node:v1"}; !slices.Equal(a.Names, want) {
		t.Errorf("names %q, want %q", a.Names, want)
	}
	if ids := a.IDs["labctl.local/b:1"]; len(ids) != 2 || ids[0] != e2etest.ImageID(cfg) {
		t.Errorf("IDs of labctl.local/b:1: %q, want the config's digest and the manifest's", ids)
	}
}

// What `docker load` could read otherwise than ReadImageArchive: refused.
func TestImageArchiveTricksAreRefused(t *testing.T) {
	cfg := `{"architecture":"amd64"}`
	manifest := `[{"Config":"blobs/sha256/` + sha(cfg) + `","RepoTags":["labctl.local/b:1"],"Layers":[]}]`
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(archive(t, archiveEntry{name: "manifest.json", body: manifest}))
	zw.Close()
	for _, tc := range []struct {
		name   string
		images []byte
		want   string
	}{
		{"a second manifest.json", archive(t,
			archiveEntry{name: "blobs/sha256/" + sha(cfg), body: cfg},
			archiveEntry{name: "manifest.json", body: manifest},
			archiveEntry{name: "./manifest.json", body: `[{"Config":"blobs/sha256/` + sha(cfg) + `","RepoTags":["labctl/node:v1"]}]`}),
			"holds manifest.json twice"},
		{"manifest.json as a link", archive(t,
			archiveEntry{name: "blobs/sha256/" + sha(cfg), body: cfg},
			archiveEntry{name: "x/layer.tar", body: manifest},
			archiveEntry{name: "manifest.json", typ: tar.TypeSymlink, link: "x/layer.tar"}),
			"holds manifest.json as a link"},
		{"a hard link", archive(t,
			archiveEntry{name: "blobs/sha256/" + sha(cfg), body: cfg},
			archiveEntry{name: "manifest.json", typ: tar.TypeLink, link: "blobs/sha256/" + sha(cfg)}),
			"a hard link, device or FIFO"},
		{"a link out of the archive", archive(t,
			archiveEntry{name: "x/layer.tar", typ: tar.TypeSymlink, link: "../../../etc/shadow"}),
			"as a link to"},
		{"a path with ..", archive(t, archiveEntry{name: "blobs/../manifest.json", body: manifest}),
			"which is not clean or leaves the archive"},
		{"a compressed archive", gz.Bytes(), "is compressed"},
		{"a blob that is not its digest", archive(t, archiveEntry{name: "blobs/sha256/" + sha(cfg), body: cfg + " "}),
			"whose content has SHA-256"},
		{"a config that is not its name", archive(t,
			archiveEntry{name: sha(cfg) + ".json", body: cfg + " "},
			archiveEntry{name: "manifest.json", body: `[{"Config":"` + sha(cfg) + `.json","RepoTags":["labctl.local/b:1"]}]`}),
			"holds the config"},
		{"a config it does not hold", archive(t, archiveEntry{name: "manifest.json", body: manifest}),
			"which it does not hold as a file"},
		{"a manifest.json with trailing data", archive(t,
			archiveEntry{name: "blobs/sha256/" + sha(cfg), body: cfg},
			archiveEntry{name: "manifest.json", body: manifest + `[{"RepoTags":["labctl/node:v1"]}]`}),
			"does not decode"},
		{"a directory named manifest.json", archive(t, archiveEntry{name: "manifest.json/", typ: tar.TypeDir}),
			"holds manifest.json as a directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, err := readArchive(t, tc.images)
			var be *Error
			if err == nil || !strings.Contains(err.Error(), tc.want) || !asError(err, &be) {
				t.Errorf("read: %+v, %v; want an *Error saying %q", a, err, tc.want)
			}
		})
	}

	// Names only the legacy repositories file or index.json give count.
	for _, tc := range []struct {
		name   string
		images []byte
		want   string
	}{
		{"repositories", archive(t, archiveEntry{name: "repositories", body: `{"labctl/node":{"v1":"abc"}}`}), "labctl/node:v1"},
		{"index.json", archive(t, archiveEntry{name: "index.json", body: `{"manifests":[{"digest":"sha256:` + sha("m") + `","annotations":{"io.containerd.image.name":"docker.io/labctl/node:v1"}}]}`}), "docker.io/labctl/node:v1"},
		{"index.json's ref name alone", archive(t, archiveEntry{name: "index.json", body: `{"manifests":[{"digest":"sha256:` + sha("m") + `","annotations":{"org.opencontainers.image.ref.name":"labctl/node:v1"}}]}`}), "labctl/node:v1"},
		{"a key of another case", archive(t,
			archiveEntry{name: "blobs/sha256/" + sha(cfg), body: cfg},
			archiveEntry{name: "manifest.json", body: `[{"config":"blobs/sha256/` + sha(cfg) + `","REPOTAGS":["labctl/node:v1"]}]`}), "labctl/node:v1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, err := readArchive(t, tc.images)
			if err != nil || !slices.Contains(a.Names, tc.want) {
				t.Errorf("read: %+v, %v; want the name %s", a, err, tc.want)
			}
		})
	}
}

func asError(err error, target **Error) bool {
	e, ok := err.(*Error)
	*target = e
	return ok
}
