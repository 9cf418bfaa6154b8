package reset

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/labctl/labctl/internal/atomicfile"
	"github.com/labctl/labctl/internal/countio"
	"github.com/labctl/labctl/internal/textsafe"
)

// MaxBackup is the largest /root a backup saves, by the size of its tar:
// every file's content, a sparse file counted at its full length, and
// every entry's headers (a hard link or a long name costs one or more
// 512-byte blocks of its own), since that is what the tar holds. A backup beyond it is refused before anything is
// written past it, and before anything is destroyed.
const MaxBackup int64 = 2 << 30

// Home is where a backup reads the learner's /root: an Environment, or
// kind.Home for a lab that is down.
type Home interface {
	// BackupHome writes /root to w as a tar stream.
	BackupHome(ctx context.Context, w io.Writer) error
}

// TooBigError is a /root beyond MaxBackup.
type TooBigError struct {
	// Seen is the apparent size read when the backup stopped, beyond Limit.
	Seen, Limit int64
	// Largest is the largest file seen (its path in the sandbox) and its size.
	Largest     string
	LargestSize int64
}

// Error names the largest file escaped (textsafe), on one line: the
// learner chose its name.
func (e *TooBigError) Error() string {
	largest := textsafe.EscapeLine(e.Largest)
	return fmt.Sprintf("your /root holds more than %s as a tar (files counted at their full size, sparse ones too, and every file's and link's header), beyond the %s a backup may hold; "+
		"%s alone is %s: delete the files you do not need in the sandbox (for example `rm %s`) and try again, "+
		"or pass --no-backup to go on without saving /root (what it holds is then lost)",
		countio.Size(e.Seen), countio.Size(e.Limit), largest, countio.Size(e.LargestSize), largest)
}

// Backup writes the learner's /root from home to dir/root-<UTC timestamp>.tar
// and returns its path. It is the backup reset makes, for other commands
// that destroy the home (down --purge).
func Backup(ctx context.Context, home Home, dir string, at time.Time) (string, error) {
	return backup(ctx, home, dir, at)
}

// backup writes the sandbox's /root to dir/root-<UTC timestamp>.tar through
// a temporary file, so that a backup that fails halfway, or is refused as
// too big, leaves no file that looks whole.
func backup(ctx context.Context, home Home, dir string, at time.Time) (string, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	name := filepath.Join(dir, "root-"+at.UTC().Format("20060102T150405Z")+".tar")
	err := atomicfile.Create(name, 0o600, func(w io.Writer) error { return copyBounded(ctx, home, w, MaxBackup) })
	if errors.Is(err, fs.ErrExist) {
		return "", fmt.Errorf("%s exists already; wait a second and try again", name)
	}
	if err != nil {
		return "", err
	}
	return name, nil
}

// copyBounded copies home's tar stream to w as it comes, reading each
// entry's header before its content: once the sizes announced pass limit it
// stops, with a TooBigError, before the content that passes it is read.
func copyBounded(ctx context.Context, home Home, w io.Writer, limit int64) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := home.BackupHome(ctx, pw)
		pw.CloseWithError(err)
		done <- err
	}()
	stop := func(err error) error {
		cancel()
		pr.CloseWithError(err)
		<-done
		return err
	}
	// read counts every byte of the stream, headers (a link's, a long
	// name's extended header) and padding as well as content: that is
	// what the tar on the disk holds.
	read := &countio.Reader{R: pr}
	in := io.TeeReader(read, w)
	tr := tar.NewReader(in)
	tooBig := &TooBigError{Limit: limit}
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			cancel()
			pr.CloseWithError(err)
			if srcErr := <-done; srcErr != nil {
				return srcErr
			}
			return fmt.Errorf("reading the tar of /root: %w", err)
		}
		// What is read so far, and the content this header announces.
		tooBig.Seen = read.N + h.Size
		if h.Size > tooBig.LargestSize {
			tooBig.Largest, tooBig.LargestSize = "/"+h.Name, h.Size
		}
		if tooBig.Seen > limit {
			return stop(tooBig)
		}
	}
	// The end of the archive may be followed by padding: keep it.
	if _, err := io.Copy(io.Discard, in); err != nil {
		return stop(err)
	}
	return <-done
}
