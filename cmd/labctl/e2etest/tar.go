package e2etest

import (
	"archive/tar"
	"io"
	"os"
	"strings"
	"testing"
)

// TarEntry returns the content of the entry name (a leading "./" ignored)
// in the tar file at path, and whether it is there.
func TarEntry(t testing.TB, path, name string) (string, bool) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return "", false
		}
		if err != nil {
			t.Fatalf("reading %s: %v", path, err)
		}
		if strings.TrimPrefix(h.Name, "./") == name {
			b, err := io.ReadAll(tr)
			if err != nil {
				t.Fatalf("reading %s in %s: %v", name, path, err)
			}
			return string(b), true
		}
	}
}
