package fsx

import (
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
