package shell

import (
	"bytes"
	"strconv"
	"strings"
	"sync"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"

	"github.com/labctl/labctl/internal/textsafe"
)

// Markdown renders the lab author's Markdown (goal, instructions, hints,
// why) for a terminal: goldmark parses it (CommonMark), and the tree is
// written as text with ANSI styles (bold headings and strong emphasis,
// italics, code in cyan), or as plain text with the Markdown marks taken
// out and the words kept (for NO_COLOR and TERM=dumb). Lines stay as the
// author broke them and are not wrapped again: Japanese text has no spaces
// to wrap at, and the terminal wraps what is too long for it. Its zero
// value renders plain text; it is safe for concurrent use.
type Markdown struct {
	color bool
}

// NewMarkdown makes a renderer in colour or plain.
func NewMarkdown(color bool) *Markdown { return &Markdown{color: color} }

// markdownParser is goldmark's CommonMark parser, made when first needed:
// the checker, the same binary, never renders.
var markdownParser = sync.OnceValue(func() parser.Parser { return goldmark.New().Parser() })

// ANSI styles, each with the code that ends it.
const (
	boldOn, boldOff     = "\x1b[1m", "\x1b[22m"
	italicOn, italicOff = "\x1b[3m", "\x1b[23m"
	codeOn, codeOff     = "\x1b[36m", "\x1b[39m"
)

// Render is text rendered, without blank lines at either end or spaces at
// the end of a line; an empty text renders as "". Control characters in
// the text are written as visible escapes (textsafe) before it is parsed:
// the author's text never steers the terminal, only the renderer's own
// styles do.
func (m *Markdown) Render(src string) string {
	src = textsafe.Escape(strings.TrimSpace(src))
	if src == "" {
		return ""
	}
	source := []byte(src)
	w := &mdWriter{src: source, color: m != nil && m.color}
	w.blocks(markdownParser().Parse(text.NewReader(source)), "")
	lines := strings.Split(w.out.String(), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	return strings.Trim(strings.Join(lines, "\n"), "\n")
}

// mdWriter writes one document.
type mdWriter struct {
	src   []byte
	color bool
	out   bytes.Buffer
}

func (w *mdWriter) style(on, off string, body func()) {
	if w.color {
		w.out.WriteString(on)
	}
	body()
	if w.color {
		w.out.WriteString(off)
	}
}

// blocks writes the block children of n, a blank line apart, each line
// after the first of a block starting with indent.
func (w *mdWriter) blocks(n ast.Node, indent string) {
	first := true
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		if !first {
			w.out.WriteString("\n")
			if !tight(n) {
				w.out.WriteString("\n" + indent)
			} else {
				w.out.WriteString(indent)
			}
		}
		first = false
		w.block(c, indent)
	}
}

// tight reports whether n's children are written without blank lines
// between them: the items of a tight list and the blocks inside them.
func tight(n ast.Node) bool {
	switch n := n.(type) {
	case *ast.List:
		return n.IsTight
	case *ast.ListItem:
		if l, ok := n.Parent().(*ast.List); ok {
			return l.IsTight
		}
	}
	return false
}

func (w *mdWriter) block(n ast.Node, indent string) {
	switch n := n.(type) {
	case *ast.Heading:
		w.style(boldOn, boldOff, func() { w.inlines(n, indent) })
	case *ast.Paragraph, *ast.TextBlock:
		w.inlines(n, indent)
	case *ast.List:
		w.list(n, indent)
	case *ast.Blockquote:
		w.out.WriteString("│ ")
		w.blocks(n, indent+"│ ")
	case *ast.FencedCodeBlock, *ast.CodeBlock:
		w.code(n, indent)
	case *ast.ThematicBreak:
		w.out.WriteString("────────")
	case *ast.HTMLBlock:
		w.lines(n, indent)
	default:
		w.blocks(n, indent)
	}
}

func (w *mdWriter) list(l *ast.List, indent string) {
	i := l.Start
	for item := l.FirstChild(); item != nil; item = item.NextSibling() {
		if item != l.FirstChild() {
			w.out.WriteString("\n")
			if !l.IsTight {
				w.out.WriteString("\n")
			}
			w.out.WriteString(indent)
		}
		mark := "- "
		if l.IsOrdered() {
			mark = strconv.Itoa(i) + ". "
			i++
		}
		w.out.WriteString(mark)
		w.blocks(item, indent+strings.Repeat(" ", len(mark)))
	}
}

// code writes a code block's lines as they are, indented by two spaces.
func (w *mdWriter) code(n ast.Node, indent string) {
	w.style(codeOn, codeOff, func() {
		ls := n.Lines()
		for i := 0; i < ls.Len(); i++ {
			if i > 0 {
				w.out.WriteString(indent)
			}
			seg := ls.At(i)
			w.out.WriteString("  ")
			w.out.WriteString(strings.TrimRight(string(seg.Value(w.src)), "\n"))
			if i < ls.Len()-1 {
				w.out.WriteString("\n")
			}
		}
	})
}

// lines writes a raw block's lines as they are.
func (w *mdWriter) lines(n ast.Node, indent string) {
	ls := n.Lines()
	for i := 0; i < ls.Len(); i++ {
		if i > 0 {
			w.out.WriteString(indent)
		}
		seg := ls.At(i)
		w.out.WriteString(strings.TrimRight(string(seg.Value(w.src)), "\n"))
		if i < ls.Len()-1 {
			w.out.WriteString("\n")
		}
	}
}

// inlines writes n's inline children; a line break in the source stays a
// line break, continued at indent.
func (w *mdWriter) inlines(n ast.Node, indent string) {
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		w.inline(c, indent)
	}
}

func (w *mdWriter) inline(n ast.Node, indent string) {
	switch n := n.(type) {
	case *ast.Text:
		w.out.Write(n.Segment.Value(w.src))
		if n.SoftLineBreak() || n.HardLineBreak() {
			w.out.WriteString("\n" + indent)
		}
	case *ast.String:
		w.out.Write(n.Value)
	case *ast.CodeSpan:
		w.style(codeOn, codeOff, func() {
			for c := n.FirstChild(); c != nil; c = c.NextSibling() {
				if t, ok := c.(*ast.Text); ok {
					w.out.Write(t.Segment.Value(w.src))
				}
			}
		})
	case *ast.Emphasis:
		on, off := italicOn, italicOff
		if n.Level >= 2 {
			on, off = boldOn, boldOff
		}
		w.style(on, off, func() { w.inlines(n, indent) })
	case *ast.Link:
		w.inlines(n, indent)
		if dest := string(n.Destination); dest != "" && dest != string(nodeText(n, w.src)) {
			w.out.WriteString(" (" + dest + ")")
		}
	case *ast.AutoLink:
		w.out.Write(n.URL(w.src))
	case *ast.Image:
		w.inlines(n, indent)
	case *ast.RawHTML:
		for i := 0; i < n.Segments.Len(); i++ {
			seg := n.Segments.At(i)
			w.out.Write(seg.Value(w.src))
		}
	default:
		w.inlines(n, indent)
	}
}

// nodeText is the text of n's Text children, for comparing a link's words
// with its address.
func nodeText(n ast.Node, src []byte) []byte {
	var b bytes.Buffer
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		if t, ok := c.(*ast.Text); ok {
			b.Write(t.Segment.Value(src))
		}
	}
	return b.Bytes()
}
