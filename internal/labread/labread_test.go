package labread

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// newLab makes a lab directory with lab.yaml and fixtures/a.txt in a new
// temporary directory and returns the lab's directory.
func newLab(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "lab")
	mustWrite(t, filepath.Join(dir, "lab.yaml"), "name: x\n")
	mustWrite(t, filepath.Join(dir, "fixtures", "a.txt"), "fixture\n")
	return dir
}

func mustWrite(t *testing.T, p, s string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

// secret is a file outside the lab that no read may return.
func secret(t *testing.T) string {
	t.Helper()
	d := filepath.Join(t.TempDir(), "ssh")
	mustWrite(t, filepath.Join(d, "id_ed25519"), "PRIVATE KEY")
	return d
}

func linkError(t *testing.T, err error, wantPath string) *LinkError {
	t.Helper()
	var le *LinkError
	if !errors.As(err, &le) {
		t.Fatalf("got %v, want a *LinkError", err)
	}
	if le.Path != wantPath {
		t.Errorf("LinkError.Path = %q, want %q (%v)", le.Path, wantPath, err)
	}
	return le
}

func TestReadsALab(t *testing.T) {
	dir := newLab(t)
	mustWrite(t, filepath.Join(dir, "README.md"), "# x\n")
	mustWrite(t, filepath.Join(dir, "img", "Dockerfile"), "FROM scratch\n")
	if err := os.Chmod(filepath.Join(dir, "fixtures", "a.txt"), 0o755); err != nil {
		t.Fatal(err)
	}
	l, err := Read(filepath.Join(dir, "lab.yaml"), Options{Trees: func(src []byte) ([]string, error) {
		if string(src) != "name: x\n" {
			t.Errorf("Trees got %q", src)
		}
		return []string{"img"}, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range l.Files {
		got = append(got, f.Path)
	}
	if want := "README.md fixtures fixtures/a.txt img img/Dockerfile"; strings.Join(got, " ") != want {
		t.Errorf("files %q, want %q", strings.Join(got, " "), want)
	}
	b, err := fs.ReadFile(l.FS(Fixtures), "a.txt")
	if err != nil || string(b) != "fixture\n" {
		t.Errorf("fixtures FS: %q, %v", b, err)
	}
	out := filepath.Join(t.TempDir(), "copy")
	if err := l.Write(out, LabFile); err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(filepath.Join(out, "fixtures", "a.txt"))
	if err != nil || info.Mode().Perm() != 0o755 {
		t.Errorf("copied fixture: %v, %v", info, err)
	}
}

func TestRefusesAFixturesRootThatIsALink(t *testing.T) {
	dir := newLab(t)
	os.RemoveAll(filepath.Join(dir, "fixtures"))
	key := secret(t)
	if err := os.Symlink(key, filepath.Join(dir, "fixtures")); err != nil {
		t.Fatal(err)
	}
	l, err := Read(filepath.Join(dir, "lab.yaml"), Options{})
	le := linkError(t, err, "fixtures")
	if le.Target != key || !strings.Contains(err.Error(), "fixtures in the lab "+dir+" is a symbolic link to "+key) ||
		!strings.Contains(err.Error(), "replace it with the files") {
		t.Errorf("message: %v", err)
	}
	if l != nil {
		t.Errorf("a lab came back: %+v", l)
	}
}

func TestRefusesALinkInsideTheFixtures(t *testing.T) {
	dir := newLab(t)
	key := secret(t)
	if err := os.Symlink(filepath.Join(key, "id_ed25519"), filepath.Join(dir, "fixtures", "key")); err != nil {
		t.Fatal(err)
	}
	_, err := Read(filepath.Join(dir, "lab.yaml"), Options{})
	linkError(t, err, "fixtures/key")
}

func TestRefusesALabFileThatIsALink(t *testing.T) {
	dir := newLab(t)
	key := secret(t)
	os.Remove(filepath.Join(dir, "lab.yaml"))
	if err := os.Symlink(filepath.Join(key, "id_ed25519"), filepath.Join(dir, "lab.yaml")); err != nil {
		t.Fatal(err)
	}
	_, err := Read(filepath.Join(dir, "lab.yaml"), Options{})
	linkError(t, err, "lab.yaml")
	if _, err := ReadFile(filepath.Join(dir, "lab.yaml")); err == nil {
		t.Error("ReadFile read a lab file through a link")
	}
}

// A lab named by a path that goes through a link is refused: the path is
// walked without following links, relative or absolute.
func TestRefusesAPathThroughALink(t *testing.T) {
	real := newLab(t)
	repo := t.TempDir()
	if err := os.Symlink(filepath.Dir(real), filepath.Join(repo, "labs")); err != nil {
		t.Fatal(err)
	}
	_, err := Read(filepath.Join(repo, "labs", "lab", "lab.yaml"), Options{})
	le := linkError(t, err, filepath.Join(repo, "labs"))
	if !le.InPath || !strings.Contains(err.Error(), "on the path to the lab") {
		t.Errorf("message: %v", err)
	}
	t.Chdir(repo)
	_, err = Read("labs/lab/lab.yaml", Options{})
	linkError(t, err, "labs")
	// A path without links still reads, relative ones too.
	t.Chdir(filepath.Dir(real))
	if _, err := Read("lab/lab.yaml", Options{}); err != nil {
		t.Error(err)
	}
	if _, err := Read(filepath.Join(real, "lab.yaml"), Options{}); err != nil {
		t.Error(err)
	}
}

func TestRefusesAFIFOWithoutHanging(t *testing.T) {
	for _, where := range []string{"fixtures/pipe", "lab.yaml", "README.md"} {
		dir := newLab(t)
		os.Remove(filepath.Join(dir, where))
		if err := syscall.Mkfifo(filepath.Join(dir, where), 0o644); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() {
			_, err := Read(filepath.Join(dir, "lab.yaml"), Options{})
			done <- err
		}()
		select {
		case err := <-done:
			le := linkError(t, err, where)
			if le.Mode&fs.ModeNamedPipe == 0 || !strings.Contains(err.Error(), "is a FIFO") {
				t.Errorf("%s: %v", where, err)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("reading a lab with a FIFO at %s hangs", where)
		}
	}
}

func TestRefusesADevice(t *testing.T) {
	dir := newLab(t)
	p := filepath.Join(dir, "fixtures", "null")
	if err := syscall.Mknod(p, syscall.S_IFCHR|0o666, 1<<8|3); err != nil {
		// Without CAP_MKNOD: a link to one is refused as a link already.
		t.Skipf("cannot make a device here: %v", err)
	}
	_, err := Read(filepath.Join(dir, "lab.yaml"), Options{})
	le := linkError(t, err, "fixtures/null")
	if le.Mode&fs.ModeDevice == 0 || !strings.Contains(err.Error(), "is a device") {
		t.Errorf("%v", err)
	}
}

func TestRefusesTooManyBytes(t *testing.T) {
	dir := newLab(t)
	mustWrite(t, filepath.Join(dir, "fixtures", "big"), strings.Repeat("x", 2000))
	_, err := Read(filepath.Join(dir, "lab.yaml"), Options{MaxBytes: 1500})
	var le *LimitError
	if !errors.As(err, &le) || le.What != "bytes" || le.Path != "fixtures/big" {
		t.Fatalf("got %v, want the byte bound at fixtures/big", err)
	}
	if _, err := Read(filepath.Join(dir, "lab.yaml"), Options{MaxBytes: 3000}); err != nil {
		t.Errorf("within the bound: %v", err)
	}
}

func TestRefusesTooManyFiles(t *testing.T) {
	dir := newLab(t)
	for _, n := range []string{"b", "c", "d", "e"} {
		mustWrite(t, filepath.Join(dir, "fixtures", n), n)
	}
	_, err := Read(filepath.Join(dir, "lab.yaml"), Options{MaxFiles: 4})
	var le *LimitError
	if !errors.As(err, &le) || le.What != "files" {
		t.Fatalf("got %v, want the file bound", err)
	}
	if _, err := Read(filepath.Join(dir, "lab.yaml"), Options{MaxFiles: 6}); err != nil {
		t.Errorf("within the bound: %v", err)
	}
}

func TestRefusesHostToolFiles(t *testing.T) {
	for _, name := range []string{".envrc", "go.work", ".hg/hgrc", "sub/.GIT/config"} {
		dir := newLab(t)
		mustWrite(t, filepath.Join(dir, "fixtures", filepath.FromSlash(name)), "x")
		_, err := Read(filepath.Join(dir, "lab.yaml"), Options{})
		var he *HostToolFileError
		if !errors.As(err, &he) {
			t.Errorf("%s: got %v, want a *HostToolFileError", name, err)
		}
	}
}

// A build directory is read as fixtures are: a link above it or as it is
// refused, and it must be inside the lab.
func TestBuildTrees(t *testing.T) {
	dir := newLab(t)
	key := secret(t)
	if err := os.Symlink(key, filepath.Join(dir, "images")); err != nil {
		t.Fatal(err)
	}
	trees := func(dirs ...string) Options {
		return Options{Trees: func([]byte) ([]string, error) { return dirs, nil }}
	}
	_, err := Read(filepath.Join(dir, "lab.yaml"), trees("images/web"))
	linkError(t, err, "images")
	if _, err := Read(filepath.Join(dir, "lab.yaml"), trees("../x")); err == nil || !strings.Contains(err.Error(), "not inside") {
		t.Errorf("../x: %v", err)
	}
	if _, err := Read(filepath.Join(dir, "lab.yaml"), trees("missing")); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("missing: %v", err)
	}
}

// An absolute path that names a lab at or below the working directory, as
// the shell names it ($PWD, through a link the user's own directories
// hold) or as the system does, is read from the working directory: the
// links above it are the user's, not the lab's. One below the working
// directory is still refused.
func TestAbsolutePathBelowALinkedWorkingDirectory(t *testing.T) {
	top := t.TempDir()
	repo := filepath.Join(top, "real", "repo")
	mustWrite(t, filepath.Join(repo, "lab.yaml"), "name: x\n")
	mustWrite(t, filepath.Join(repo, "fixtures", "a.txt"), "fixture\n")
	if err := os.Symlink("real", filepath.Join(top, "link")); err != nil {
		t.Fatal(err)
	}
	logical := filepath.Join(top, "link", "repo")
	t.Chdir(logical)
	t.Setenv("PWD", logical)
	for _, file := range []string{
		filepath.Join(logical, "lab.yaml"),
		filepath.Join(logical, "fixtures", "..", "lab.yaml"),
		filepath.Join(top, "real", "repo", "lab.yaml"),
	} {
		l, err := Read(file, Options{})
		if err != nil {
			t.Errorf("Read(%s) from the directory %s: %v", file, logical, err)
			continue
		}
		if a, err := fs.ReadFile(l.FS(Fixtures), "a.txt"); string(l.Source) != "name: x\n" || string(a) != "fixture\n" {
			t.Errorf("Read(%s) read %q and fixture %q (%v)", file, l.Source, a, err)
		}
	}
	if _, err := ReadFile(filepath.Join(logical, "lab.yaml")); err != nil {
		t.Errorf("ReadFile through the working directory's link: %v", err)
	}
	// From above the link, the link is part of the path the lab's
	// directory names: refused.
	t.Chdir(top)
	t.Setenv("PWD", top)
	_, err := Read(filepath.Join(logical, "lab.yaml"), Options{})
	linkError(t, err, filepath.Join(top, "link"))
}

// A name of the lab's, or where its link points, is shown on one line
// with its control characters escaped: an entry named to print a line of
// its own ("labctl: ...") or steer the terminal cannot.
func TestErrorsShowNamesOnOneLine(t *testing.T) {
	dir := newLab(t)
	name := "n\nlabctl: the lab is fine\x1b[2J"
	if err := os.Symlink("/x\n\x1b[31mlabctl: OK", filepath.Join(dir, "fixtures", name)); err != nil {
		t.Fatal(err)
	}
	_, err := Read(filepath.Join(dir, "lab.yaml"), Options{})
	le := linkError(t, err, "fixtures/"+name)
	if msg := le.Error(); strings.ContainsAny(msg, "\n\x1b") {
		t.Errorf("the message holds a line feed or an escape: %q", msg)
	}
	dir = newLab(t)
	mustWrite(t, filepath.Join(dir, "fixtures", "a\n", ".GIT", "config"), "x")
	_, err = Read(filepath.Join(dir, "lab.yaml"), Options{})
	if err == nil {
		t.Fatal("a lab holding a host tool's file was read")
	}
	if strings.Contains(err.Error(), "\n") {
		t.Errorf("the message holds a line feed: %q", err)
	}
	dir = newLab(t)
	mustWrite(t, filepath.Join(dir, "fixtures", "b\n\x1bbig"), "0123456789")
	_, err = Read(filepath.Join(dir, "lab.yaml"), Options{MaxBytes: 4})
	if err == nil || strings.ContainsAny(err.Error(), "\n\x1b") {
		t.Errorf("the bound's message: %q", err)
	}
}

// A build directory the lab file names with a line feed is shown on one
// line in the reader's messages.
func TestMissingTreeShownOnOneLine(t *testing.T) {
	dir := newLab(t)
	for _, tree := range []string{"a\nlabctl: the lab is fine", "../a\nlabctl: the lab is fine"} {
		_, err := Read(filepath.Join(dir, "lab.yaml"), Options{Trees: func([]byte) ([]string, error) { return []string{tree}, nil }})
		if err == nil || strings.Contains(err.Error(), "\n") {
			t.Errorf("tree %q: %q", tree, err)
		}
	}
}

// A lab file past MaxLabFile is refused before it is parsed: a file of a
// few hundred MiB takes gigabytes of memory to parse.
func TestRefusesALargeLabFile(t *testing.T) {
	dir := newLab(t)
	mustWrite(t, filepath.Join(dir, "lab.yaml"), "name: \""+strings.Repeat("a", MaxLabFile)+"\"\n")
	_, err := Read(filepath.Join(dir, "lab.yaml"), Options{})
	var le *LimitError
	if !errors.As(err, &le) || le.What != "lab file" || !strings.Contains(err.Error(), "lab.yaml is larger than 16 MiB") {
		t.Errorf("Read: %v, want the lab file's bound", err)
	}
	if _, err := ReadFile(filepath.Join(dir, "lab.yaml")); !errors.As(err, &le) || le.What != "lab file" {
		t.Errorf("ReadFile: %v, want the lab file's bound", err)
	}
}
