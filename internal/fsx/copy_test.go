package fsx

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"testing/fstest"
)

func mode(t *testing.T, path string) fs.FileMode {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return st.Mode().Perm()
}

func TestCopyTreeModes(t *testing.T) {
	fsys := fstest.MapFS{
		"gitops/app.yaml":    {Data: []byte("replicas: 2\n"), Mode: 0o444},
		"bin/run.sh":         {Data: []byte("#!/bin/sh\n"), Mode: 0o555},
		"bin/tool":           {Data: []byte("\x7fELF"), Mode: 0o500},
		"notes/shebang.txt":  {Data: []byte("#!not really\n"), Mode: 0o600},
		"usr/local/bin/init": {Data: []byte("x"), Mode: 0o644},
		"empty":              {Data: nil, Mode: 0o644},
	}
	tests := []struct {
		name string
		exec Executable
		want map[string]fs.FileMode
	}{
		{"exec bit", ExecBit, map[string]fs.FileMode{
			"gitops/app.yaml": 0o644, "bin/run.sh": 0o755, "bin/tool": 0o755, "notes/shebang.txt": 0o644, "empty": 0o644,
		}},
		{"script", Script, map[string]fs.FileMode{
			"gitops/app.yaml": 0o644, "bin/run.sh": 0o755, "bin/tool": 0o644, "notes/shebang.txt": 0o755, "empty": 0o644,
		}},
		{"by path", func(p string, _ fs.FileInfo, _ []byte) bool { return strings.HasPrefix(p, "usr/local/bin/") },
			map[string]fs.FileMode{"usr/local/bin/init": 0o755, "bin/run.sh": 0o644}},
	}
	old := syscall.Umask(0o077)
	defer syscall.Umask(old)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := CopyTree(fsys, dir, tt.exec); err != nil {
				t.Fatal(err)
			}
			for p, want := range tt.want {
				if got := mode(t, filepath.Join(dir, p)); got != want {
					t.Errorf("%s: mode %v, want %v", p, got, want)
				}
			}
			for p, f := range fsys {
				b, err := os.ReadFile(filepath.Join(dir, p))
				if err != nil || string(b) != string(f.Data) {
					t.Errorf("%s: content %q (%v), want %q", p, b, err, f.Data)
				}
			}
			if got := mode(t, filepath.Join(dir, "bin")); got != 0o755 {
				t.Errorf("directory mode %v under umask 077, want 0755", got)
			}
		})
	}
}

func TestCopyTreeReplacesAndSkipsLinks(t *testing.T) {
	src := t.TempDir()
	if err := os.WriteFile(filepath.Join(src, "a.sh"), []byte("#!/bin/sh\necho new\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/etc/passwd", filepath.Join(src, "link")); err != nil {
		t.Fatal(err)
	}
	dest := t.TempDir()
	if err := os.WriteFile(filepath.Join(dest, "a.sh"), []byte("old content that is longer\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := CopyTree(os.DirFS(src), dest, ExecBit); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(dest, "a.sh")); string(b) != "#!/bin/sh\necho new\n" {
		t.Errorf("replaced file holds %q", b)
	}
	if got := mode(t, filepath.Join(dest, "a.sh")); got != 0o755 {
		t.Errorf("replaced file mode %v, want 0755", got)
	}
	if _, err := os.Lstat(filepath.Join(dest, "link")); !os.IsNotExist(err) {
		t.Errorf("a symbolic link was copied: %v", err)
	}
}

// CreateTree, the one writer of a lab's tree into the store, writes new
// files only: with the modes CopyTree gives, and never replacing nor
// writing through what is there already (a link planted at a file's path).
func TestCreateTree(t *testing.T) {
	fsys := fstest.MapFS{
		"fixtures":            {Mode: fs.ModeDir | 0o700},
		"fixtures/run.sh":     {Data: []byte("#!/bin/sh\n"), Mode: 0o755},
		"fixtures/empty":      {Mode: fs.ModeDir | 0o755},
		"images/web/app.yaml": {Data: []byte("a: 1\n"), Mode: 0o600},
	}
	old := syscall.Umask(0o077)
	defer syscall.Umask(old)
	dir := filepath.Join(t.TempDir(), "lab")
	if err := CreateTree(fsys, dir, ExecBit); err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]fs.FileMode{"fixtures": 0o755, "fixtures/run.sh": 0o755, "fixtures/empty": 0o755,
		"images": 0o755, "images/web/app.yaml": 0o644} {
		if got := mode(t, filepath.Join(dir, p)); got != want {
			t.Errorf("%s: mode %v, want %v", p, got, want)
		}
	}
	if b, err := os.ReadFile(filepath.Join(dir, "fixtures/run.sh")); err != nil || string(b) != "#!/bin/sh\n" {
		t.Errorf("run.sh: %q, %v", b, err)
	}
	if err := CreateTree(fsys, dir, ExecBit); !errors.Is(err, fs.ErrExist) {
		t.Errorf("a second CreateTree into the same directory: %v, want it refused", err)
	}
	// A link where a file goes is not written through.
	dir = t.TempDir()
	outside := filepath.Join(t.TempDir(), "outside")
	if err := os.WriteFile(outside, []byte("kept"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "file")); err != nil {
		t.Fatal(err)
	}
	err := CreateTree(fstest.MapFS{"file": {Data: []byte("new")}}, dir, ExecBit)
	if b, _ := os.ReadFile(outside); err == nil || string(b) != "kept" {
		t.Errorf("CreateTree over a link: %v, the link's target holds %q", err, b)
	}
	if err := CreateFile(outside, 0o644, strings.NewReader("x")); !errors.Is(err, fs.ErrExist) {
		t.Errorf("CreateFile over a file: %v", err)
	}
}
