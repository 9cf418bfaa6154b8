package podexec

import (
	"bytes"
	"io"
	"strings"
	"sync"
	"testing"
)

// blockedEOF is a stream that ends only when it is let go.
type blockedEOF struct{ reading, release chan struct{} }

func (b blockedEOF) Read([]byte) (int, error) {
	close(b.reading)
	<-b.release
	return 0, io.EOF
}

// One writer for an exec's stdout and stderr keeps both: client-go copies
// the streams at once, and a bytes.Buffer's ReadFrom, left waiting on an
// empty stderr, used to drop the stdout that arrived meanwhile.
func TestExecOutputsShareOneWriter(t *testing.T) {
	var buf bytes.Buffer
	stdout, stderr := outputs(&buf, &buf)
	errStream := blockedEOF{reading: make(chan struct{}), release: make(chan struct{})}
	var wg sync.WaitGroup
	wg.Go(func() {
		if _, err := io.Copy(stderr, errStream); err != nil {
			t.Error(err)
		}
	})
	<-errStream.reading
	if _, err := io.Copy(stdout, strings.NewReader("own-home\n")); err != nil {
		t.Fatal(err)
	}
	close(errStream.release)
	wg.Wait()
	if buf.String() != "own-home\n" {
		t.Errorf("the shared writer holds %q, want the stdout", buf.String())
	}
	if o, e := outputs(nil, &buf); o != nil || e == nil {
		t.Errorf("outputs(nil, w) = %v, %v: a stream not asked for stays nil", o, e)
	}
}
