package assets

import (
	"io/fs"
	"regexp"
	"strings"
	"testing"
)

func read(t *testing.T, name string) string {
	t.Helper()
	b, err := fs.ReadFile(FS, name)
	if err != nil {
		t.Fatalf("the embedded page lacks %s (run `make web`): %v", name, err)
	}
	if len(b) == 0 {
		t.Fatalf("%s is empty (run `make web`)", name)
	}
	return string(b)
}

// The page must work under `script-src 'self'; style-src 'self'`: no inline
// script or style in index.html, and everything it loads is one of the
// embedded files.
func TestIndexNeedsNoInlineCode(t *testing.T) {
	html := read(t, "index.html")
	if m := regexp.MustCompile(`(?is)<script\b[^>]*>\s*[^<\s]`).FindString(html); m != "" {
		t.Errorf("index.html has an inline script: %q", m)
	}
	if regexp.MustCompile(`(?i)<style\b`).MatchString(html) {
		t.Error("index.html has a <style> element")
	}
	if m := regexp.MustCompile(`(?i)\sstyle\s*=`).FindString(html); m != "" {
		t.Errorf("index.html has a style attribute: %q", m)
	}
	if m := regexp.MustCompile(`(?i)\son[a-z]+\s*=`).FindString(html); m != "" {
		t.Errorf("index.html has an inline event handler: %q", m)
	}
	refs := regexp.MustCompile(`(?i)\s(?:src|href)="([^"]*)"`).FindAllStringSubmatch(html, -1)
	loaded := map[string]bool{}
	for _, r := range refs {
		ref := r[1]
		switch {
		case strings.HasPrefix(ref, "#"), strings.HasPrefix(ref, "/api/report?"), ref == "data:,":
			// a link within the page, a report download, the empty icon
		case strings.HasPrefix(ref, "/assets/"):
			name := strings.TrimPrefix(ref, "/assets/")
			read(t, name)
			loaded[name] = true
		default:
			t.Errorf("index.html refers to %q, which is not one of the embedded files", ref)
		}
	}
	for _, name := range []string{"app.js", "app.css"} {
		if !loaded[name] {
			t.Errorf("index.html does not load /assets/%s", name)
		}
	}
}

// The page's contract with the server and the browser tests: these ids are
// in index.html or made by app.js.
func TestPageHasTheContractsIDs(t *testing.T) {
	html := read(t, "index.html")
	for _, id := range []string{"lab-title", "lab-goal", "steps", "step-body", "hint", "hints", "check",
		"check-results", "banner", "terminal-tabs", "new-terminal", "grade", "report-json", "report-junit",
		"preview-tabs"} {
		if !strings.Contains(html, `id="`+id+`"`) {
			t.Errorf("index.html has no element with id %q", id)
		}
	}
	if !regexp.MustCompile(`id="banner"[^>]*role="status"|role="status"[^>]*id="banner"`).MatchString(html) {
		t.Error(`#banner is not role="status"`)
	}
	js := read(t, "app.js")
	for _, s := range []string{"/ws/terminal?id=", "/api/state", "/api/check", "/api/grade", "/api/previews",
		`"resize"`, "data-terminal", "data-step", "data-check"} {
		if !strings.Contains(js, s) {
			t.Errorf("app.js never uses %s", s)
		}
	}
}

// The page must not need script-src 'unsafe-eval'.
func TestScriptNeedsNoEval(t *testing.T) {
	js := read(t, "app.js")
	for _, re := range []string{`\beval\(`, `new Function\(`, `setTimeout\("`, `setInterval\("`} {
		if m := regexp.MustCompile(re).FindString(js); m != "" {
			t.Errorf("app.js uses %s, which the Content-Security-Policy forbids", m)
		}
	}
}

func TestBundledLicencesShip(t *testing.T) {
	lic := read(t, "LICENSES.txt")
	for _, pkg := range []string{"@xterm/xterm", "@xterm/addon-fit", "@xterm/addon-web-links"} {
		if !strings.Contains(lic, "==== "+pkg+" ") {
			t.Errorf("LICENSES.txt lacks the licence of %s", pkg)
		}
	}
	if !strings.Contains(lic, "Permission is hereby granted") {
		t.Error("LICENSES.txt lacks the MIT permission notice")
	}
	if !strings.Contains(read(t, "app.js"), "LICENSES.txt") {
		t.Error("app.js does not point to LICENSES.txt")
	}
}
