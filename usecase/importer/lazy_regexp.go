package importer

import (
	"regexp"
	"sync"
)

// lazyRE is a regular expression compiled at its first use: the
// importer's many expressions then cost the start of every other labctl
// command (a check round's two processes among them) nothing.
type lazyRE struct {
	expr string
	once sync.Once
	re   *regexp.Regexp
}

// lazyExprs are every lazyRE made, for the test that compiles them all.
var lazyExprs []*lazyRE

// lazyRegexp is regexp.MustCompile, deferred to the expression's first use.
func lazyRegexp(expr string) *lazyRE {
	l := &lazyRE{expr: expr}
	lazyExprs = append(lazyExprs, l)
	return l
}

// get compiles the expression once; an invalid one panics as
// regexp.MustCompile does, at its first use (TestLazyRegexpsCompile
// compiles every one).
func (l *lazyRE) get() *regexp.Regexp {
	l.once.Do(func() { l.re = regexp.MustCompile(l.expr) })
	return l.re
}

func (l *lazyRE) String() string                             { return l.expr }
func (l *lazyRE) MatchString(s string) bool                  { return l.get().MatchString(s) }
func (l *lazyRE) FindString(s string) string                 { return l.get().FindString(s) }
func (l *lazyRE) FindStringIndex(s string) []int             { return l.get().FindStringIndex(s) }
func (l *lazyRE) FindStringSubmatch(s string) []string       { return l.get().FindStringSubmatch(s) }
func (l *lazyRE) FindStringSubmatchIndex(s string) []int     { return l.get().FindStringSubmatchIndex(s) }
func (l *lazyRE) FindAllString(s string, n int) []string     { return l.get().FindAllString(s, n) }
func (l *lazyRE) FindAllStringIndex(s string, n int) [][]int { return l.get().FindAllStringIndex(s, n) }
func (l *lazyRE) FindAllStringSubmatch(s string, n int) [][]string {
	return l.get().FindAllStringSubmatch(s, n)
}
func (l *lazyRE) FindAllStringSubmatchIndex(s string, n int) [][]int {
	return l.get().FindAllStringSubmatchIndex(s, n)
}
func (l *lazyRE) ReplaceAllString(s, repl string) string { return l.get().ReplaceAllString(s, repl) }
func (l *lazyRE) ReplaceAllStringFunc(s string, f func(string) string) string {
	return l.get().ReplaceAllStringFunc(s, f)
}
func (l *lazyRE) Split(s string, n int) []string { return l.get().Split(s, n) }
func (l *lazyRE) SubexpIndex(name string) int    { return l.get().SubexpIndex(name) }
