// Package homebound bounds a learner's home on storage that does not bound
// it: it measures what the home holds on its disk and says when to stop
// the sandbox that writes there, as the kubelet measures an emptyDir and
// evicts the Pod past its sizeLimit.
//
// A look comes after the writes it sees: between two looks a learner can
// write as fast as the disk takes it. What the bound promises is that the
// sandbox is stopped at the first look past it, and that a sandbox started
// again over a home past its bound may shrink the home but not grow it.
package homebound

import (
	"errors"
	"fmt"

	"github.com/labctl/labctl/internal/countio"
)

// Usage is what a directory tree holds on its disk.
type Usage struct {
	// Bytes are the blocks its inodes hold, each inode once (a hard link
	// adds a name, not an inode; a sparse file counts what it allocated;
	// the names themselves are in their directories' blocks).
	Bytes int64
	// Entries are its names, the top directory's own included.
	Entries int64
	// Depth is how many directories deep its deepest name is.
	Depth int64
	// Unread are the names it could not read (most often, names removed
	// while the walk went on); their blocks are not in Bytes.
	Unread int64
	// Truncated says the walk did not see the whole tree (it stopped at
	// twice the bound of names or levels, or could not read a directory
	// that was there): every figure is a lower bound.
	Truncated bool
}

// Limit is the bound of a home.
type Limit struct {
	Bytes, Entries, Depth int64
}

// Over says whether u is past l.
func (l Limit) Over(u Usage) bool {
	return u.Bytes > l.Bytes || u.Entries > l.Entries || u.Depth > l.Depth
}

func (l Limit) String() string {
	return fmt.Sprintf("%s, %d names or %d levels", countio.Size(l.Bytes), l.Entries, l.Depth)
}

func (u Usage) String() string {
	atLeast := ""
	if u.Truncated {
		atLeast = "at least "
	}
	return fmt.Sprintf("%s%s in %d names, %d levels deep", atLeast, countio.Size(u.Bytes), u.Entries, u.Depth)
}

// errPast ends a walk at twice the bound of names or levels.
var errPast = errors.New("past the bound")

// Measure adds up what dir holds on its disk. It walks the tree without
// following links, from directory to directory by their descriptors (so
// no path is too long to read, and a name renamed meanwhile is not
// followed elsewhere), reading directories into one buffer whatever the
// depth (so that no tree, however deep or wide, costs the walk more memory
// than its bound of names allows). It counts on past the bound, so that a
// home that shrinks while past it is seen to shrink, and stops at twice
// the bound of names or levels (Truncated): the walk of a home of
// millions of names would otherwise take as long as the learner likes.
func Measure(dir string, l Limit) (Usage, error) {
	u, err := measure(dir, l, Limit{Bytes: l.Bytes, Entries: 2 * l.Entries, Depth: 2 * l.Depth})
	if errors.Is(err, errPast) {
		err = nil
	}
	if err != nil {
		return u, fmt.Errorf("measuring %s: %w", dir, err)
	}
	return u, nil
}

// Ratchet judges a home's usage look by look. Within the bound, anything
// goes. The first look past it stops the sandbox. A sandbox started again
// over a home still past its bound may delete and rewrite, but a look
// that finds the home larger than the smallest it was since that sandbox
// started (or the bound, if larger) stops it again. The smallest seen is
// kept in memory: a warden that starts again over a home past its bound
// stops the sandbox at its first look, which errs on the bound's side.
type Ratchet struct {
	Limit Limit
	floor *Usage
}

// Forget drops what the ratchet saw past the bound: a stop that failed is
// tried again at the next look past it.
func (r *Ratchet) Forget() { r.floor = nil }

// Settle takes a look while no sandbox runs: nothing writes, so what the
// home holds is where a sandbox started again begins.
func (r *Ratchet) Settle(u Usage) {
	if !r.Limit.Over(u) {
		r.floor = nil
		return
	}
	r.floor = &u
}

// Judge takes a look while a sandbox runs and says whether to stop it. A
// look that did not see the whole tree stops it: what it did not see
// cannot be shown to have shrunk.
func (r *Ratchet) Judge(u Usage) bool {
	if !r.Limit.Over(u) && !u.Truncated {
		r.floor = nil
		return false
	}
	if r.floor == nil || u.Truncated {
		r.floor = &u
		return true
	}
	f := r.floor
	grew := u.Bytes > max(r.Limit.Bytes, f.Bytes) || u.Entries > max(r.Limit.Entries, f.Entries) ||
		u.Depth > max(r.Limit.Depth, f.Depth)
	f.Bytes, f.Entries, f.Depth = min(f.Bytes, u.Bytes), min(f.Entries, u.Entries), min(f.Depth, u.Depth)
	return grew
}
