package labstore

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/labctl/labctl/lab"
)

func TestDir(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	for _, tc := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"LABCTL_LABS_DIR": "/srv/labs", "XDG_DATA_HOME": "/x", "HOME": "/h"}, "/srv/labs"},
		{map[string]string{"XDG_DATA_HOME": "/x", "HOME": "/h"}, "/x/labctl/labs"},
		{map[string]string{"XDG_DATA_HOME": "relative", "HOME": "/h"}, "/h/.local/share/labctl/labs"},
		{map[string]string{"HOME": "/h"}, "/h/.local/share/labctl/labs"},
	} {
		if got, err := Dir(env(tc.env)); err != nil || got != tc.want {
			t.Errorf("Dir(%v) = %q, %v; want %q", tc.env, got, err, tc.want)
		}
	}
}

func TestInstallFromDirectory(t *testing.T) {
	src := t.TempDir()
	writeLab(t, src, "small", "1")
	s := New(filepath.Join(t.TempDir(), "labs"))
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	res, err := s.Install(context.Background(), src, Options{Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(s.Dir(), "small")
	if res.Dir != dir || res.Unchanged || res.Previous != nil || res.Lab.Metadata.Name != "small" {
		t.Errorf("result %+v", res)
	}
	// lab.yaml, README.md, fixtures/ and the image's build directory; not
	// the author's notes nor a directory no image builds from.
	if got := modes(t, dir); !slices.Equal(got, installedFiles) {
		t.Errorf("installed files:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(installedFiles, "\n"))
	}
	m, err := readMeta(dir)
	if err != nil {
		t.Fatal(err)
	}
	if m.Kind != KindDir || m.Source != src || m.Name != "small" || !strings.HasPrefix(m.Digest, "sha256:") ||
		!m.InstalledAt.Equal(now) || m.Origin() != src {
		t.Errorf("install record %+v", m)
	}
	// The installed lab loads from its new place, build directory and all.
	if _, err := lab.Load(filepath.Join(dir, LabFile)); err != nil {
		t.Errorf("the installed lab does not load: %v", err)
	}

	if got, err := s.Resolve("small"); err != nil || got != dir {
		t.Errorf("Resolve(small) = %q, %v", got, err)
	}
	for _, name := range []string{"other", "../labs", ".staging-x", ""} {
		if _, err := s.Resolve(name); !errors.Is(err, ErrNotInstalled) {
			t.Errorf("Resolve(%q) = %v, want ErrNotInstalled", name, err)
		}
	}
	labs, err := s.List()
	if err != nil || len(labs) != 1 || labs[0].Name != "small" || labs[0].Lab == nil || labs[0].Meta == nil ||
		labs[0].Meta.Digest != m.Digest {
		t.Errorf("List = %+v, %v", labs, err)
	}
	if names := s.Names(); !slices.Equal(names, []string{"small"}) {
		t.Errorf("Names = %v", names)
	}

	// The same lab again, from its lab file this time: nothing changes.
	before := tree(t, s.Dir())
	res, err = s.Install(context.Background(), filepath.Join(src, LabFile), Options{})
	if err != nil || !res.Unchanged || res.Meta.Digest != m.Digest {
		t.Fatalf("second install: %+v, %v", res, err)
	}
	if after := tree(t, s.Dir()); after != before {
		t.Errorf("a second install of the same lab changed the labs directory:\n%s\nthen:\n%s", before, after)
	}
}

func TestListWithoutLabsDirectory(t *testing.T) {
	s := New(filepath.Join(t.TempDir(), "none"))
	if labs, err := s.List(); err != nil || len(labs) != 0 {
		t.Errorf("List = %v, %v", labs, err)
	}
}

// An install that is refused leaves the labs directory exactly as it was.
func TestRefusedInstallsChangeNothing(t *testing.T) {
	s, src := storeWith(t)
	other := newLab(t, "small", "2")
	broken := newLab(t, "broken", "1")
	writeFile(t, filepath.Join(broken, "lab.yaml"), "apiVersion: labctl.dev/v1alpha1\nkind: Lab\nmetadata: {name: broken}\nsteps: []\nbogus: 1\n")
	noBuild := newLab(t, "nobuild", "1")
	if err := os.RemoveAll(filepath.Join(noBuild, "images")); err != nil {
		t.Fatal(err)
	}
	builtIn := newLab(t, BuiltIn, "1")
	empty := t.TempDir()

	before := tree(t, s.Dir())
	for _, tc := range []struct {
		name, source string
		o            Options
		want         []string
	}{
		{"other files under an installed name", other, Options{}, []string{"another lab named small is installed (from " + src + ")", "--force"}},
		{"a lab that does not load", broken, Options{}, []string{"does not load", filepath.Join(broken, LabFile) + ":5:1", "bogus"}},
		{"a build directory that is missing", noBuild, Options{}, []string{"images/web does not exist in the lab", "create it"}},
		{"the built-in lab's name", builtIn, Options{}, []string{"built into labctl", "rename the lab"}},
		{"a directory that holds no lab", empty, Options{}, []string{"holds no lab.yaml and is no git repository"}},
		{"a path that does not exist", filepath.Join(empty, "none"), Options{}, []string{"does not exist"}},
		{"--ref with a lab file", filepath.Join(src, LabFile), Options{Ref: "v1"}, []string{"--ref goes with a git repository"}},
		{"--subdir with a directory", src, Options{Subdir: "x"}, []string{"--subdir goes with a git repository"}},
	} {
		_, err := s.Install(context.Background(), tc.source, tc.o)
		if err == nil {
			t.Errorf("%s: installed", tc.name)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error lacks %q:\n%v", tc.name, w, err)
			}
		}
		if after := tree(t, s.Dir()); after != before {
			t.Errorf("%s: the labs directory changed:\n%s\nthen:\n%s", tc.name, before, after)
		}
	}
	var exists *ExistsError
	if _, err := s.Install(context.Background(), other, Options{}); !errors.As(err, &exists) {
		t.Errorf("other files: %v, want an *ExistsError", err)
	}
}

func TestForceReplaces(t *testing.T) {
	s, src := storeWith(t)
	other := newLab(t, "small", "2")
	if err := os.Remove(filepath.Join(other, "README.md")); err != nil {
		t.Fatal(err)
	}
	res, err := s.Install(context.Background(), other, Options{Force: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Previous == nil || res.Previous.Source != src || res.Unchanged || res.Meta.Source != other {
		t.Errorf("result %+v", res)
	}
	dir := filepath.Join(s.Dir(), "small")
	l, err := lab.Load(filepath.Join(dir, LabFile))
	if err != nil || l.Metadata.Version != "2" {
		t.Fatalf("installed lab: %v, %v", l, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "README.md")); err == nil {
		t.Error("the old lab's README.md survived the replacement")
	}
	// Nothing else is left in the labs directory: no staging, no old copy.
	entries, _ := os.ReadDir(s.Dir())
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if !slices.Equal(names, []string{".lock", "small"}) {
		t.Errorf("labs directory holds %v", names)
	}
}

// What an install killed half-way left is removed by the next one, and
// never listed.
func TestStaleStagingIsIgnoredAndRemoved(t *testing.T) {
	s := New(filepath.Join(t.TempDir(), "labs"))
	stale := filepath.Join(s.Dir(), stagingPrefix+"123", "lab")
	writeLab(t, stale, "stale", "1")
	if labs, _ := s.List(); len(labs) != 0 {
		t.Errorf("List shows a staging directory: %+v", labs)
	}
	src := t.TempDir()
	writeLab(t, src, "small", "1")
	if _, err := s.Install(context.Background(), src, Options{}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Dir(stale)); !os.IsNotExist(err) {
		t.Errorf("the stale staging directory is still there (%v)", err)
	}
}

// An interrupted install (its context cancelled) leaves nothing.
func TestCancelledInstallLeavesNothing(t *testing.T) {
	src := t.TempDir()
	writeLab(t, src, "small", "1")
	s := New(filepath.Join(t.TempDir(), "labs"))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.Install(ctx, src, Options{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("install with a cancelled context: %v", err)
	}
	entries, _ := os.ReadDir(s.Dir())
	for _, e := range entries {
		if e.Name() != ".lock" {
			t.Errorf("left behind: %s", e.Name())
		}
	}
}

func TestKind(t *testing.T) {
	dir := t.TempDir()
	writeLab(t, dir, "small", "1")
	bundleFile := filepath.Join(t.TempDir(), "small.labctl.tar")
	writeFile(t, bundleFile, "x")
	for _, tc := range []struct {
		source, ref, want string
	}{
		{dir, "", KindDir},
		{filepath.Join(dir, LabFile), "", KindDir},
		{dir, "main", KindGit},
		{bundleFile, "", KindBundle},
		{"https://example.com/labs.git", "", KindGit},
		{"git@example.com:labs.git", "", KindGit},
		{"file:///srv/labs.git", "v1", KindGit},
	} {
		if got, err := Kind(tc.source, tc.ref); err != nil || got != tc.want {
			t.Errorf("Kind(%q, %q) = %q, %v; want %q", tc.source, tc.ref, got, err, tc.want)
		}
	}
}
