package lab

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// A code block of the lab's Markdown is text the learner copies or, in the
// browser view, has typed into a terminal by its Run button. What is typed
// must be what the learner reads: a block may hold no character that the
// page does not show but a terminal acts on or receives (a control
// character, a bidirectional control, an invisible formatting character),
// and a block the page can run may hold no tab (an interactive shell
// completes the word on it). The page (web/src/main.js, unshownChar)
// refuses the same characters again before it types a block.

// CodeBlock is a fenced or indented code block of a Markdown text, as the
// browser view renders it: one <pre><code> whose text is Text.
type CodeBlock struct {
	// N counts the text's code blocks from 1, in their order.
	N int
	// Line is the line of the text where the block's first line of code is.
	Line int
	// Lang is the fenced block's language (its info string's first word),
	// "" for none or an indented block.
	Lang string
	Text string
}

// Runnable reports whether the browser view offers to run the block: one
// in no language or in a shell's (sh, bash, shell, console, zsh).
func (b CodeBlock) Runnable() bool { return b.Lang == "" || shellLangRE.MatchString(b.Lang) }

var shellLangRE = regexp.MustCompile(`^(sh|bash|shell|console|zsh)\b`)

var codeParser = goldmark.New().Parser()

// CodeBlocks are the code blocks of the Markdown text md, parsed as the
// browser view parses it (its leading and trailing space trimmed).
func CodeBlocks(md string) []CodeBlock {
	trimmed := strings.TrimLeftFunc(md, unicode.IsSpace)
	skipped := strings.Count(md[:len(md)-len(trimmed)], "\n")
	source := []byte(strings.TrimRightFunc(trimmed, unicode.IsSpace))
	if len(source) == 0 {
		return nil
	}
	doc := codeParser.Parse(text.NewReader(source))
	var blocks []CodeBlock
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		var lang string
		switch n := n.(type) {
		case *ast.FencedCodeBlock:
			if l := n.Language(source); l != nil {
				// As the renderer writes it into the block's class.
				lang = string(util.ResolveNumericReferences(util.ResolveEntityNames(util.UnescapePunctuations(l))))
			}
		case *ast.CodeBlock:
		default:
			return ast.WalkContinue, nil
		}
		b := CodeBlock{N: len(blocks) + 1, Lang: lang, Line: skipped + 1}
		lines := n.Lines()
		var buf bytes.Buffer
		for i := 0; i < lines.Len(); i++ {
			seg := lines.At(i)
			if i == 0 {
				b.Line += bytes.Count(source[:seg.Start], []byte("\n"))
			}
			buf.Write(seg.Value(source))
		}
		b.Text = buf.String()
		blocks = append(blocks, b)
		return ast.WalkSkipChildren, nil
	})
	return blocks
}

// Unshown is a character of a code block that the learner would not read
// as it is typed.
type Unshown struct {
	// Rune is the character; utf8.RuneError with Byte set for a byte that
	// is not UTF-8.
	Rune rune
	Byte byte
	// Line and Column (in characters) place it in the block, from 1.
	Line, Column int
}

// Name is the character as U+XXXX and its name, or the byte that is not
// UTF-8.
func (u Unshown) Name() string {
	if u.Rune == utf8.RuneError && u.Byte != 0 {
		return fmt.Sprintf("the byte 0x%02X, which is not UTF-8", u.Byte)
	}
	return RuneName(u.Rune)
}

// Why says what the character does, for a message that asks to remove it.
func (u Unshown) Why() string {
	r := u.Rune
	switch {
	case r == utf8.RuneError && u.Byte != 0:
		return "the page shows it as \ufffd and the terminal gets something else"
	case r == '\t':
		return "typed into the terminal, a tab asks the shell to complete the word, so the Run button would type more than the block shows"
	case r == '\r':
		return "typed into the terminal, it ends the line there: the command runs and what follows is typed as another"
	case unicode.Is(unicode.Cc, r):
		return "the page does not show it, and the terminal acts on it (escape sequences, Ctrl-C, Ctrl-U and backspace erase or cut what was typed before)"
	case unicode.Is(unicode.Bidi_Control, r):
		return "it changes the order in which the page shows the text, not the order in which it is typed"
	default:
		return "the page does not show it, yet the terminal gets it as part of the command"
	}
}

// FirstUnshown returns the first character of a code block's text that the
// learner would not read as it is typed: a control character other than
// newline and tab, a byte that is not UTF-8, a format character (the
// bidirectional controls, zero-width spaces and joiners, soft hyphen, byte
// order mark), a line or paragraph separator, a variation selector or
// another default-ignorable character (such as the Hangul fillers), and a
// tab in a block the page can run. ok is false for a text with none.
func FirstUnshown(s string, runnable bool) (u Unshown, ok bool) {
	line, col := 1, 0
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		col++
		if r == utf8.RuneError && size == 1 {
			return Unshown{Rune: r, Byte: s[i], Line: line, Column: col}, true
		}
		i += size
		if r == '\n' {
			line, col = line+1, 0
			continue
		}
		if r == '\t' && !runnable {
			continue
		}
		if IsUnshown(r) {
			return Unshown{Rune: r, Line: line, Column: col}, true
		}
	}
	return Unshown{}, false
}

// IsUnshown reports whether r is a character that a code block may not
// hold: a control (tab and newline included), a format character, a line
// or paragraph separator, a variation selector or another default-ignorable
// character.
func IsUnshown(r rune) bool {
	return unicode.In(r, unicode.Cc, unicode.Cf, unicode.Zl, unicode.Zp,
		unicode.Variation_Selector, unicode.Other_Default_Ignorable_Code_Point)
}

