package web

import (
	"strings"
	"testing"
)

func TestMarkdownComesOutInert(t *testing.T) {
	md := newMarkdownRenderer(false)
	for _, c := range []struct {
		name, src string
		// keep is text that must survive (the words, escaped).
		keep string
	}{
		{"a script block", "Before\n\n<script>alert(1)</script>\n\nAfter", "After"},
		{"an inline script", "Type <script>alert(1)</script> here", "here"},
		{"an image with onerror", `<img src=x onerror="alert(1)">`, ""},
		{"an inline event handler", `Click <a href="#" onclick="alert(1)">here</a>`, "here"},
		{"a javascript: link", "[x](javascript:alert(1))", ">x</a>"},
		{"a JavaScript: link in capitals", "[x](JavaScript:alert(1))", ">x</a>"},
		{"an entity-encoded javascript: link", "[x](&#106;avascript:alert(1))", ">x</a>"},
		{"a named-entity javascript: link", "[x](javascript&colon;alert(1))", ">x</a>"},
		{"a backslash-escaped javascript: link", `[x](javascript\:alert(1))`, ">x</a>"},
		{"a javascript: autolink", "<javascript:alert(1)>", "javascript:alert(1)"},
		{"a vbscript: link", "[x](vbscript:msgbox)", ">x</a>"},
		{"a data: link", "[x](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)", ">x</a>"},
		{"a javascript: image", "![x](javascript:alert(1))", `alt="x"`},
		{"a reference link", "[x][r]\n\n[r]: javascript:alert(1)", ">x</a>"},
		{"an iframe", `<iframe src="https://evil.example"></iframe>`, ""},
		{"a style block", "<style>body{display:none}</style>", ""},
	} {
		got := md.Render(c.src)
		low := strings.ToLower(got)
		for _, bad := range []string{"<script", "<img src=x", "onerror", "onclick", `href="javascript:`, `src="javascript:`, `href="vbscript:`, `href="data:`, "<iframe", "<style"} {
			if strings.Contains(low, bad) {
				t.Errorf("%s: the HTML holds %q: %s", c.name, bad, got)
			}
		}
		if c.keep != "" && !strings.Contains(got, c.keep) {
			t.Errorf("%s: the HTML lost %q: %s", c.name, c.keep, got)
		}
	}
}

func TestMarkdownKeepsWhatIsSafe(t *testing.T) {
	md := newMarkdownRenderer(false)
	for _, c := range []struct{ src, want string }{
		{"**bold** and `code` & a < b", "<p><strong>bold</strong> and <code>code</code> &amp; a &lt; b</p>"},
		{"<more>", "<!-- raw HTML omitted -->"},
		{"[docs](https://kubernetes.io/docs/)", `<p><a href="https://kubernetes.io/docs/" target="_blank" rel="noopener noreferrer">docs</a></p>`},
		{"[here](#step-two)", `<p><a href="#step-two" target="_blank" rel="noopener noreferrer">here</a></p>`},
		{"<https://example.com>", `<p><a href="https://example.com" target="_blank" rel="noopener noreferrer">https://example.com</a></p>`},
		{"```\nkubectl get pods\n```", "<pre><code>kubectl get pods\n</code></pre>"},
		{"  ", ""},
	} {
		if got := md.Render(c.src); got != c.want {
			t.Errorf("Render(%q) =\n%s\nwant\n%s", c.src, got, c.want)
		}
	}
}

func TestAllowedURL(t *testing.T) {
	for u, want := range map[string]bool{
		"https://a.example/x": true, "http://a": true, "mailto:a@b": true, "/x": true, "x/y:z": true, "#f": true, "?q=a:b": true, "": true,
		"javascript:alert(1)": false, "JAVASCRIPT:x": false, "java\tscript:x": false, "file:///etc/passwd": false, "data:text/html,x": false, "ftp://x": false,
	} {
		if got := allowedURL([]byte(u)); got != want {
			t.Errorf("allowedURL(%q) = %v, want %v", u, got, want)
		}
	}
}
