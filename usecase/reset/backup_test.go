package reset

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"time"
)

// tarHome is a Home whose /root is a tar of the given files; a file's size
// is announced in its header, and its content, zeros, is written only as
// far as the reader takes it.
type tarHome struct {
	files   []tar.Header
	written int64 // content bytes the reader took
}

func (h *tarHome) BackupHome(_ context.Context, w io.Writer) error {
	tw := tar.NewWriter(w)
	zeros := make([]byte, 32<<10)
	for _, f := range h.files {
		f := f
		if err := tw.WriteHeader(&f); err != nil {
			return err
		}
		for left := f.Size; left > 0; {
			n := min(left, int64(len(zeros)))
			if _, err := tw.Write(zeros[:n]); err != nil {
				return err
			}
			h.written += n
			left -= n
		}
	}
	return tw.Close()
}

func reg(name string, size int64) tar.Header {
	return tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: 0o644, Size: size}
}

func TestBackupKeepsTheStreamExactly(t *testing.T) {
	h := &tarHome{files: []tar.Header{
		{Typeflag: tar.TypeDir, Name: "root/", Mode: 0o755},
		reg("root/a.txt", 3),
		reg("root/b.bin", 70000),
	}}
	var want bytes.Buffer
	if err := h.BackupHome(context.Background(), &want); err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	if err := copyBounded(context.Background(), &tarHome{files: h.files}, &got, 1<<20); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), want.Bytes()) {
		t.Errorf("the backup is %d bytes, the stream was %d: they differ", got.Len(), want.Len())
	}
}

func TestBackupRefusesAHomeBeyondTheLimitBeforeReadingIt(t *testing.T) {
	// A sparse 10 GiB file is announced at its apparent size.
	h := &tarHome{files: []tar.Header{reg("root/notes.txt", 10), reg("root/huge.img", 10<<30), reg("root/after.txt", 1)}}
	dir := t.TempDir()
	path, err := backup(context.Background(), h, dir, time.Now())
	var tooBig *TooBigError
	if !errors.As(err, &tooBig) {
		t.Fatalf("backup of a 10 GiB /root: path %q, err %v; want a TooBigError", path, err)
	}
	if tooBig.Largest != "/root/huge.img" || tooBig.LargestSize != 10<<30 || tooBig.Limit != MaxBackup {
		t.Errorf("error = %+v", tooBig)
	}
	msg := err.Error()
	for _, want := range []string{"/root/huge.img alone is 10.0 GiB", "2.0 GiB", "--no-backup", "rm /root/huge.img"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q lacks %q", msg, want)
		}
	}
	if h.written > 1<<20 {
		t.Errorf("%d bytes of the huge file were read before the refusal", h.written)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("a refused backup left %d files", len(entries))
	}
}

func TestBackupCountsManyFilesTogether(t *testing.T) {
	var files []tar.Header
	for i := 0; i < 5; i++ {
		files = append(files, reg("root/part"+string(rune('a'+i)), 300))
	}
	// 1500 bytes of content fit in 3000, but each file is a 512-byte
	// header and a 512-byte block in the tar: the fourth passes 3000.
	err := copyBounded(context.Background(), &tarHome{files: files}, io.Discard, 3000)
	var tooBig *TooBigError
	if !errors.As(err, &tooBig) || tooBig.Seen != 3*1024+512+300 {
		t.Errorf("err = %v, want a TooBigError at the fourth file (%d bytes)", err, 3*1024+512+300)
	}
}

// Hard links and long names hold no content, but each is a header of its
// own (a long name two, with its extended header) in the tar: 20 000 links
// with 200-byte names make a tar of 20 MB from a /root of one small file.
func TestBackupCountsLinksAndLongNames(t *testing.T) {
	files := []tar.Header{reg("root/target", 10)}
	long := strings.Repeat("n", 200)
	for i := 0; i < 20000; i++ {
		files = append(files, tar.Header{Typeflag: tar.TypeLink, Name: fmt.Sprintf("root/%s%05d", long, i), Linkname: "root/target"})
	}
	var out countingWriter
	err := copyBounded(context.Background(), &tarHome{files: files}, &out, 1<<20)
	var tooBig *TooBigError
	if !errors.As(err, &tooBig) || tooBig.Seen <= 1<<20 {
		t.Fatalf("err = %v, want a TooBigError past 1 MiB", err)
	}
	if out.n > 1<<20+64<<10 {
		t.Errorf("%d bytes were written before the refusal, want about 1 MiB", out.n)
	}
}

type countingWriter struct{ n int64 }

func (c *countingWriter) Write(p []byte) (int, error) { c.n += int64(len(p)); return len(p), nil }

func TestResetRefusingABackupDestroysNothing(t *testing.T) {
	o := options(t)
	env := &bigEnv{fakeEnv: &fakeEnv{}}
	_, err := Run(context.Background(), env, o)
	var tooBig *TooBigError
	if !errors.As(err, &tooBig) || !strings.Contains(err.Error(), "nothing was reset") {
		t.Fatalf("err = %v", err)
	}
	if len(env.calls) != 0 {
		t.Errorf("calls after a refused backup: %v", env.calls)
	}
	o.NoBackup = true
	if _, err := Run(context.Background(), env, o); err != nil {
		t.Fatalf("with NoBackup: %v", err)
	}
	if len(env.calls) == 0 || env.calls[0] != "sandbox" {
		t.Errorf("with NoBackup the reset should go on: %v", env.calls)
	}
}

// bigEnv is a fakeEnv whose /root holds a 3 GiB sparse file.
type bigEnv struct{ *fakeEnv }

func (b *bigEnv) BackupHome(ctx context.Context, w io.Writer) error {
	return (&tarHome{files: []tar.Header{reg("root/disk.img", 3<<30)}}).BackupHome(ctx, w)
}

// The refusal names the learner's largest file as a name they chose: it
// reaches the terminal escaped, on one line.
func TestBackupRefusalEscapesTheFileName(t *testing.T) {
	name := "root/\x1b[2J\x1b]52;c;cHduZWQ=\x07big\r\nlabctl: /root saved"
	err := copyBounded(context.Background(), &tarHome{files: []tar.Header{reg(name, 3<<30)}}, io.Discard, MaxBackup)
	var tooBig *TooBigError
	if !errors.As(err, &tooBig) {
		t.Fatalf("err = %v, want a TooBigError", err)
	}
	msg := err.Error()
	if strings.ContainsAny(msg, "\x1b\x07\r\n") {
		t.Errorf("the refusal holds the file name raw: %q", msg)
	}
	if shown := `/root/\x1b[2J\x1b]52;c;cHduZWQ=\x07big\x0d\x0alabctl: /root saved`; strings.Count(msg, shown) != 2 {
		t.Errorf("the refusal does not name the file escaped (twice: what it is, and how to remove it): %q", msg)
	}
}
