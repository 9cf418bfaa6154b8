package provision

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"

	"github.com/labctl/labctl/checks"
	"github.com/labctl/labctl/internal/msg"
	"github.com/labctl/labctl/lab"
)

// NodeFile streams the file at p on node (a lab.NodeRoles name) as a tar
// archive of one entry, read from the host through the container engine
// that runs the node (kind's nodes are containers), never with a program
// of the node's; a missing file is an error for which
// errors.Is(err, fs.ErrNotExist) holds.
type NodeFile func(ctx context.Context, node, p string) (io.ReadCloser, error)

// maxNodeFile bounds what the host copies of one file of a node.
const maxNodeFile = 4 << 20

// nodeCheck says whether c reads a node's file.
func nodeCheck(c *lab.Check) bool { return c.File != nil && c.File.Node != "" }

// runNodeChecks judges checks that read a node's files on the host: each
// file is copied from the node's container by the engine into a directory
// of its own, and the check judged there as a file check of the sandbox
// would be, by the same code. Nothing of the node runs.
func (e *Live) runNodeChecks(ctx context.Context, cs []lab.Check, lang msg.Lang) []checks.Result {
	results := make([]checks.Result, len(cs))
	nf := e.feat.NodeFile
	for i, c := range cs {
		if nf == nil {
			results[i] = checks.ErrorResult(&c, "this runtime cannot read a node's files")
			continue
		}
		results[i] = e.runNodeCheck(ctx, nf, c, lang)
	}
	return results
}

func (e *Live) runNodeCheck(ctx context.Context, nf NodeFile, c lab.Check, lang msg.Lang) checks.Result {
	root, err := os.MkdirTemp("", "labctl-node-")
	if err != nil {
		return checks.ErrorResult(&c, err.Error())
	}
	defer os.RemoveAll(root)
	fc := *c.File
	p := path.Clean(fc.Path)
	if err := copyNodeFile(ctx, nf, fc.Node, p, filepath.Join(root, filepath.FromSlash(p))); err != nil {
		return checks.ErrorResult(&c, fmt.Sprintf("reading %s on node %s: %v", p, fc.Node, err))
	}
	fc.Node = ""
	local := c
	local.File = &fc
	env := checks.Env{Root: root, Areas: []string{path.Dir(p)}, Lang: lang}
	return checks.Run(ctx, env, []lab.Check{local})[0]
}

// copyNodeFile copies the file at p on node to dst, leaving nothing when
// the node has no such file. Only a regular file, a directory (empty) or
// a symbolic link is made; a file beyond maxNodeFile is an error.
func copyNodeFile(ctx context.Context, nf NodeFile, node, p, dst string) error {
	if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
		return err
	}
	rc, err := nf(ctx, node, p)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer rc.Close()
	tr := tar.NewReader(rc)
	h, err := tr.Next()
	if err != nil {
		return fmt.Errorf("reading the engine's archive: %w", err)
	}
	switch h.Typeflag {
	case tar.TypeReg:
		if h.Size > maxNodeFile {
			return fmt.Errorf("it is %d bytes; a check reads at most %d", h.Size, maxNodeFile)
		}
		f, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, os.FileMode(h.Mode)&0o777)
		if err != nil {
			return err
		}
		if _, err := io.CopyN(f, tr, h.Size); err != nil {
			f.Close()
			return err
		}
		return f.Close()
	case tar.TypeDir:
		return os.Mkdir(dst, 0o700)
	case tar.TypeSymlink:
		return os.Symlink(h.Linkname, dst)
	}
	return fmt.Errorf("it is neither a file, a directory nor a link (tar type %q)", h.Typeflag)
}
