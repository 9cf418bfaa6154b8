package e2etest

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
)

// SavedImage is one image of a DockerSave archive: its config (whose
// digest is the image's ID) and the names it is saved under.
type SavedImage struct {
	Config []byte
	Tags   []string
}

// ImageConfig is a small image config that differs with what; its one
// layer is imageLayer's.
func ImageConfig(what string) []byte {
	return []byte(`{"architecture":"amd64","os":"linux","comment":` + fmt.Sprintf("%q", what) +
		`,"rootfs":{"type":"layers","diff_ids":["` + ImageID(imageLayer()) + `"]},"config":{"Cmd":["/hello"]}}`)
}

// imageLayer is the one layer of DockerSave's images: a tar holding the
// file hello, about 5000 bytes that start with IMAGES-MARKER.
func imageLayer() []byte {
	var body bytes.Buffer
	body.WriteString("IMAGES-MARKER")
	for i := 0; body.Len() < 5000; i++ {
		fmt.Fprintf(&body, "layer %d\n", i)
	}
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	if err := tw.WriteHeader(&tar.Header{Name: "hello", Typeflag: tar.TypeReg, Mode: 0o755, Size: int64(body.Len())}); err != nil {
		panic(err)
	}
	tw.Write(body.Bytes())
	tw.Close()
	return b.Bytes()
}

// ImageID is the ID (config digest) of an image whose config is config.
func ImageID(config []byte) string {
	sum := sha256.Sum256(config)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// DockerSave returns a tar in the format `docker save` writes (Docker 25
// and later: OCI blobs with index.json, and manifest.json and
// repositories for older loaders), holding images and, shared by all of
// them, one layer of about 5000 bytes that starts with IMAGES-MARKER.
func DockerSave(images ...SavedImage) []byte {
	layer := bytes.NewBuffer(imageLayer())
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	file := func(name string, data []byte) {
		if err := tw.WriteHeader(&tar.Header{Name: name, Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(data))}); err != nil {
			panic(err)
		}
		if _, err := tw.Write(data); err != nil {
			panic(err)
		}
	}
	blob := func(data []byte) string {
		sum := sha256.Sum256(data)
		name := "blobs/sha256/" + hex.EncodeToString(sum[:])
		file(name, data)
		return name
	}
	for _, d := range []string{"blobs/", "blobs/sha256/"} {
		if err := tw.WriteHeader(&tar.Header{Name: d, Typeflag: tar.TypeDir, Mode: 0o755}); err != nil {
			panic(err)
		}
	}
	layerName := blob(layer.Bytes())
	type item struct {
		Config   string
		RepoTags []string
		Layers   []string
	}
	var items []item
	type desc struct {
		MediaType   string            `json:"mediaType"`
		Digest      string            `json:"digest"`
		Size        int               `json:"size"`
		Annotations map[string]string `json:"annotations,omitempty"`
	}
	var index []desc
	repos := map[string]map[string]string{}
	for _, im := range images {
		cfg := blob(im.Config)
		items = append(items, item{Config: cfg, RepoTags: im.Tags, Layers: []string{layerName}})
		man, _ := json.Marshal(map[string]any{
			"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
			"config": desc{MediaType: "application/vnd.oci.image.config.v1+json", Digest: "sha256:" + cfg[len("blobs/sha256/"):], Size: len(im.Config)},
			"layers": []desc{{MediaType: "application/vnd.oci.image.layer.v1.tar", Digest: "sha256:" + layerName[len("blobs/sha256/"):], Size: layer.Len()}},
		})
		manName := blob(man)
		for _, tag := range im.Tags {
			full := "docker.io/" + tag
			if first, _, ok := strings.Cut(tag, "/"); ok && strings.ContainsAny(first, ".:") {
				full = tag
			}
			repo, t := tag, "latest"
			if i := bytes.LastIndexByte([]byte(tag), ':'); i > bytes.LastIndexByte([]byte(tag), '/') {
				repo, t = tag[:i], tag[i+1:]
			}
			index = append(index, desc{MediaType: "application/vnd.oci.image.manifest.v1+json", Digest: "sha256:" + manName[len("blobs/sha256/"):], Size: len(man),
				Annotations: map[string]string{"io.containerd.image.name": full, "org.opencontainers.image.ref.name": t}})
			if repos[repo] == nil {
				repos[repo] = map[string]string{}
			}
			repos[repo][t] = cfg[len("blobs/sha256/"):]
		}
	}
	idx, _ := json.Marshal(map[string]any{"schemaVersion": 2, "mediaType": "application/vnd.oci.image.index.v1+json", "manifests": index})
	file("index.json", idx)
	m, _ := json.Marshal(items)
	file("manifest.json", m)
	file("oci-layout", []byte(`{"imageLayoutVersion":"1.0.0"}`))
	r, _ := json.Marshal(repos)
	file("repositories", r)
	if err := tw.Close(); err != nil {
		panic(err)
	}
	return b.Bytes()
}
