package web

import (
	"bytes"
	"io/fs"
	"net/url"
	"strings"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// markdownRenderer turns the lab author's Markdown (goal, instructions,
// why, hints) into HTML the page may insert as it is. goldmark renders
// CommonMark without its unsafe option: raw HTML, inline or in blocks,
// becomes a comment, and links and images to javascript:, vbscript:,
// file: and data: lose their address. goldmark checks the address before
// it resolves character references (&#106;avascript: passes) and does not
// check an autolink's (<javascript:...>) at all, so every link, image and
// autolink is held here, as the renderer will write its address, to an
// allow-list of schemes: none (a relative address or #fragment), http,
// https and mailto. Links open in
// a new tab without a referrer, so that the page and its terminals stay.
type markdownRenderer struct {
	md       goldmark.Markdown
	labFiles bool
}

// newMarkdownRenderer renders the lab's texts; with labFiles, an image
// written as fixtures/PATH is shown from /lab-files/PATH.
func newMarkdownRenderer(labFiles bool) *markdownRenderer {
	return &markdownRenderer{md: goldmark.New(), labFiles: labFiles}
}

// Render is src as sanitised HTML; "" for an empty text.
func (m *markdownRenderer) Render(src string) string {
	src = strings.TrimSpace(src)
	if src == "" {
		return ""
	}
	source := []byte(src)
	doc := m.md.Parser().Parse(text.NewReader(source))
	sanitise(doc, source, m.labFiles)
	var b bytes.Buffer
	if err := m.md.Renderer().Render(&b, source, doc); err != nil {
		// goldmark fails only on a failing writer; a bytes.Buffer does not.
		return ""
	}
	return strings.TrimSpace(b.String())
}

// sanitise removes the addresses that are not allowed from the document's
// links and images, turns autolinks to such addresses into text, and makes
// links open apart from the page.
func sanitise(doc ast.Node, source []byte, labFiles bool) {
	var autolinks []*ast.AutoLink
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch n := n.(type) {
		case *ast.Link:
			if !allowedURL(util.URLEscape(n.Destination, true)) {
				n.Destination = nil
			}
			openApart(n)
		case *ast.Image:
			if !allowedURL(util.URLEscape(n.Destination, true)) {
				n.Destination = nil
			} else if p, ok := labImage(string(n.Destination)); ok && labFiles {
				n.Destination = []byte("/lab-files/" + p)
			}
		case *ast.AutoLink:
			if n.AutoLinkType == ast.AutoLinkURL && !allowedURL(util.URLEscape(n.URL(source), false)) {
				autolinks = append(autolinks, n)
			} else {
				openApart(n)
			}
		}
		return ast.WalkContinue, nil
	})
	for _, n := range autolinks {
		t := ast.NewString(n.Label(source))
		n.Parent().ReplaceChild(n.Parent(), n, t)
	}
}

// labImage reads an image's address as a file of the lab's fixtures:
// fixtures/PATH (or ./fixtures/PATH), PATH a valid path with no "..".
func labImage(dest string) (string, bool) {
	p, ok := strings.CutPrefix(strings.TrimPrefix(dest, "./"), "fixtures/")
	if !ok || strings.ContainsAny(p, "?#\\") || !fs.ValidPath(p) || p == "." {
		return "", false
	}
	return p, true
}

// openApart makes a link open in a new tab, with no referrer and no
// handle on the page.
func openApart(n ast.Node) {
	n.SetAttributeString("target", []byte("_blank"))
	n.SetAttributeString("rel", []byte("noopener noreferrer"))
}

// allowedURL reports whether a link may lead to dest: a relative address
// or a fragment, or http, https or mailto.
func allowedURL(dest []byte) bool {
	d := strings.TrimSpace(string(dest))
	if d == "" {
		return true
	}
	u, err := url.Parse(d)
	if err != nil {
		return false
	}
	switch strings.ToLower(u.Scheme) {
	case "":
		// No scheme as Go reads it; a browser strips tabs and newlines
		// and would still find one: refuse any colon before the first
		// slash, question mark or hash.
		end := strings.IndexAny(d, "/?#")
		if end < 0 {
			end = len(d)
		}
		return !strings.Contains(d[:end], ":")
	case "http", "https", "mailto":
		return true
	}
	return false
}
