package labstore

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/labctl/labctl/lab"
)

// labRepo is a git repository in a temporary directory whose history holds
// the lab small at version 1 (tagged v1, annotated), 2 (main) and 3 (on
// branch dev), and a second lab in labs/other from version 2 on.
type labRepo struct {
	dir                 string
	v1, v2, v3          plumbing.Hash
	repo                *git.Repository
	worktree            *git.Worktree
	signature           *object.Signature
	mainBranch, devName plumbing.ReferenceName
}

func newLabRepo(t *testing.T) *labRepo {
	t.Helper()
	r := &labRepo{dir: t.TempDir(), signature: &object.Signature{Name: "Author", Email: "author@example.com", When: time.Unix(1700000000, 0)}}
	var err error
	if r.repo, err = git.PlainInit(r.dir, false); err != nil {
		t.Fatal(err)
	}
	if r.worktree, err = r.repo.Worktree(); err != nil {
		t.Fatal(err)
	}
	writeLab(t, r.dir, "small", "1")
	r.v1 = r.commit(t, "version 1")
	if _, err := r.repo.CreateTag("v1", r.v1, &git.CreateTagOptions{Tagger: r.signature, Message: "v1"}); err != nil {
		t.Fatal(err)
	}
	head, err := r.repo.Head()
	if err != nil {
		t.Fatal(err)
	}
	r.mainBranch = head.Name()
	writeLab(t, r.dir, "small", "2")
	writeLab(t, filepath.Join(r.dir, "labs", "other"), "other", "1")
	r.v2 = r.commit(t, "version 2")
	r.devName = plumbing.NewBranchReferenceName("dev")
	if err := r.worktree.Checkout(&git.CheckoutOptions{Branch: r.devName, Create: true}); err != nil {
		t.Fatal(err)
	}
	writeLab(t, r.dir, "small", "3")
	r.v3 = r.commit(t, "version 3")
	if err := r.worktree.Checkout(&git.CheckoutOptions{Branch: r.mainBranch}); err != nil {
		t.Fatal(err)
	}
	return r
}

