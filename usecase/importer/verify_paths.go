package importer

import (
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/labctl/labctl/lab"
)

// fileExists maps test -e/-f/-d P: P exists (as a file, a directory), or,
// hold false, P does not exist (-e only: "not a regular file" is not
// "gone").
func fileExists(p, op string, hold, relative bool) (check, bool) {
	p, ok := homePath(p, relative)
	if !ok {
		return check{}, false
	}
	fc := &fileCheck{Path: p}
	switch {
	case !hold && op == "-e":
		no := false
		fc.Exists = &no
		return check{Name: slug("file-"+p, 50) + "-gone", Description: p + " does not exist", File: fc}, true
	case !hold:
		return check{}, false
	case op == "-f":
		fc.Type = "file"
	case op == "-d":
		fc.Type = "dir"
	case op != "-e":
		return check{}, false
	}
	return check{Name: slug("file-"+p, 50), Description: p + " exists", File: fc}, true
}

// homePath is the path a check reads for p as a script in the learner's
// home names it (a relative path only while the script has not changed
// its directory): any path of the sandbox, which a file check reads from
// the host's side outside /root; false in /proc, /sys and /dev, which no
// check reads.
func homePath(p string, relative bool) (string, bool) {
	if p == "" || strings.ContainsAny(p, "*?[~$`") {
		return "", false
	}
	if !strings.HasPrefix(p, "/") {
		if !relative {
			return "", false
		}
		p = path.Join(lab.HomeDir, p)
	}
	p = path.Clean(p)
	if neverRead(p) {
		return "", false
	}
	return p, true
}

// inPodRE is a command run inside a Pod, to the end of its line.
var inPodRE = lazyRegexp(`\b(?:kubectl|k)\s+(?:exec|run|debug|cp)\b[^\n]*`)

// pathsOutsideHome lists the absolute paths a script names outside the
// learner's home (not the system's own directories of programs and
// devices, which the grader's image has as well): a command check runs
// in the grader, which has its own.
func pathsOutsideHome(script string) []string {
	var out []string
	seen := map[string]bool{}
	// A path after kubectl exec, run or debug is inside a Pod.
	script = inPodRE.ReplaceAllString(script, "")
	for _, m := range absPathRE.FindAllStringSubmatch(script, -1) {
		p := m[1]
		if strings.HasPrefix(p, "//") {
			continue // jq's alternative operator, not a path
		}
		if inHome(p) || seen[p] || strings.HasPrefix(p, "/dev/") || strings.HasPrefix(p, "/bin/") || strings.HasPrefix(p, "/usr/") || strings.HasPrefix(p, "/proc/") {
			continue
		}
		seen[p] = true
		out = append(out, p)
	}
	return out
}

// inHome reports whether p is in the learner's home, which the grader
// mounts.
func inHome(p string) bool {
	p = path.Clean(p)
	return p == lab.HomeDir || strings.HasPrefix(p, lab.HomeDir+"/")
}

// neverRead reports whether p is in /proc, /sys or /dev, which no check
// reads.
func neverRead(p string) bool {
	for _, d := range lab.NeverRead {
		if p == d || strings.HasPrefix(p, d+"/") {
			return true
		}
	}
	return false
}

var (
	// logRedirectRE is a redirection of output to a file: to a path, or to
	// a variable's value.
	logRedirectRE = lazyRegexp(`(^|[^&>0-9])([12]?>>?)[ \t]*"?(\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?|/[^\s"';|&)<>]+)"?`)
	// pathVarRE sets a variable to an absolute path.
	pathVarRE = lazyRegexp(`(?m)^[ \t]*([A-Za-z_][A-Za-z0-9_]*)=["']?(/[^\s"';]+)["']?[ \t]*$`)
)

// logsOutsideHome rewrites the redirections of a script's output to a log
// file outside the learner's home (Killercoda's `{ …; } >> /ks/step1-verify.log
// 2>&1`, through a variable or not) into its standard error. The grader
// sees only the learner's home: such a redirection fails there, the block
// it applies to never runs, and a script that then ends with `echo done`
// would pass whatever the learner did. A file the script also reads is
// left as it is. It returns the script and the files so redirected.
func logsOutsideHome(script string) (string, []string) {
	vars := map[string]string{}
	for _, m := range pathVarRE.FindAllStringSubmatch(script, -1) {
		vars[m[1]] = m[2]
	}
	target := func(m []string) string {
		if m[4] != "" {
			return vars[m[4]]
		}
		return m[3]
	}
	// Where each file is named: a file named anywhere but its
	// redirections and its variable's line is read, and kept.
	rest := pathVarRE.ReplaceAllString(logRedirectRE.ReplaceAllString(script, "$1"), "")
	var files []string
	out := logRedirectRE.ReplaceAllStringFunc(script, func(s string) string {
		m := logRedirectRE.FindStringSubmatch(s)
		p := target(m)
		if p == "" || inHome(p) || strings.HasPrefix(p, "/dev/") {
			return s
		}
		if strings.Contains(rest, p) || m[4] != "" && regexp.MustCompile(`\$\{?`+m[4]+`\b`).MatchString(rest) {
			return s
		}
		if !slices.Contains(files, p) {
			files = append(files, p)
		}
		fd := strings.TrimRight(m[2], ">")
		return m[1] + fd + ">&2"
	})
	return out, files
}
