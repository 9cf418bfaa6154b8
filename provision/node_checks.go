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
	"slices"
	"strconv"
	"strings"
	"time"

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

// NodeProcesses lists the processes of node (a lab.NodeRoles name) as the
// host sees them, run with NodePSArgs: ps's column titles and a row of
// columns per process, the last column whole (it may hold spaces). The
// host's ps reads them, never a program of the node's.
type NodeProcesses func(ctx context.Context, node string) (titles []string, rows [][]string, err error)

// NodePSArgs are the host's ps arguments NodeProcesses runs: each
// process's pid, seconds since it started, control groups (wide enough
// never to be cut) and command.
var NodePSArgs = []string{"-o", "pid,etimes,cgroup:8192,args"}

// unitSettled is how long a process of a unit must have run for the unit to
// run: a service that fails as it starts, which systemd starts again every
// second or so, is never up that long.
const unitSettled = 5

// nodeCheck says whether c reads a node's file or its processes.
func nodeCheck(c *lab.Check) bool {
	return (c.File != nil && c.File.Node != "") || c.Service != nil
}

// runNodeChecks judges checks that read a node's files on the host: each
// file is copied from the node's container by the engine into a directory
// of its own, and the check judged there as a file check of the sandbox
// would be, by the same code. Nothing of the node runs.
func (e *Live) runNodeChecks(ctx context.Context, cs []lab.Check, lang msg.Lang) []checks.Result {
	results := make([]checks.Result, len(cs))
	nf := e.feat.NodeFile
	for i, c := range cs {
		if c.Service != nil {
			results[i] = e.runServiceCheck(ctx, c, lang)
			continue
		}
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

// runServiceCheck judges a service check from the node's processes as the
// host lists them: the service runs when a process is in its control
// group. Nothing of the node runs, so its systemctl, which the learner may
// have replaced, says nothing here.
func (e *Live) runServiceCheck(ctx context.Context, c lab.Check, lang msg.Lang) checks.Result {
	sc := c.Service
	if e.feat.NodeProcesses == nil {
		return checks.ErrorResult(&c, "this runtime cannot see a node's processes")
	}
	timeout := c.Timeout.Duration
	if timeout <= 0 {
		timeout = lab.DefaultCheckTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	start := time.Now()
	titles, rows, err := e.feat.NodeProcesses(ctx, sc.Node)
	if err != nil {
		return checks.ErrorResult(&c, fmt.Sprintf("listing the processes of node %s: %v", sc.Node, err))
	}
	found, err := unitProcesses(titles, rows, sc.Unit)
	if err != nil {
		return checks.ErrorResult(&c, fmt.Sprintf("listing the processes of node %s: %v", sc.Node, err))
	}
	cat := msg.New(lang)
	status, text := checks.Pass, ""
	switch {
	case sc.WantsRunning() && len(found) == 0:
		status, text = checks.Fail, cat.Render(msg.T(msg.ServiceNotRunning, sc.Unit, sc.Node))
	case sc.WantsRunning():
		text = cat.Render(msg.T(msg.ServiceRuns, sc.Unit, sc.Node, strings.Join(found, cat.Render(msg.T(msg.ListSeparator)))))
	case len(found) > 0:
		status, text = checks.Fail, cat.Render(msg.T(msg.ServiceRunning, sc.Unit, sc.Node, strings.Join(found, cat.Render(msg.T(msg.ListSeparator)))))
	}
	points := c.Points
	if points == 0 {
		points = 1
	}
	return checks.Result{Name: c.Name, Description: c.Description, Status: status, Message: text,
		Duration: time.Since(start), Points: points, Optional: c.Optional}
}

// unitProcesses returns, as "pid N (command)", the processes of rows
// (ps's output with NodePSArgs, under titles) that have run for unitSettled
// seconds or more and are in unit's control group of the hierarchy systemd manages: cgroup v2's unified one (0::) or
// v1's name=systemd. A unit's control group is a path element named like
// it (.../system.slice/containerd.service, kind's
// .../kubelet.slice/kubelet.service), its own sub-groups included.
func unitProcesses(titles []string, rows [][]string, unit string) ([]string, error) {
	col := map[string]int{}
	for i, t := range titles {
		col[strings.ToUpper(strings.TrimSpace(t))] = i
	}
	pidCol, okPid := col["PID"]
	cgCol, okCg := col["CGROUP"]
	ageCol, okAge := col["ELAPSED"]
	argsCol, okArgs := col["COMMAND"]
	if !okArgs {
		argsCol, okArgs = col["ARGS"]
	}
	if !okPid || !okAge || !okCg || !okArgs {
		return nil, fmt.Errorf("the host's ps answered the columns %q, not PID, ELAPSED, CGROUP and COMMAND: the engine's ps does not take %s", strings.Join(titles, " "), strings.Join(NodePSArgs, " "))
	}
	var found []string
	for _, row := range rows {
		if len(row) != len(titles) {
			return nil, fmt.Errorf("the host's ps answered a row of %d columns under %d titles", len(row), len(titles))
		}
		age, err := strconv.Atoi(strings.TrimSpace(row[ageCol]))
		if err != nil {
			return nil, fmt.Errorf("the host's ps answered %q for the seconds process %s has run", row[ageCol], row[pidCol])
		}
		if age >= unitSettled && inUnit(row[cgCol], unit) {
			command := row[argsCol]
			if len(command) > 60 {
				command = command[:60] + "..."
			}
			found = append(found, fmt.Sprintf("pid %s (%s)", row[pidCol], command))
		}
	}
	return found, nil
}

// inUnit says whether ps's cgroup column (hierarchy:controllers:path
// entries, comma-separated) puts a process in unit's control group.
func inUnit(cgroups, unit string) bool {
	for _, entry := range strings.Split(cgroups, ",") {
		parts := strings.SplitN(entry, ":", 3)
		if len(parts) != 3 {
			continue
		}
		if !(parts[0] == "0" && parts[1] == "") && parts[1] != "name=systemd" {
			continue
		}
		if slices.Contains(strings.Split(parts[2], "/"), unit) {
			return true
		}
	}
	return false
}
