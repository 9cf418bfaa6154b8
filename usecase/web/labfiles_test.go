package web

import (
	"bytes"
	"image"
	"image/png"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// pngBytes is a small PNG image.
func pngBytes(t *testing.T) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, image.NewGray(image.Rect(0, 0, 4, 3))); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestLabImages: an image the lab's text writes as fixtures/PATH is shown
// from /lab-files/PATH, which serves raster images of the fixtures and
// nothing else: no SVG or HTML (they could run script in the page's
// origin), no link out of the fixtures, no "..", nothing too large, and
// nothing without the page's cookie.
func TestLabImages(t *testing.T) {
	dir := t.TempDir()
	outside := t.TempDir()
	img := pngBytes(t)
	write := func(dir, name string, data []byte) {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(dir, "img/flow.png", img)
	write(dir, "img/evil.svg", []byte(`<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>`))
	write(dir, "img/page.png", []byte("<!doctype html><script>alert(1)</script>"))
	write(dir, "img/huge.png", append(img, make([]byte, maxLabImage)...))
	write(outside, "secret.png", img)
	if err := os.Symlink(filepath.Join(outside, "secret.png"), filepath.Join(dir, "img", "link.png")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "out")); err != nil {
		t.Fatal(err)
	}
	ts := startServer(t, func(c *Config) {
		c.Fixtures = os.DirFS(dir)
		c.Lab.Steps[0].Instructions = "The flow: ![flow](fixtures/img/flow.png) and ![up](fixtures/../lab.yaml) ![far](https://example.com/x.png)"
	})

	_, body := ts.request(t, http.MethodGet, "/api/lab", "")
	if !strings.Contains(body, `src=\"/lab-files/img/flow.png\"`) {
		t.Errorf("the step's image is not shown from /lab-files:\n%s", body)
	}
	if strings.Contains(body, "/lab-files/../") || strings.Contains(body, "/lab-files/lab.yaml") {
		t.Errorf("an image out of the fixtures is shown from /lab-files:\n%s", body)
	}

	resp, got := ts.request(t, http.MethodGet, "/lab-files/img/flow.png", "")
	if resp.StatusCode != http.StatusOK || got != string(img) || resp.Header.Get("Content-Type") != "image/png" || resp.Header.Get("X-Content-Type-Options") != "nosniff" {
		t.Errorf("GET the lab's PNG: %d %q %q, %d bytes", resp.StatusCode, resp.Header.Get("Content-Type"), resp.Header.Get("X-Content-Type-Options"), len(got))
	}
	for _, p := range []string{
		"/lab-files/img/evil.svg", "/lab-files/img/page.png", "/lab-files/img/huge.png", "/lab-files/img/link.png",
		"/lab-files/out/secret.png", "/lab-files/img/none.png", "/lab-files/img", "/lab-files/../secret.png",
		"/lab-files/img/%2e%2e/img/flow.png", "/lab-files/",
	} {
		if resp, got := ts.request(t, http.MethodGet, p, ""); resp.StatusCode == http.StatusOK {
			t.Errorf("GET %s: %d, %d bytes; want refused", p, resp.StatusCode, len(got))
		}
	}
	if resp, _ := ts.request(t, http.MethodGet, "/lab-files/img/flow.png", "", noCookie); resp.StatusCode != http.StatusForbidden {
		t.Errorf("GET the lab's image without the page's cookie: %d, want 403", resp.StatusCode)
	}

	// A lab without fixtures (the built-in lab's texts) shows no image from them.
	bare := startServer(t, func(c *Config) { c.Lab.Steps[0].Instructions = "![flow](fixtures/img/flow.png)" })
	if _, body := bare.request(t, http.MethodGet, "/api/lab", ""); strings.Contains(body, "/lab-files/") {
		t.Errorf("a server without fixtures rewrote an image to /lab-files:\n%s", body)
	}
	if resp, _ := bare.request(t, http.MethodGet, "/lab-files/img/flow.png", ""); resp.StatusCode != http.StatusNotFound {
		t.Errorf("GET /lab-files without fixtures: %d, want 404", resp.StatusCode)
	}
}
