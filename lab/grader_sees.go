package lab

import (
	"maps"
	"path"
	"reflect"
	"slices"
	"strings"
)

// HomeDir is the learner's home in the sandbox, the volume the grader
// reads their work from.
const HomeDir = "/root"

// GraderSees reports whether the grader reads the sandbox's p itself: the
// grader mounts only the learner's home and the lab's fixtures, at the
// paths the sandbox has them. A file check, a git check or a reference of
// any other path reads the sandbox's file system from the host's side
// (FileChecksOutside, RepoChecksOutside).
func (l *Lab) GraderSees(p string) bool {
	p = path.Clean(p)
	for _, dir := range []string{HomeDir, l.Sandbox.Fixtures} {
		if dir != "" && (p == dir || strings.HasPrefix(p, strings.TrimSuffix(dir, "/")+"/")) {
			return true
		}
	}
	return false
}

// NeverRead are the directories of the sandbox no check reads: the kernel's
// views of processes, devices and the system, never a learner's work.
var NeverRead = []string{"/proc", "/sys", "/dev"}

// neverRead returns the directory of NeverRead that holds p, or "".
func neverRead(p string) string {
	p = path.Clean(p)
	for _, d := range NeverRead {
		if p == d || strings.HasPrefix(p, d+"/") {
			return d
		}
	}
	return ""
}

// FileChecksOutside lists, in order and once each, the paths that the
// file checks of cs and their file: references read and the grader does
// not see (GraderSees): the host reads them from the sandbox for the
// checker.
func (l *Lab) FileChecksOutside(cs []Check) []string {
	return l.readsOutside(cs, true)
}

// RepoChecksOutside lists, in order and once each, the repositories that
// the git checks of cs and their git: references read and the grader does
// not see (GraderSees): the host reads each one's directory from the
// sandbox for the checker.
func (l *Lab) RepoChecksOutside(cs []Check) []string {
	return l.readsOutside(cs, false)
}

// readsOutside lists the paths the checks of cs read as files (file) or as
// repositories that the grader does not see.
func (l *Lab) readsOutside(cs []Check, file bool) []string {
	var out []string
	seen := map[string]bool{}
	for i := range cs {
		for _, p := range reads(&cs[i], file) {
			if !path.IsAbs(p) || l.GraderSees(p) || seen[p] {
				continue
			}
			seen[p] = true
			out = append(out, p)
		}
	}
	return out
}

// sandboxRead is one path of the sandbox a check reads; file says it is
// read as a file (a file check's path, a file: reference) rather than as
// a repository.
type sandboxRead struct {
	path string
	file bool
}

// sandboxReads lists, for check c at field path p, each sandbox path it
// reads: a file check's path, a git check's repository, and the file or
// repository of every file: or git: reference in it.
func sandboxReads(p string, c *Check) map[string]sandboxRead {
	out := map[string]sandboxRead{}
	if c.File != nil && c.File.Path != "" && c.File.Node == "" { // a node's file is read on the host
		out[p+".file.path"] = sandboxRead{c.File.Path, true}
	}
	if c.Git != nil && c.Git.Repo != "" {
		out[p+".git.repo"] = sandboxRead{c.Git.Repo, false}
	}
	walkValues(reflect.ValueOf(c).Elem(), p, func(at string, v *Value) {
		if !v.IsRef() {
			return
		}
		r, err := ParseRef(v.Ref)
		if err != nil {
			return // reported by value
		}
		switch r.Source {
		case RefFile:
			out[at+".ref"] = sandboxRead{r.Path, true}
		case RefGit:
			out[at+".ref"] = sandboxRead{r.Repo, false}
		}
	})
	return out
}

// reads are the paths c reads as files (a file check's path and the file
// of every file: reference in it), or else as repositories (a git check's
// repository and that of every git: reference in it).
func reads(c *Check, file bool) []string {
	reads := sandboxReads("", c)
	var out []string
	for _, at := range slices.Sorted(maps.Keys(reads)) {
		if reads[at].file == file {
			out = append(out, reads[at].path)
		}
	}
	return out
}

var valuePtrType = reflect.TypeOf((*Value)(nil))

// walkValues calls f for every non-nil *Value reachable from v through
// structs and pointers, with its field path (yaml names).
func walkValues(v reflect.Value, p string, f func(string, *Value)) {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return
		}
		if v.Type() == valuePtrType {
			f(p, v.Interface().(*Value))
			return
		}
		walkValues(v.Elem(), p, f)
	case reflect.Struct:
		t := v.Type()
		for i := range t.NumField() {
			sf := t.Field(i)
			if !sf.IsExported() {
				continue
			}
			name, _, _ := strings.Cut(sf.Tag.Get("yaml"), ",")
			fp := p
			if name != "" {
				fp = p + "." + name
			}
			walkValues(v.Field(i), fp, f)
		}
	}
}
