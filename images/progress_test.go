package images

import (
	"context"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/labctl/labctl/internal/statusline"
)

// plainStatus shows a build's phases as lines on w, as on a pipe.
func plainStatus(w io.Writer) Status {
	return statusline.New(w, statusline.Options{Terminal: new(bool)})
}

func TestBuildLayer(t *testing.T) {
	for line, want := range map[string]string{
		"#7 [3/6] RUN apt-get update && apt-get install -y   git": "layer 3/6: RUN apt-get update && apt-get install -y git",
		"#5 [stage-1 2/4] COPY kubectl /usr/local/bin/kubectl":    "layer 2/4: COPY kubectl /usr/local/bin/kubectl",
		"Step 4/9 : ENV container docker":                         "layer 4/9: ENV container docker",
		"#9 [4/4] RUN " + strings.Repeat("x", 80):                 "layer 4/4: RUN " + strings.Repeat("x", 55) + "…",
		"#7 0.512 Reading package lists...":                       "",
		"#8 DONE 0.1s":                                            "",
		" ---> Running in 0123456789ab":                           "",
	} {
		got, ok := buildLayer(line)
		if got != want || ok != (want != "") {
			t.Errorf("buildLayer(%q) = %q, %v; want %q", line, got, ok, want)
		}
	}
}

// A docker build's output moves the running phase's line from layer to layer.
func TestDockerBuildShowsTheLayer(t *testing.T) {
	var status strings.Builder
	b, err := newBuilder(Options{Status: plainStatus(&status), CacheDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	script := `printf '#4 [1/2] FROM base\n#4 DONE 0.0s\n#5 [2/2] RUN ma'; sleep 0.1; printf 'ke\n#5 DONE\n'`
	err = b.progress.phase(t.Context(), "Building the sandbox image", func(ctx context.Context) error {
		_, err := command{args: []string{"sh", "-c", script}, lines: func(line string) {
			if layer, ok := buildLayer(line); ok {
				b.progress.step("%s", layer)
			}
		}}.run(ctx)
		return err
	})
	want := " • Building the sandbox image ...\n   layer 1/2: FROM base\n   layer 2/2: RUN make\n ✓ Building the sandbox image\n"
	if err != nil || status.String() != want {
		t.Errorf("err %v, status\n%s\nwant\n%s", err, status.String(), want)
	}
}

func TestLineWriterSplitsLines(t *testing.T) {
	var got []string
	w := &lineWriter{fn: func(l string) { got = append(got, l) }}
	for _, chunk := range []string{"one\r\ntw", "o\n", "", "three\nfour"} {
		fmt.Fprint(w, chunk)
	}
	if strings.Join(got, "|") != "one|two|three" {
		t.Errorf("lines %q", got)
	}
}
