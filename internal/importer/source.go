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
)

// Bounds on what an import reads from its source.
const (
	// maxText bounds one text, script or index file.
	maxText = 1 << 20
	// maxAssets bounds the bytes of all assets copied into fixtures/.
	maxAssets = 64 << 20
	// maxAssetFiles bounds how many assets are copied.
	maxAssetFiles = 2000
)

// source reads files of one scenario directory and no others.
type source struct {
	root *os.Root
	dir  string
}

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
// maxText bytes. A path that leaves the directory, through .. or a link,
// is refused.
func (s *source) read(name string) (string, error) {
	p, err := clean(name)
	if err != nil {
		return "", err
	}
	f, err := s.root.Open(p)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("%s: no such file in the scenario", p)
		}
		return "", fmt.Errorf("%s: %w", p, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", fmt.Errorf("%s: %w", p, err)
	}
	if !fi.Mode().IsRegular() {
		return "", fmt.Errorf("%s is not a regular file", p)
	}
	b, err := io.ReadAll(io.LimitReader(f, maxText+1))
	if err != nil {
		return "", fmt.Errorf("%s: %w", p, err)
	}
	if len(b) > maxText {
		return "", fmt.Errorf("%s is larger than %d MiB", p, maxText>>20)
	}
	return strings.ReplaceAll(string(b), "\r\n", "\n"), nil
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
