package docker

import (
	"archive/tar"
	"bytes"
	"errors"
	"strings"
	"testing"
)

// tarOf is an archive of one entry.
func tarOf(t *testing.T, h tar.Header, body string) *bytes.Buffer {
	t.Helper()
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	h.Size = int64(len(body))
	if h.Typeflag != tar.TypeReg {
		h.Size = 0
		body = ""
	}
	if err := tw.WriteHeader(&h); err != nil {
		t.Fatal(err)
	}
	if _, err := tw.Write([]byte(body)); err != nil {
		t.Fatal(err)
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return &b
}

// What the engine sends for a path is one regular file of the name asked,
// within the bound; anything else is refused, never read on.
func TestReadOneFile(t *testing.T) {
	got, err := readOneFile(tarOf(t, tar.Header{Typeflag: tar.TypeReg, Name: "app.conf", Mode: 0o644}, "listen 80\n"), "app.conf", 100)
	if err != nil || string(got) != "listen 80\n" {
		t.Fatalf("got %q, %v", got, err)
	}
	for _, tc := range []struct {
		name string
		h    tar.Header
		body string
		want error
	}{
		{"a link put there since", tar.Header{Typeflag: tar.TypeSymlink, Name: "app.conf", Linkname: "/proc/1/environ"}, "", ErrNotRegular},
		{"a directory", tar.Header{Typeflag: tar.TypeDir, Name: "app.conf/"}, "", ErrNotRegular},
		{"a FIFO", tar.Header{Typeflag: tar.TypeFifo, Name: "app.conf"}, "", ErrNotRegular},
		{"a device", tar.Header{Typeflag: tar.TypeChar, Name: "app.conf", Devmajor: 1, Devminor: 5}, "", ErrNotRegular},
		{"another name", tar.Header{Typeflag: tar.TypeReg, Name: "other"}, "x", ErrNotRegular},
		{"over the bound", tar.Header{Typeflag: tar.TypeReg, Name: "app.conf"}, strings.Repeat("x", 101), ErrTooLarge},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := readOneFile(tarOf(t, tc.h, tc.body), "app.conf", 100)
			if !errors.Is(err, tc.want) || got != nil {
				t.Fatalf("got %q, %v; want %v", got, err, tc.want)
			}
		})
	}
}

// What the engine sends for a repository's directory is kept whole when it
// is that directory and within the bound; a link or a file put there
// since, or an archive over the bound, is refused.
func TestReadTree(t *testing.T) {
	dir := tarOf(t, tar.Header{Typeflag: tar.TypeDir, Name: "app/", Mode: 0o755}, "")
	want := dir.Bytes()
	got, err := readTree(bytes.NewReader(want), "app", 1<<20)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("got %d bytes, %v; want the archive", len(got), err)
	}
	if _, err := readTree(bytes.NewReader(want), "app", int64(len(want)-1)); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("over the bound: %v, want ErrTooLarge", err)
	}
	for name, h := range map[string]tar.Header{
		"a link put there since": {Typeflag: tar.TypeSymlink, Name: "app", Linkname: "/proc/1/root"},
		"a file":                 {Typeflag: tar.TypeReg, Name: "app"},
		"another directory":      {Typeflag: tar.TypeDir, Name: "other/"},
	} {
		if _, err := readTree(tarOf(t, h, ""), "app", 1<<20); !errors.Is(err, ErrNotRegular) {
			t.Errorf("%s: %v, want ErrNotRegular", name, err)
		}
	}
}
