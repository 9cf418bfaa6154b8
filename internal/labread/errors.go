package labread

import (
	"fmt"
	"io/fs"
	"path"
	"strings"

	"github.com/labctl/labctl/internal/textsafe"
)

// line shows a name from the lab (or a link's target) on one line, its
// control characters escaped: a name cannot print a line of its own or
// steer the terminal.
func line(s string) string { return textsafe.EscapeLine(s) }

// LinkError refuses a lab that holds a link, a device, a FIFO or a socket,
// or whose path goes through a link: nothing of a lab is read through a
// link, and nothing but regular files and directories is opened.
type LinkError struct {
	// Dir is the lab's directory (or, for a link in the path to it, the
	// path as named); Path the offending entry, slash-separated.
	Dir, Path string
	Mode      fs.FileMode
	// Target is where a symbolic link points, when it could be read.
	Target string
	// InPath says the link is a component of the path to the lab, not
	// an entry of the lab.
	InPath bool
}

func (e *LinkError) Error() string {
	what := "a symbolic link"
	switch {
	case e.Mode&fs.ModeSymlink != 0:
		if e.Target != "" {
			what += " to " + line(e.Target)
		}
	case e.Mode&fs.ModeNamedPipe != 0:
		what = "a FIFO"
	case e.Mode&fs.ModeSocket != 0:
		what = "a socket"
	case e.Mode&fs.ModeDevice != 0:
		what = "a device"
	default:
		what = "no regular file or directory"
	}
	if e.InPath {
		return fmt.Sprintf("%s, on the path to the lab, is %s: a lab is read only through the directories its path names, never through a link; "+
			"give the lab's real path instead (with --lab), or replace the link with the directory", line(e.Path), what)
	}
	return fmt.Sprintf("%s in the lab %s is %s: labs may not contain links, devices, FIFOs or sockets, and nothing of a lab is read through a link; "+
		"replace it with the files themselves, or remove it", line(e.Path), line(e.Dir), what)
}

// LimitError refuses a lab larger than the reader's bounds.
type LimitError struct {
	Dir  string
	What string // "bytes", "lab file", "files" or "depth"
	Max  int64
	// Path is the file being read when the bound was passed.
	Path string
}

func (e *LimitError) Error() string {
	if e.What == "bytes" {
		return fmt.Sprintf("the lab %s holds more than %d MiB (past it at %s): a lab's files are read into memory and copied into every sandbox; "+
			"keep large data out of the lab (build it into an image, or have setup make it)", line(e.Dir), e.Max>>20, line(e.Path))
	}
	if e.What == "lab file" {
		return fmt.Sprintf("the lab file %s is larger than %d MiB: a lab file is parsed whole, into memory; "+
			"keep data out of it (in fixtures/, or made by setup)", line(path.Join(e.Dir, e.Path)), e.Max>>20)
	}
	if e.What == "depth" {
		return fmt.Sprintf("the lab %s nests directories more than %d deep (at %s): flatten its tree", line(e.Dir), e.Max, line(e.Path))
	}
	return fmt.Sprintf("the lab %s holds more than %d files and directories (past it at %s): keep fewer files in the lab (an archive, or an image, holds many)", line(e.Dir), e.Max, line(e.Path))
}

// hostToolFiles are names that a tool on the host reads as its own
// configuration when it runs in, or below, a directory holding them: the
// repository metadata of every version control system Go's -buildvcs
// stamping runs (git runs core.fsmonitor, Mercurial its hooks), Go's
// workspace and environment files, and credential files. None of them is
// ever part of a lab.
var hostToolFiles = map[string]string{
	".git":        "git's repository metadata",
	".gitconfig":  "git's configuration",
	".gitmodules": "git's submodule configuration",
	".hg":         "Mercurial's repository metadata",
	".hgrc":       "Mercurial's configuration",
	".svn":        "Subversion's working copy metadata",
	".bzr":        "Bazaar's repository metadata",
	".fslckout":   "Fossil's checkout metadata",
	"_FOSSIL_":    "Fossil's checkout metadata",
	".jj":         "Jujutsu's repository metadata",
	"go.work":     "a Go workspace file",
	"go.work.sum": "a Go workspace checksum file",
	"go.env":      "Go's environment file",
	".netrc":      "a credentials file",
	"_netrc":      "a credentials file",
	".npmrc":      "npm's configuration",
	".envrc":      "direnv's configuration",
}

// HostToolFileError refuses a lab that holds a file a host tool reads as
// its configuration.
type HostToolFileError struct {
	// Path is the file's slash-separated path in the lab, What says whose
	// configuration it is.
	Path, What string
}

func (e *HostToolFileError) Error() string {
	return fmt.Sprintf("the lab holds %s, %s: a tool on the host would read it as its own configuration, so no lab may hold one; "+
		"remove it from the lab (a lab in a git repository is installed with `labctl install GIT-URL`, which copies no repository metadata)", line(e.Path), e.What)
}

// HostToolFile returns the error for p, a slash-separated path in a lab,
// when any of its components is a host tool's configuration (in any case).
func HostToolFile(p string) error {
	for _, seg := range strings.Split(path.Clean(p), "/") {
		if what, ok := hostToolFiles[seg]; ok {
			return &HostToolFileError{Path: p, What: what}
		}
		if what, ok := hostToolFiles[strings.ToLower(seg)]; ok {
			return &HostToolFileError{Path: p, What: what}
		}
	}
	return nil
}