// runeNames names the characters an author is most likely to meet here.
var runeNames = map[rune]string{
	0x00: "NULL", 0x01: "START OF HEADING (Ctrl-A)", 0x02: "START OF TEXT (Ctrl-B)", 0x03: "END OF TEXT (Ctrl-C)",
	0x04: "END OF TRANSMISSION (Ctrl-D)", 0x05: "ENQUIRY (Ctrl-E)", 0x06: "ACKNOWLEDGE (Ctrl-F)", 0x07: "BELL",
	0x08: "BACKSPACE", 0x09: "CHARACTER TABULATION (tab)", 0x0B: "LINE TABULATION", 0x0C: "FORM FEED",
	0x0D: "CARRIAGE RETURN", 0x0E: "SHIFT OUT (Ctrl-N)", 0x0F: "SHIFT IN (Ctrl-O)", 0x10: "DATA LINK ESCAPE (Ctrl-P)",
	0x11: "DEVICE CONTROL ONE (Ctrl-Q)", 0x12: "DEVICE CONTROL TWO (Ctrl-R)", 0x13: "DEVICE CONTROL THREE (Ctrl-S)",
	0x14: "DEVICE CONTROL FOUR (Ctrl-T)", 0x15: "NEGATIVE ACKNOWLEDGE (Ctrl-U)", 0x16: "SYNCHRONOUS IDLE (Ctrl-V)",
	0x17: "END OF TRANSMISSION BLOCK (Ctrl-W)", 0x18: "CANCEL (Ctrl-X)", 0x19: "END OF MEDIUM (Ctrl-Y)",
	0x1A: "SUBSTITUTE (Ctrl-Z)", 0x1B: "ESCAPE", 0x1C: "INFORMATION SEPARATOR FOUR", 0x1D: "INFORMATION SEPARATOR THREE",
	0x1E: "INFORMATION SEPARATOR TWO", 0x1F: "INFORMATION SEPARATOR ONE", 0x7F: "DELETE",
	0x85: "NEXT LINE", 0x9B: "CONTROL SEQUENCE INTRODUCER", 0xAD: "SOFT HYPHEN",
	0x034F: "COMBINING GRAPHEME JOINER", 0x061C: "ARABIC LETTER MARK", 0x115F: "HANGUL CHOSEONG FILLER",
	0x1160: "HANGUL JUNGSEONG FILLER", 0x180E: "MONGOLIAN VOWEL SEPARATOR",
	0x200B: "ZERO WIDTH SPACE", 0x200C: "ZERO WIDTH NON-JOINER", 0x200D: "ZERO WIDTH JOINER",
	0x200E: "LEFT-TO-RIGHT MARK", 0x200F: "RIGHT-TO-LEFT MARK", 0x2028: "LINE SEPARATOR", 0x2029: "PARAGRAPH SEPARATOR",
	0x202A: "LEFT-TO-RIGHT EMBEDDING", 0x202B: "RIGHT-TO-LEFT EMBEDDING", 0x202C: "POP DIRECTIONAL FORMATTING",
	0x202D: "LEFT-TO-RIGHT OVERRIDE", 0x202E: "RIGHT-TO-LEFT OVERRIDE", 0x2060: "WORD JOINER",
	0x2061: "FUNCTION APPLICATION", 0x2062: "INVISIBLE TIMES", 0x2063: "INVISIBLE SEPARATOR", 0x2064: "INVISIBLE PLUS",
	0x2066: "LEFT-TO-RIGHT ISOLATE", 0x2067: "RIGHT-TO-LEFT ISOLATE", 0x2068: "FIRST STRONG ISOLATE",
	0x2069: "POP DIRECTIONAL ISOLATE", 0x3164: "HANGUL FILLER", 0xFEFF: "ZERO WIDTH NO-BREAK SPACE (byte order mark)",
	0xFFA0: "HALFWIDTH HANGUL FILLER",
}

// RuneName is r as U+XXXX followed by its name, or by its kind when it
// has no name here: "U+202E RIGHT-TO-LEFT OVERRIDE".
func RuneName(r rune) string {
	if name, ok := runeNames[r]; ok {
		return fmt.Sprintf("U+%04X %s", r, name)
	}
	kind := "an invisible character"
	switch {
	case unicode.Is(unicode.Cc, r):
		kind = "a control character"
	case unicode.Is(unicode.Variation_Selector, r):
		kind = "a variation selector"
	case unicode.Is(unicode.Cf, r):
		kind = "a format character"
	}
	return fmt.Sprintf("U+%04X (%s)", r, kind)
}

// codeBlocks refuses each code block of the Markdown text at p (what
// names the text in the message) that holds a character the learner would
// not read as it is copied or typed.
func (v *validator) codeBlocks(p, what, md string) {
	for _, b := range CodeBlocks(md) {
		u, bad := FirstUnshown(b.Text, b.Runnable())
		if !bad {
			continue
		}
		fix := "remove it, so that the block holds only what the learner reads"
		if u.Rune == '\t' {
			fix = "indent with spaces, or give the block a language that is not a shell's (```text) so that it is only copied"
		}
		v.add(p, "%s: code block %d (line %d of the text) holds %s at line %d, column %d of the block: %s; %s",
			what, b.N, b.Line, u.Name(), u.Line, u.Column, u.Why(), fix)
	}
}