func (r *labRepo) commit(t *testing.T, msg string) plumbing.Hash {
	t.Helper()
	if err := r.worktree.AddWithOptions(&git.AddOptions{All: true}); err != nil {
		t.Fatal(err)
	}
	h, err := r.worktree.Commit(msg, &git.CommitOptions{Author: r.signature})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func installedVersion(t *testing.T, s *Store, name string) string {
	t.Helper()
	l, err := lab.Load(filepath.Join(s.Dir(), name, LabFile))
	if err != nil {
		t.Fatal(err)
	}
	return l.Metadata.Version
}

func TestInstallFromGit(t *testing.T) {
	r := newLabRepo(t)
	url := "file://" + r.dir
	s := New(filepath.Join(t.TempDir(), "labs"))
	ctx := context.Background()
	for _, tc := range []struct {
		ref     string
		commit  plumbing.Hash
		version string
	}{
		{"v1", r.v1, "1"},
		{"dev", r.v3, "3"},
		{r.v2.String()[:10], r.v2, "2"},
		{r.v1.String(), r.v1, "1"},
		{"", r.v2, "2"}, // HEAD
	} {
		res, err := s.Install(ctx, url, Options{Ref: tc.ref, Force: true})
		if err != nil {
			t.Fatalf("--ref %q: %v", tc.ref, err)
		}
		m, err := readMeta(res.Dir)
		if err != nil {
			t.Fatal(err)
		}
		if m.Kind != KindGit || m.Source != url || m.Ref != tc.ref || m.Commit != tc.commit.String() ||
			m.Origin() != url+"@"+tc.commit.String()[:12] {
			t.Errorf("--ref %q: install record %+v", tc.ref, m)
		}
		if v := installedVersion(t, s, "small"); v != tc.version {
			t.Errorf("--ref %q installed version %s, want %s", tc.ref, v, tc.version)
		}
		// Everything but the empty directory, which git does not keep.
		want := slices.DeleteFunc(slices.Clone(installedFiles), func(s string) bool { return s == "fixtures/empty/ d" })
		if got := modes(t, res.Dir); !slices.Equal(got, want) {
			t.Errorf("--ref %q installed:\n%s", tc.ref, strings.Join(got, "\n"))
		}
	}

	// The same commit again changes nothing.
	before := tree(t, s.Dir())
	if res, err := s.Install(ctx, url, Options{Ref: r.mainBranch.Short()}); err != nil || !res.Unchanged {
		t.Errorf("HEAD's commit again, by its branch: %+v, %v", res, err)
	}
	if tree(t, s.Dir()) != before {
		t.Error("installing the same commit again changed the labs directory")
	}
	// Another commit is other files: refused without --force.
	if _, err := s.Install(ctx, url, Options{Ref: "dev"}); err == nil || !strings.Contains(err.Error(), "another lab named small") {
		t.Errorf("dev over v1: %v", err)
	}

	// A plain path with --ref, and a lab in a subdirectory.
	res, err := s.Install(ctx, r.dir, Options{Ref: r.mainBranch.Short(), Subdir: "labs/other"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Meta.Source != r.dir || res.Meta.Subdir != "labs/other" || res.Lab.Metadata.Name != "other" ||
		!strings.Contains(res.Meta.Origin(), r.dir+"//labs/other@") {
		t.Errorf("subdir install: %+v", res.Meta)
	}

	for _, tc := range []struct {
		o    Options
		want string
	}{
		{Options{Ref: "nope"}, `no branch, tag or commit "nope"`},
		{Options{Ref: "v1", Subdir: "labs/other"}, "has no directory labs/other"},
		{Options{Subdir: "labs"}, "has no lab.yaml in labs: name the lab's directory with --subdir"},
		{Options{Subdir: "../x"}, "not a directory inside the repository"},
	} {
		before := tree(t, s.Dir())
		if _, err := s.Install(ctx, url, tc.o); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.o, err, tc.want)
		}
		if tree(t, s.Dir()) != before {
			t.Errorf("%+v: the labs directory changed", tc.o)
		}
	}
}

// A bare repository (no lab.yaml to find at its top) is a git source
// without --ref, installed at its HEAD; a clone of it through a file URL
// needs no git program.
func TestInstallFromBareRepository(t *testing.T) {
	r := newLabRepo(t)
	bare := filepath.Join(t.TempDir(), "labs.git")
	if _, err := git.PlainClone(bare, true, &git.CloneOptions{URL: r.dir}); err != nil {
		t.Fatal(err)
	}
	if kind, err := Kind(bare, ""); err != nil || kind != KindGit {
		t.Fatalf("Kind(bare) = %q, %v", kind, err)
	}
	t.Setenv("PATH", t.TempDir()) // no git program
	s := New(filepath.Join(t.TempDir(), "labs"))
	res, err := s.Install(context.Background(), bare, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Meta.Commit != r.v2.String() || installedVersion(t, s, "small") != "2" {
		t.Errorf("bare install: %+v", res.Meta)
	}
}

// A repository that holds a lab file with problems is refused, naming the
// lab file by the commit it came from.
func TestInstallFromGitRefusesABrokenLab(t *testing.T) {
	r := newLabRepo(t)
	writeFile(t, filepath.Join(r.dir, LabFile), "apiVersion: labctl.dev/v1alpha1\nkind: Lab\nmetadata: {name: small}\nsteps: []\nbogus: 1\n")
	h := r.commit(t, "broken")
	if err := r.repo.Storer.SetReference(plumbing.NewHashReference("refs/heads/broken", h)); err != nil {
		t.Fatal(err)
	}
	s := New(filepath.Join(t.TempDir(), "labs"))
	_, err := s.Install(context.Background(), "file://"+r.dir, Options{Ref: "broken"})
	want := "file://" + r.dir + "@" + h.String()[:12] + ":lab.yaml:5:1"
	if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "nothing was installed") {
		t.Errorf("broken lab: %v, want %q", err, want)
	}
	if entries, _ := os.ReadDir(s.Dir()); len(entries) != 1 {
		t.Errorf("the labs directory holds %d entries, want the lock alone", len(entries))
	}
}

// bombTree stores a tree that holds levels of width directories each, the
// same tree at every level, over one tiny file: width^levels files from a
// few objects (a "git bomb").
func bombTree(t *testing.T, repo *git.Repository, width, levels int) plumbing.Hash {
	t.Helper()
	st := repo.Storer
	obj := st.NewEncodedObject()
	obj.SetType(plumbing.BlobObject)
	w, err := obj.Writer()
	if err != nil {
		t.Fatal(err)
	}
	w.Write([]byte("x"))
	w.Close()
	h, err := st.SetEncodedObject(obj)
	if err != nil {
		t.Fatal(err)
	}
	mode := filemode.Regular
	for range levels {
		tr := &object.Tree{}
		for i := range width {
			tr.Entries = append(tr.Entries, object.TreeEntry{Name: fmt.Sprintf("e%d", i), Mode: mode, Hash: h})
		}
		o := st.NewEncodedObject()
		if err := tr.Encode(o); err != nil {
			t.Fatal(err)
		}
		if h, err = st.SetEncodedObject(o); err != nil {
			t.Fatal(err)
		}
		mode = filemode.Dir
	}
	return h
}

// commitWith commits the tree of head with the entry name (a tree) added
// at its top, or in its directory in, and returns the new commit.
func (r *labRepo) commitWith(t *testing.T, in, name string, h plumbing.Hash) plumbing.Hash {
	return r.commitEntry(t, in, name, filemode.Dir, h)
}

// commitEntry is commitWith for an entry of any mode.
func (r *labRepo) commitEntry(t *testing.T, in, name string, mode filemode.FileMode, h plumbing.Hash) plumbing.Hash {
	t.Helper()
	head, err := r.repo.CommitObject(r.v2)
	if err != nil {
		t.Fatal(err)
	}
	root, err := head.Tree()
	if err != nil {
		t.Fatal(err)
	}
	put := func(tr *object.Tree, name string, mode filemode.FileMode, h plumbing.Hash) plumbing.Hash {
		n := &object.Tree{Entries: slices.Clone(tr.Entries)}
		n.Entries = append(n.Entries, object.TreeEntry{Name: name, Mode: mode, Hash: h})
		slices.SortFunc(n.Entries, func(a, b object.TreeEntry) int { return strings.Compare(a.Name, b.Name) })
		o := r.repo.Storer.NewEncodedObject()
		if err := n.Encode(o); err != nil {
			t.Fatal(err)
		}
		nh, err := r.repo.Storer.SetEncodedObject(o)
		if err != nil {
			t.Fatal(err)
		}
		return nh
	}
	top := h
	if in != "" {
		sub, err := root.Tree(in)
		if err != nil {
			t.Fatal(err)
		}
		top = put(sub, name, mode, h)
		name, mode = in, filemode.Dir
		root = &object.Tree{Entries: slices.DeleteFunc(slices.Clone(root.Entries), func(e object.TreeEntry) bool { return e.Name == in })}
	}
	rootHash := put(root, name, mode, top)
	c := &object.Commit{Author: *r.signature, Committer: *r.signature, Message: "bomb", TreeHash: rootHash, ParentHashes: []plumbing.Hash{r.v2}}
	o := r.repo.Storer.NewEncodedObject()
	if err := c.Encode(o); err != nil {
		t.Fatal(err)
	}
	ch, err := r.repo.Storer.SetEncodedObject(o)
	if err != nil {
		t.Fatal(err)
	}
	return ch
}

// A repository whose tree holds ten million tiny files from a few objects
// is installed without writing them: what is not the lab's is never
// written, and what is the lab's is bounded as a lab read from disk is.
func TestInstallFromGitWritesABoundedLab(t *testing.T) {
	r := newLabRepo(t)
	bomb := bombTree(t, r.repo, 10, 7)
	outside := r.commitWith(t, "", "junk", bomb)
	inside := r.commitWith(t, "fixtures", "bomb", bomb)
	s := New(filepath.Join(t.TempDir(), "labs"))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if _, err := s.Install(ctx, "file://"+r.dir, Options{Ref: outside.String(), Force: true}); err != nil {
		t.Errorf("a lab beside ten million files in its repository: %v", err)
	}
	_, err := s.Install(ctx, "file://"+r.dir, Options{Ref: inside.String(), Force: true})
	if err == nil || !strings.Contains(err.Error(), "more than 10000 files") {
		t.Errorf("a lab whose fixtures hold ten million files: %v, want the files' bound", err)
	}
	if ctx.Err() != nil {
		t.Errorf("the installs took a minute: %v", ctx.Err())
	}
}

// A committed link or submodule among the lab's files is refused, as a
// link in a lab's directory is, not left out in silence.
func TestInstallFromGitRefusesLinksAndSubmodules(t *testing.T) {
	r := newLabRepo(t)
	o := r.repo.Storer.NewEncodedObject()
	o.SetType(plumbing.BlobObject)
	w, err := o.Writer()
	if err != nil {
		t.Fatal(err)
	}
	w.Write([]byte("../../../.ssh/id_ed25519"))
	w.Close()
	target, err := r.repo.Storer.SetEncodedObject(o)
	if err != nil {
		t.Fatal(err)
	}
	s := New(filepath.Join(t.TempDir(), "labs"))
	for _, tc := range []struct {
		what string
		c    plumbing.Hash
		want string
	}{
		{"a link in fixtures/", r.commitEntry(t, "fixtures", "key", filemode.Symlink, target), "fixtures/key in the lab"},
		{"a submodule in fixtures/", r.commitEntry(t, "fixtures", "sub", filemode.Submodule, r.v1), "fixtures/sub in the lab"},
	} {
		_, err := s.Install(context.Background(), "file://"+r.dir, Options{Ref: tc.c.String(), Force: true})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want it refused", tc.what, err)
		}
	}
}
