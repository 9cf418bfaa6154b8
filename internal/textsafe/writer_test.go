package textsafe

import (
	"strings"
	"testing"
)

// Writer escapes a stream written a byte at a time as Escape does the
// whole text, multi-byte characters kept whole.
func TestWriter(t *testing.T) {
	in := "日本語 \x1b]52;c;cHduZWQ=\x07 ok\r\n안녕"
	var out strings.Builder
	w := NewWriter(&out)
	for i := range len(in) {
		if n, err := w.Write([]byte{in[i]}); n != 1 || err != nil {
			t.Fatalf("Write: %d, %v", n, err)
		}
	}
	if got, want := out.String(), Escape(in); got != want {
		t.Errorf("Writer wrote %q, want %q", got, want)
	}
}
