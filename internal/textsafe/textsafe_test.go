package textsafe

import (
	"encoding/xml"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestEscape(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain text, ünïcode, 日本語\tand a tab", "plain text, ünïcode, 日本語\tand a tab"},
		{"a\x1b[1Ab", `a\x1b[1Ab`},
		{"\x1b]0;pwned\x07", `\x1b]0;pwned\x07`},
		{"over\rwrite", `over\x0dwrite`},
		{"two\nlines", "two\nlines"},
		{"back\bspace\x7f", `back\x08space\x7f`},
		{"c1 \u0085 \u009b", `c1 \x85 \x9b`},
		{"bidi \u202eevil\u202c \u2066x\u2069", `bidi \u202eevil\u202c \u2066x\u2069`},
		{"sep \u2028 \u2029", `sep \u2028 \u2029`},
		{"bad \xff byte", `bad \xff byte`},
		{"nul \x00", `nul \x00`},
	}
	for _, tt := range tests {
		if got := Escape(tt.in); got != tt.want {
			t.Errorf("Escape(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	if got := EscapeLine("a\nb"); got != `a\x0ab` {
		t.Errorf("EscapeLine kept a line feed: %q", got)
	}
}

// Escaping escaped text changes nothing: a message built from text
// escaped where it was received, and escaped again where it is shown,
// shows each escape once.
func TestEscapeTwiceIsOnce(t *testing.T) {
	for _, s := range []string{"\x1b[2J\x1b]52;c;cHduZWQ=\x07over\rwrite\n", "bad \xff \u202e byte", `already \x1b escaped`} {
		once := Escape(s)
		if twice := Escape(once); twice != once {
			t.Errorf("Escape(Escape(%q)) = %q, want %q", s, twice, once)
		}
		if line := EscapeLine(s); EscapeLine(line) != line || Escape(line) != line {
			t.Errorf("EscapeLine(%q) = %q changes when escaped again", s, line)
		}
	}
}

// TestEscapeIsXMLSafe: whatever the learner wrote, the escaped text is
// XML 1.0 that encoding/xml writes and reads back unchanged.
func TestEscapeIsXMLSafe(t *testing.T) {
	var all strings.Builder
	for r := rune(0); r < 0x3000; r++ {
		all.WriteRune(r)
	}
	all.WriteString("\xff\xfe\uFFFE\uFFFF")
	esc := Escape(all.String())
	type doc struct {
		Attr string `xml:"a,attr"`
		Text string `xml:",chardata"`
	}
	out, err := xml.Marshal(doc{Attr: esc, Text: esc})
	if err != nil {
		t.Fatal(err)
	}
	var back doc
	if err := xml.Unmarshal(out, &back); err != nil {
		t.Fatalf("escaped text does not parse as XML: %v", err)
	}
	if back.Text != strings.ReplaceAll(esc, "\r", "") || strings.ContainsRune(back.Text, '\uFFFD') {
		t.Error("escaped text did not survive XML unchanged")
	}
}

func TestFirstLineNeverShowsAGoroutineDump(t *testing.T) {
	dump := "\nruntime: failed to create new OS thread (have 2 already; errno=11)\nruntime: may need to increase max user processes (ulimit -u)\nfatal error: newosproc\n\ngoroutine 1 [running]:\nruntime.throw(...)\n"
	if got := FirstLine(dump); got != "runtime: failed to create new OS thread (have 2 already; errno=11)" {
		t.Errorf("FirstLine = %q", got)
	}
	if got := FirstLine(" \n\t\n"); got != "" {
		t.Errorf("FirstLine of blank lines = %q", got)
	}
	if got := FirstLine(strings.Repeat("x", 1000)); len(got) > MaxQuotedLine+len("…") {
		t.Errorf("FirstLine kept %d bytes", len(got))
	}
	// A cut never splits a character, and what is kept is escaped.
	if got := FirstLine(strings.Repeat("é", 400)); !utf8.ValidString(got) || !strings.HasSuffix(got, "…") {
		t.Errorf("FirstLine cut a character: %q", got)
	}
	if got := FirstLine("\x1b[2Jover\rwritten\n"); got != `\x1b[2Jover\x0dwritten` {
		t.Errorf("FirstLine = %q, want it escaped", got)
	}
}
