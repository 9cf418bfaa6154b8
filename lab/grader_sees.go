package lab

import (
	"path"
	"reflect"
	"strings"
)

// HomeDir is the learner's home in the sandbox, the volume the grader
// reads their work from.
const HomeDir = "/root"

// graderSees reports whether the grader reads the sandbox's p: the grader
// mounts only the learner's home and the lab's fixtures, at the paths the
// sandbox has them; anywhere else it would read its own image.
func (l *Lab) graderSees(p string) bool {
	p = path.Clean(p)
	for _, dir := range []string{HomeDir, l.Sandbox.Fixtures} {
		if dir != "" && (p == dir || strings.HasPrefix(p, strings.TrimSuffix(dir, "/")+"/")) {
			return true
		}
	}
	return false
}

// sandboxReads lists, for check c at field path p, each sandbox path it
// reads: a file check's path, a git check's repository, and the file or
// repository of every file: or git: reference in it.
func sandboxReads(p string, c *Check) map[string]string {
	out := map[string]string{}
	if c.File != nil && c.File.Path != "" && c.File.Node == "" { // a node's file is read on the host
		out[p+".file.path"] = c.File.Path
	}
	if c.Git != nil && c.Git.Repo != "" {
		out[p+".git.repo"] = c.Git.Repo
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
			out[at+".ref"] = r.Path
		case RefGit:
			out[at+".ref"] = r.Repo
		}
	})
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
