package app

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/spf13/pflag"

	"github.com/labctl/labctl/internal/textsafe"
	"github.com/labctl/labctl/lab"
	"github.com/labctl/labctl/usecase/labstore"
)

// addAllowHostAccessFlag adds --allow-host-access, the user's consent to a
// lab that reaches beyond its own cluster to the host (lab.Lab.Risks).
func addAllowHostAccessFlag(fl *pflag.FlagSet, allow *bool) {
	fl.BoolVar(allow, strings.TrimPrefix(labstore.AllowHostAccessFlag, "--"), false,
		"run a lab that asks for privileged Pod Security, cluster-wide rules beyond reading, root on its nodes or its own node or sandbox image: root on this machine for its author and the learner")
}

// checkHostAccess refuses to bring up lab l, whose lab file is in dir
// ("" for the built-in lab), when it has risks (lab.Lab.Risks) and the
// user consented neither now (allow) nor when installing it (its install
// record). The built-in lab is labctl's own; a lab in a directory that is
// not installed is the same stranger's code as one being installed.
func (g *globals) checkHostAccess(l *lab.Lab, dir, action string, allow bool) error {
	risks := l.Risks()
	if len(risks) == 0 || allow || dir == "" {
		return nil
	}
	if store, err := g.labStore(); err == nil {
		if installed, err := store.Resolve(l.Metadata.Name); err == nil && samePath(installed, dir) && labstore.Consented(dir, risks) {
			return nil
		}
	}
	return &ExitError{Code: exitError, Err: &labstore.HostAccessError{Lab: l.Metadata.Name, Action: action, Risks: risks}}
}

// samePath reports whether a and b name the same directory.
func samePath(a, b string) bool {
	ea, err1 := filepath.EvalSymlinks(a)
	eb, err2 := filepath.EvalSymlinks(b)
	return err1 == nil && err2 == nil && ea == eb
}

// printPowers writes what lab l may do (lab.Powers), escaped, and its
// risks, which needed --allow-host-access.
func printPowers(w io.Writer, l *lab.Lab) error {
	var b strings.Builder
	b.WriteString("What the lab may do:\n")
	for _, line := range l.Powers().Lines() {
		fmt.Fprintf(&b, "  %s\n", textsafe.EscapeLine(line))
	}
	if risks := l.Risks(); len(risks) > 0 {
		fmt.Fprintf(&b, "It reaches this machine (%s):\n", labstore.AllowHostAccessFlag)
		for _, r := range risks {
			fmt.Fprintf(&b, "  %s\n", textsafe.EscapeLine(r.String()))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}
