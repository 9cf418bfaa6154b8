package session

import (
	"regexp"
	"strings"
	"sync"

	"github.com/charmbracelet/glamour"
	"github.com/charmbracelet/glamour/ansi"
	"github.com/charmbracelet/glamour/styles"
	"github.com/muesli/termenv"
)

// Markdown renders the lab author's Markdown (goal, instructions, hints,
// why) for a terminal with glamour: styled in colour, or as plain text with
// the Markdown marks taken out and the words kept (for NO_COLOR and
// TERM=dumb). It is safe for concurrent use.
type Markdown struct {
	mu sync.Mutex
	r  *glamour.TermRenderer
}

// NewMarkdown makes a renderer in colour or plain. Lines stay as the
// author broke them and are not wrapped again: Japanese text has no spaces
// to wrap at, and the terminal wraps what is too long for it.
func NewMarkdown(color bool) *Markdown {
	style := plainStyle()
	profile := termenv.Ascii
	if color {
		style = colorStyle()
		profile = termenv.ANSI256
	}
	r, err := glamour.NewTermRenderer(glamour.WithStyles(style), glamour.WithWordWrap(0),
		glamour.WithPreservedNewLines(), glamour.WithColorProfile(profile))
	if err != nil {
		return &Markdown{}
	}
	return &Markdown{r: r}
}

var zero uint

// colorStyle is glamour's dark style without its document margin: labctl
// indents the text itself.
func colorStyle() ansi.StyleConfig {
	s := styles.DarkStyleConfig
	s.Document.Margin = &zero
	s.Document.BlockPrefix, s.Document.BlockSuffix = "", ""
	return s
}

// plainStyle is glamour's ASCII style with no Markdown marks left: no #
// before headings, no * or ** around emphasis, no backquotes around code.
func plainStyle() ansi.StyleConfig {
	s := styles.ASCIIStyleConfig
	s.Document.Margin = &zero
	s.Document.BlockPrefix, s.Document.BlockSuffix = "", ""
	for _, h := range []*ansi.StyleBlock{&s.H1, &s.H2, &s.H3, &s.H4, &s.H5, &s.H6} {
		h.Prefix = ""
	}
	s.Emph.BlockPrefix, s.Emph.BlockSuffix = "", ""
	s.Strong.BlockPrefix, s.Strong.BlockSuffix = "", ""
	s.Strikethrough.BlockPrefix, s.Strikethrough.BlockSuffix = "", ""
	s.Code.BlockPrefix, s.Code.BlockSuffix = "", ""
	s.Item.BlockPrefix = "- "
	return s
}

// trailing is the padding glamour adds to the end of a line: spaces, bare
// or wrapped in colours.
var trailing = regexp.MustCompile(`(?:\x1b\[[0-9;]*m| )+$`)

// Render is text rendered, without trailing padding or blank lines at
// either end; the text as written when glamour cannot render it.
func (m *Markdown) Render(text string) string {
	text = strings.TrimSpace(text)
	if text == "" {
		return ""
	}
	if m == nil || m.r == nil {
		return text
	}
	m.mu.Lock()
	out, err := m.r.Render(text)
	m.mu.Unlock()
	if err != nil {
		return text
	}
	lines := strings.Split(out, "\n")
	for i, l := range lines {
		l = trailing.ReplaceAllString(l, "")
		if strings.Contains(l, "\x1b[") {
			l += "\x1b[0m"
		}
		lines[i] = l
	}
	return strings.Trim(strings.Join(lines, "\n"), "\n")
}
