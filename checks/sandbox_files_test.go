package checks

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/labctl/labctl/lab"
)

// dirFS is a SandboxFS over a directory of this machine standing in for
// the sandbox's /, that notes every path it is asked about.
type dirFS struct {
	root  string
	asked []string
	read  []string
}

func (d *dirFS) Lstat(ctx context.Context, p string) (SandboxStat, error) {
	d.asked = append(d.asked, p)
	return rootFS(d.root).Lstat(ctx, p)
}

func (d *dirFS) ReadFile(_ context.Context, p string, limit int64) ([]byte, error) {
	d.read = append(d.read, p)
	fi, err := os.Lstat(filepath.Join(d.root, p))
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, ErrChanged
	}
	if fi.Size() > limit {
		return nil, ErrTooLarge
	}
	return os.ReadFile(filepath.Join(d.root, p))
}

// sandboxDir is a sandbox's / with /etc/app.conf, /opt/course/1/answer, an
// empty /proc and /root, and /tmp.
func sandboxDir(t *testing.T) *dirFS {
	t.Helper()
	root := t.TempDir()
	for _, d := range []string{"etc", "opt/course/1", "proc/1/root/etc", "tmp", "root", "dev"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write := func(p, s string) {
		if err := os.WriteFile(filepath.Join(root, p), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("etc/app.conf", "listen 8080\n")
	write("opt/course/1/answer", "42\n")
	write("proc/1/root/etc/shadow", "root:secret\n")
	return &dirFS{root: root}
}

func (d *dirFS) link(t *testing.T, target, p string) {
	t.Helper()
	if err := os.Symlink(target, filepath.Join(d.root, p)); err != nil {
		t.Fatal(err)
	}
}

// askedInside reports whether d was asked about anything in dir.
func (d *dirFS) askedInside(dir string) bool {
	for _, p := range append(append([]string{}, d.asked...), d.read...) {
		if isInside(p, dir) {
			return true
		}
	}
	return false
}

func TestReadSandboxFile(t *testing.T) {
	d := sandboxDir(t)
	d.link(t, "../etc/app.conf", "tmp/rel")
	d.link(t, "/etc", "tmp/etc")
	got := ReadSandbox(context.Background(), d, "/etc/app.conf")
	if got.State != SandboxFound || string(got.Data) != "listen 8080\n" || got.Resolved != "/etc/app.conf" {
		t.Fatalf("got %+v", got)
	}
	for _, p := range []string{"/tmp/rel", "/tmp/etc/app.conf", "/tmp/etc/../etc/./app.conf"} {
		if got := ReadSandbox(context.Background(), d, p); got.State != SandboxFound || got.Resolved != "/etc/app.conf" {
			t.Errorf("%s: got %+v, want /etc/app.conf found", p, got)
		}
	}
	for _, p := range []string{"/etc/missing", "/etc/app.conf/below", "/nowhere/at/all"} {
		if got := ReadSandbox(context.Background(), d, p); got.State != SandboxMissing {
			t.Errorf("%s: got %+v, want missing", p, got)
		}
	}
	if got := ReadSandbox(context.Background(), d, "/opt/course/1"); got.State != SandboxFound || !fs.FileMode(got.Mode).IsDir() || got.Data != nil {
		t.Errorf("a directory: got %+v", got)
	}
}

// The attacks of a learner who is root in the sandbox on a check of a path
// outside /root: each is refused, and nothing in /proc, /sys or /dev is
// ever asked for.
func TestReadSandboxAttacks(t *testing.T) {
	d := sandboxDir(t)
	d.link(t, "/proc/1/root/etc/shadow", "tmp/evil")
	d.link(t, "/proc/self", "tmp/self")
	d.link(t, "../../../../proc/1/root", "tmp/up")
	d.link(t, "/dev/zero", "tmp/zero")
	d.link(t, "/tmp/loop", "tmp/loop")
	big := filepath.Join(d.root, "tmp/big")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(10 << 30); err != nil { // sparse: 10 GiB long
		t.Fatal(err)
	}
	f.Close()
	if err := syscall.Mkfifo(filepath.Join(d.root, "tmp/fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, path, state, resolved string }{
		{"a link out of the sandbox, into a process's root", "/tmp/evil", SandboxOutside, "/proc/1/root/etc/shadow"},
		{"a linked parent into /proc", "/tmp/self/environ", SandboxOutside, "/proc/self/environ"},
		{"a relative link that climbs", "/tmp/up/etc/shadow", SandboxOutside, "/proc/1/root/etc/shadow"},
		{"a path through /proc", "/proc/1/environ", SandboxOutside, "/proc/1/environ"},
		{"a link to a device", "/tmp/zero", SandboxOutside, "/dev/zero"},
		{"/sys itself", "/sys", SandboxOutside, "/sys"},
		{"a huge file", "/tmp/big", SandboxTooLarge, "/tmp/big"},
		{"a link to itself", "/tmp/loop", SandboxError, "/tmp/loop"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d.asked, d.read = nil, nil
			got := ReadSandbox(context.Background(), d, tc.path)
			if got.State != tc.state || got.Resolved != tc.resolved || got.Data != nil {
				t.Fatalf("got %+v, want %s at %s", got, tc.state, tc.resolved)
			}
			for _, dir := range forbiddenAreas {
				if d.askedInside(dir) {
					t.Errorf("asked about %v %v inside %s", d.asked, d.read, dir)
				}
			}
			if len(d.read) > 0 {
				t.Errorf("read %v", d.read)
			}
		})
	}
	t.Run("a FIFO is described, never read", func(t *testing.T) {
		d.asked, d.read = nil, nil
		got := ReadSandbox(context.Background(), d, "/tmp/fifo")
		if got.State != SandboxFound || fs.FileMode(got.Mode)&fs.ModeNamedPipe == 0 || len(d.read) > 0 {
			t.Fatalf("got %+v, read %v", got, d.read)
		}
	})
}

// A file that grows past the bound between its description and its read
// is too large, not cut short.
func TestReadSandboxGrows(t *testing.T) {
	got := ReadSandbox(context.Background(), growingFS{}, "/tmp/log")
	if got.State != SandboxTooLarge || got.Data != nil {
		t.Fatalf("got %+v", got)
	}
}

type growingFS struct{}

func (growingFS) Lstat(_ context.Context, p string) (SandboxStat, error) {
	if p == "/tmp" {
		return SandboxStat{Mode: fs.ModeDir | 0o755}, nil
	}
	return SandboxStat{Mode: 0o644, Size: 10}, nil
}

func (growingFS) ReadFile(context.Context, string, int64) ([]byte, error) { return nil, ErrTooLarge }

// A file check of a sandbox path judges what the host read, and a path
// the host found leading into /proc or too large never passes.
func TestFileCheckOfSandboxPath(t *testing.T) {
	d := sandboxDir(t)
	d.link(t, "/proc/1/root/etc/shadow", "tmp/evil")
	if err := syscall.Mkfifo(filepath.Join(d.root, "tmp/fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(d.root, "tmp/big")
	if err := os.WriteFile(big, []byte(strings.Repeat("x", maxFileSize+1)), 0o644); err != nil {
		t.Fatal(err)
	}
	// The checker's own / holds a different /etc/app.conf: the check
	// must judge the sandbox's.
	grader := t.TempDir()
	if err := os.MkdirAll(filepath.Join(grader, "etc"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(grader, "etc/app.conf"), []byte("listen 9090\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := Env{Root: grader, Sandbox: map[string]*SandboxFile{}}
	for _, p := range []string{"/etc/app.conf", "/etc/missing", "/tmp/evil", "/tmp/fifo", "/tmp/big", "/opt/course/1", "/opt/course/1/answer"} {
		sf := ReadSandbox(context.Background(), d, p)
		env.Sandbox[p] = &sf
	}
	no := false
	for _, tc := range []struct {
		name string
		fc   lab.FileCheck
		want Status
		says string
	}{
		{"content as the sandbox has it", lab.FileCheck{Path: "/etc/app.conf", Contains: []string{"listen 8080"}}, Pass, ""},
		{"content the sandbox lacks", lab.FileCheck{Path: "/etc/app.conf", Contains: []string{"listen 9090"}}, Fail, "listen 9090"},
		{"a regular file", lab.FileCheck{Path: "/etc/app.conf", Type: "file"}, Pass, ""},
		{"a directory", lab.FileCheck{Path: "/opt/course/1", Type: "dir"}, Pass, ""},
		{"missing", lab.FileCheck{Path: "/etc/missing"}, Fail, "to exist"},
		{"absent as required", lab.FileCheck{Path: "/etc/missing", Exists: &no}, Pass, ""},
		{"a link into /proc", lab.FileCheck{Path: "/tmp/evil", Contains: []string{"root"}}, Fail, "leads outside"},
		{"a link into /proc, absence asked", lab.FileCheck{Path: "/tmp/evil", Exists: &no}, Fail, "leads outside"},
		{"a FIFO", lab.FileCheck{Path: "/tmp/fifo", Contains: []string{"x"}}, Fail, "FIFO"},
		{"a huge file", lab.FileCheck{Path: "/tmp/big", Contains: []string{"x"}}, Fail, "larger than"},
		{"a reference to a sandbox file", lab.FileCheck{Path: "/opt/course/1/answer", Equals: &lab.Value{Ref: "file:/opt/course/1/answer"}}, Pass, ""},
		{"a reference to another sandbox file", lab.FileCheck{Path: "/etc/app.conf", Equals: &lab.Value{Ref: "file:/opt/course/1/answer"}}, Fail, "42"},
		{"a reference through a link into /proc", lab.FileCheck{Path: "/etc/app.conf", Equals: &lab.Value{Ref: "file:/tmp/evil"}}, Fail, "leads outside"},
		{"a reference to a FIFO", lab.FileCheck{Path: "/etc/app.conf", Equals: &lab.Value{Ref: "file:/tmp/fifo"}}, Fail, "FIFO"},
		{"a path the host did not read", lab.FileCheck{Path: "/etc/other", Contains: []string{"x"}}, Fail, "to exist"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := lab.Check{Name: "c", File: &tc.fc}
			r := Run(context.Background(), env, []lab.Check{c})[0]
			if r.Status != tc.want || !strings.Contains(r.Message, tc.says) {
				t.Fatalf("got %s %q, want %s saying %q", r.Status, r.Message, tc.want, tc.says)
			}
		})
	}
}
