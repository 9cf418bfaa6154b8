package labstore

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
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
