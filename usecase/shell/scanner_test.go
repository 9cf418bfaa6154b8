package shell

import (
	"bytes"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// scanAll feeds the pieces of in to a fresh scanner and returns what passed
// through, the marks, and a log interleaving both in order.
func scanAll(pieces ...[]byte) (out []byte, marks []Mark, log []string) {
	var s Scanner
	for _, p := range pieces {
		s.Feed(p, func(b []byte) {
			out = append(out, b...)
			log = append(log, "out:"+string(b))
		}, func(m Mark) {
			marks = append(marks, m)
			log = append(log, fmt.Sprintf("mark:%d", m.Kind))
		})
	}
	s.Flush(func(b []byte) { out = append(out, b...) })
	return out, marks, log
}

func TestScannerFindsMarksAndStripsRequests(t *testing.T) {
	req := "\x1b]7707;labctl;check;lab1234\a"
	tests := []struct {
		name  string
		in    string
		out   string
		marks []Mark
	}{
		{"plain text", "hello\r\n", "hello\r\n", nil},
		{"Japanese and Korean pass intact", "こんにちは 안녕하세요\r\n", "こんにちは 안녕하세요\r\n", nil},
		{"command done with code", "ok\r\n\x1b]133;D;0\a\x1b]133;A\a$ ", "ok\r\n\x1b]133;D;0\a\x1b]133;A\a$ ",
			[]Mark{{Kind: CommandDone, ExitCode: 0}, {Kind: PromptStart, ExitCode: -1}}},
		{"code 127 ended by ST", "\x1b]133;D;127\x1b\\", "\x1b]133;D;127\x1b\\",
			[]Mark{{Kind: CommandDone, ExitCode: 127}}},
		{"done without code", "\x1b]133;D\a", "\x1b]133;D\a", []Mark{{Kind: CommandDone, ExitCode: -1}}},
		{"command start", "\x1b]133;C\a", "\x1b]133;C\a", []Mark{{Kind: CommandStart, ExitCode: -1}}},
		{"request stripped", "a" + req + "b", "ab",
			[]Mark{{Kind: Request, ExitCode: -1, Verb: "check", Nonce: "lab1234"}}},
		{"request ended by ST stripped", "x\x1b]7707;labctl;hint;n1\x1b\\y", "xy",
			[]Mark{{Kind: Request, ExitCode: -1, Verb: "hint", Nonce: "n1"}}},
		{"request among UTF-8", "日本" + req + "語", "日本語",
			[]Mark{{Kind: Request, ExitCode: -1, Verb: "check", Nonce: "lab1234"}}},
		{"other OSC passes", "\x1b]0;title\a\x1b]1337;x\a", "\x1b]0;title\a\x1b]1337;x\a", nil},
		{"CSI passes", "\x1b[1;32mgreen\x1b[0m\x1b[?2004h", "\x1b[1;32mgreen\x1b[0m\x1b[?2004h", nil},
		{"another tag is not a request", "\x1b]7707;other;check\a", "\x1b]7707;other;check\a", nil},
		{"unknown 133 kind passes without mark", "\x1b]133;Z\a", "\x1b]133;Z\a", nil},
		{"mark broken by a newline passes", "\x1b]133;D;1\nrest", "\x1b]133;D;1\nrest", nil},
		{"request broken by a newline is dropped", "\x1b]7707;labctl;che\nrest", "\nrest", nil},
		{"request with a bad nonce is dropped silently", "\x1b]7707;labctl;check;a b\a!", "!", nil},
		{"ESC inside a mark starts over", "\x1b]133;D;1\x1b]133;A\a", "\x1b]133;D;1\x1b]133;A\a",
			[]Mark{{Kind: PromptStart, ExitCode: -1}}},
		{"ESC inside a request starts over", "\x1b]7707;labctl;ch\x1b]133;A\a", "\x1b]133;A\a",
			[]Mark{{Kind: PromptStart, ExitCode: -1}}},
		{"overlong request dropped then text passes", "\x1b]7707;labctl;" + strings.Repeat("a", 300) + "\aZ",
			strings.Repeat("a", 300-maxPayload) + "\aZ", nil},
		{"lone ESC at the end is flushed", "abc\x1b", "abc\x1b", nil},
		{"ESC ESC", "\x1b\x1b]133;A\a", "\x1b\x1b]133;A\a", []Mark{{Kind: PromptStart, ExitCode: -1}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, marks, _ := scanAll([]byte(tt.in))
			if string(out) != tt.out {
				t.Errorf("output %q, want %q", out, tt.out)
			}
			if !reflect.DeepEqual(marks, tt.marks) {
				t.Errorf("marks %+v, want %+v", marks, tt.marks)
			}
		})
	}
}

// TestScannerSplitAnywhere feeds a stream split at every byte boundary,
// at every pair of boundaries, and byte by byte: the output and the marks
// never change.
func TestScannerSplitAnywhere(t *testing.T) {
	stream := []byte("한국어 テスト\r\n\x1b]133;D;2\a\x1b]133;A\a\x1b[1m$\x1b[0m " +
		"\x1b]7707;labctl;status;lab42\a日本語\x1b]133;C\a\x1b]0;t\a" +
		"\x1b]7707;labctl;next;z9\x1b\\end\x1b")
	wantOut, wantMarks, _ := scanAll(stream)
	if bytes.Contains(wantOut, []byte("7707")) {
		t.Fatalf("requests not stripped: %q", wantOut)
	}
	if len(wantMarks) != 5 {
		t.Fatalf("got %d marks, want 5: %+v", len(wantMarks), wantMarks)
	}
	for i := 0; i <= len(stream); i++ {
		for j := i; j <= len(stream); j++ {
			out, marks, _ := scanAll(stream[:i], stream[i:j], stream[j:])
			if !bytes.Equal(out, wantOut) || !reflect.DeepEqual(marks, wantMarks) {
				t.Fatalf("split at %d,%d: output %q marks %+v; want %q %+v", i, j, out, marks, wantOut, wantMarks)
			}
		}
	}
	var pieces [][]byte
	for i := range stream {
		pieces = append(pieces, stream[i:i+1])
	}
	out, marks, _ := scanAll(pieces...)
	if !bytes.Equal(out, wantOut) || !reflect.DeepEqual(marks, wantMarks) {
		t.Fatalf("byte by byte: output %q marks %+v", out, marks)
	}
}

// TestScannerPassesArbitraryBytes checks that any stream without requests
// passes through unchanged, however split.
func TestScannerPassesArbitraryBytes(t *testing.T) {
	stream := make([]byte, 0, 512)
	for i := 0; i < 256; i++ {
		stream = append(stream, byte(i), 0x1b, byte(255-i))
	}
	stream = append(stream, "\x1b]133;\xff\x1b]7707\x1b]7707;labctl\xe3\x81\x82"...)
	for _, size := range []int{1, 2, 3, 7, 64, len(stream)} {
		var pieces [][]byte
		for i := 0; i < len(stream); i += size {
			pieces = append(pieces, stream[i:min(i+size, len(stream))])
		}
		out, _, _ := scanAll(pieces...)
		if !bytes.Equal(out, stream) {
			t.Fatalf("pieces of %d: output differs from input\n got %q\nwant %q", size, out, stream)
		}
	}
}

func TestScannerReportsMarkBeforeItsBytes(t *testing.T) {
	_, _, log := scanAll([]byte("out\x1b]133;A\a$ "))
	want := []string{"out:out", fmt.Sprintf("mark:%d", PromptStart), "out:\x1b]133;A\a", "out:$ "}
	if !reflect.DeepEqual(log, want) {
		t.Fatalf("order %q, want %q", log, want)
	}
}

func TestScannerHoldsOnlyWhatMayBecomeASequence(t *testing.T) {
	var s Scanner
	var out []byte
	emit := func(b []byte) { out = append(out, b...) }
	none := func(Mark) { t.Fatal("unexpected mark") }
	s.Feed([]byte("abc"), emit, none)
	if s.Pending() || string(out) != "abc" {
		t.Fatalf("plain text held back: pending=%v out=%q", s.Pending(), out)
	}
	s.Feed([]byte("\x1b]13"), emit, none)
	if !s.Pending() || string(out) != "abc" {
		t.Fatalf("a possible mark was not held: pending=%v out=%q", s.Pending(), out)
	}
	s.Flush(emit)
	if s.Pending() || string(out) != "abc\x1b]13" {
		t.Fatalf("flush: pending=%v out=%q", s.Pending(), out)
	}
	s.Feed([]byte("\x1b]7707;labctl;ch"), emit, none)
	s.Flush(emit)
	if !s.Pending() || string(out) != "abc\x1b]13" {
		t.Fatalf("a started request was shown by Flush: %q", out)
	}
}

// BenchmarkScanner measures the scanner on shell output with a few marks
// per screenful and a request now and then.
func BenchmarkScanner(b *testing.B) {
	screenful := strings.Repeat("drwxr-xr-x 2 root root 4096 Nov 30 06:00 日本語ディレクトリ\r\n", 40) +
		"\x1b]133;D;0\a\x1b]133;A\a\x1b[1;32mroot@lab\x1b[0m:~# \x1b]133;C\a" + "\x1b]7707;labctl;check;lab1\a"
	data := []byte(strings.Repeat(screenful, 16))
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	var s Scanner
	out := func([]byte) {}
	mark := func(Mark) {}
	for b.Loop() {
		for p := data; len(p) > 0; {
			n := min(len(p), 4096)
			s.Feed(p[:n], out, mark)
			p = p[n:]
		}
	}
}
