package bundle

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeBundle(t *testing.T, images []byte) string {
	t.Helper()
	src := t.TempDir()
	if err := os.WriteFile(filepath.Join(src, "lab.yaml"), []byte("kind: Lab\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "b.labctl.tar")
	f, err := os.Create(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	_, err = Write(context.Background(), f, WriteOptions{
		LabDir: src, Files: []File{{Path: "lab.yaml"}}, Lab: Lab{Name: "b", Digest: "sha256:x"},
		Images: []Image{{Ref: "labctl.local/b:1"}},
		SaveImages: func(_ context.Context, w io.Writer) error {
			_, err := w.Write(images)
			return err
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return file
}

// The images are read twice, to check and to load; a file changed in
// between fails the second read.
func TestOpenImagesChecksAgain(t *testing.T) {
	images := bytes.Repeat([]byte("layer\n"), 300)
	file := writeBundle(t, images)
	b, err := Verify(context.Background(), file, t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	r, err := b.OpenImages()
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(r)
	r.Close()
	if err != nil || !bytes.Equal(got, images) {
		t.Fatalf("images read back: %d bytes, %v", len(got), err)
	}

	body, _ := os.ReadFile(file)
	i := bytes.Index(body, []byte("layer\nlayer"))
	body[i] = 'L'
	if err := os.WriteFile(file, body, 0o644); err != nil {
		t.Fatal(err)
	}
	r, err = b.OpenImages()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var be *Error
	if _, err := io.ReadAll(r); !errors.As(err, &be) || !strings.Contains(err.Error(), "changed since it was checked") {
		t.Errorf("a changed images entry read: %v", err)
	}
}

// A manifest that names paths outside the lab is refused before anything
// is written.
func TestManifestPathsStayInside(t *testing.T) {
	for _, bad := range []string{"lab/../escape", "lab//etc/passwd", "/etc/passwd", "lab/", "other/x", "lab/a\\..\\b"} {
		body := []byte("x")
		sum := sha256.Sum256(body)
		m := Manifest{Format: FormatVersion, Lab: Lab{Name: "b"}, Entries: []Entry{
			{Path: "lab/lab.yaml", Kind: KindFile, Size: 1, SHA256: hex.EncodeToString(sum[:])},
			{Path: bad, Kind: KindFile, Size: 1, SHA256: hex.EncodeToString(sum[:])},
		}}
		mb, _ := json.Marshal(m)
		var b bytes.Buffer
		tw := tar.NewWriter(&b)
		tw.WriteHeader(&tar.Header{Name: ManifestName, Mode: 0o644, Size: int64(len(mb))})
		tw.Write(mb)
		for _, name := range []string{"lab/lab.yaml", bad} {
			tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: 1})
			tw.Write(body)
		}
		tw.Close()
		file := filepath.Join(t.TempDir(), "evil.tar")
		if err := os.WriteFile(file, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		_, err := Verify(context.Background(), file, filepath.Join(dir, "lab"), nil)
		if err == nil || !strings.Contains(err.Error(), "is corrupt") {
			t.Errorf("%q: %v", bad, err)
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 0 {
			t.Errorf("%q: Verify wrote %v", bad, entries)
		}
	}
}
