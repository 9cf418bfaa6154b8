// Package importer turns a lab written for another platform into a labctl
// lab directory: lab.yaml, fixtures/ and TODO.md, the list of what the
// author must still decide. The source is a stranger's data: nothing of it
// runs, no path leaves its directory (links that lead out are refused, not
// followed), and what is read is bounded.
package importer

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strings"
	"syscall"
)

// Bounds on what an import reads from its source.
const (
	// maxText bounds one text, script or index file.
	maxText = 1 << 20
	// maxAssets bounds the bytes of all assets copied into fixtures/.
	maxAssets = 64 << 20
	// maxAssetFiles bounds how many assets are copied.
	maxAssetFiles = 2000
	// maxTexts bounds the bytes of every text, script and index file read
	// together: a file named many times counts each time.
	maxTexts = 16 << 20
	// maxAssetLines bounds the setup lines that place the assets.
	maxAssetLines = 2 * maxAssetFiles
)

// source reads files of one scenario directory and no others.
type source struct {
	root *os.Root
	dir  string
	// total is what read has returned so far; over is set once it would
	// pass maxTexts, and ends the import.
	total int
	over  error
}

// openNonBlocking opens for reading without blocking: a FIFO swapped in
// after the check that a file is regular does not hang the import.
const openNonBlocking = os.O_RDONLY | syscall.O_NONBLOCK

func openSource(dir string) (*source, error) {
	fi, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("reading the lab to import: %w", err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("%s is not a directory; give the directory of the lab to import", dir)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("reading the lab to import: %w", err)
	}
	return &source{root: root, dir: dir}, nil
}

func (s *source) Close() error { return s.root.Close() }

// clean makes a path named by the scenario relative to its directory, or
// says why it cannot be read.
func clean(name string) (string, error) {
	p := path.Clean(strings.TrimPrefix(strings.ReplaceAll(name, `\`, "/"), "./"))
	if name == "" || path.IsAbs(p) || p == ".." || strings.HasPrefix(p, "../") {
		return "", fmt.Errorf("%q is outside the scenario's directory", name)
	}
	return p, nil
}

// read returns the content of a regular file of the scenario, at most
// maxText bytes, and all reads together at most maxTexts. A path that
// leaves the directory, through .. or a link, is refused, and so is
// anything but a regular file, before it is opened (a FIFO never hangs).
func (s *source) read(name string) (string, error) {
	if s.over != nil {
		return "", s.over
	}
	p, err := clean(name)
	if err != nil {
		return "", err
	}
	fi, err := s.root.Stat(p)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("%s: no such file in the scenario", p)
		}
		return "", fmt.Errorf("%s: %w", p, err)
	}
	if !fi.Mode().IsRegular() {
		return "", notRegular(p, fi.Mode())
	}
	f, err := s.root.OpenFile(p, openNonBlocking, 0)
	if err != nil {
		return "", fmt.Errorf("%s: %w", p, err)
	}
	defer f.Close()
	if fi, err = f.Stat(); err != nil {
		return "", fmt.Errorf("%s: %w", p, err)
	}
	if !fi.Mode().IsRegular() {
		return "", notRegular(p, fi.Mode())
	}
	b, err := io.ReadAll(io.LimitReader(f, maxText+1))
	if err != nil {
		return "", fmt.Errorf("%s: %w", p, err)
	}
	if len(b) > maxText {
		return "", fmt.Errorf("%s is larger than %d MiB", p, maxText>>20)
	}
	if s.total += len(b); s.total > maxTexts {
		s.over = fmt.Errorf("the source names more than %d MiB of texts and scripts (past it at %s; a file named many times counts each time): "+
			"nothing was imported; name each file once, and keep large data out of its texts", maxTexts>>20, p)
		return "", s.over
	}
	return strings.ReplaceAll(string(b), "\r\n", "\n"), nil
}

// notRegular says why p, of mode, is not read.
func notRegular(p string, mode fs.FileMode) error {
	what := "not a regular file"
	switch {
	case mode&fs.ModeNamedPipe != 0:
		what = "a FIFO"
	case mode&fs.ModeDevice != 0:
		what = "a device"
	case mode&fs.ModeSocket != 0:
		what = "a socket"
	case mode.IsDir():
		what = "a directory"
	}
	return fmt.Errorf("%s is %s, not a regular file: it was not opened", p, what)
}

// exists says whether the scenario holds a regular file at name.
func (s *source) exists(name string) bool {
	p, err := clean(name)
	if err != nil {
		return false
	}
	fi, err := s.root.Lstat(p)
	return err == nil && fi.Mode().IsRegular()
}
