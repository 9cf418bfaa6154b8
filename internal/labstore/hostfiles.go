package labstore

import (
	"fmt"
	"path"
	"strings"
)

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
		"remove it from the lab (a lab in a git repository is installed with `labctl install GIT-URL`, which copies no repository metadata)", e.Path, e.What)
}

// hostToolFile returns the error for p, a slash-separated path in a lab,
// when any of its components is a host tool's configuration.
func hostToolFile(p string) error {
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
