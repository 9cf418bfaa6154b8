package app

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
)

func TestShellNeedsATerminal(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	cases := map[string]Streams{
		"a buffer": {In: strings.NewReader("ls\n"), Out: &bytes.Buffer{}},
		"pipes":    {In: r, Out: w},
	}
	for name, s := range cases {
		t.Run(name, func(t *testing.T) {
			var errOut bytes.Buffer
			s.Err = &errOut
			code := Run(context.Background(), s, []string{"shell"})
			if code == 0 {
				t.Fatalf("labctl shell without a terminal exited 0")
			}
			want := "labctl shell needs a terminal; use labctl exec for scripts"
			if !strings.Contains(errOut.String(), want) {
				t.Fatalf("stderr %q, want %q", errOut.String(), want)
			}
		})
	}
}
