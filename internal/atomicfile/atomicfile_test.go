package atomicfile

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

func TestWriteFileReplaces(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f.json")
	for _, content := range []string{"old\n", "new\n"} {
		if err := WriteFile(path, []byte(content), 0o640); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(path)
		if err != nil || string(b) != content {
			t.Errorf("read %q, %v; want %q", b, err, content)
		}
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o640 {
		t.Errorf("mode %v, want 0640", st.Mode())
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Errorf("%d entries, want the file alone (no temporary leftovers)", len(entries))
	}
}

func TestWriteLeavesTheFileWhenFillFails(t *testing.T) {
	path := filepath.Join(t.TempDir(), "report.xml")
	if err := WriteFile(path, []byte("whole"), 0o644); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	err := Write(path, 0o644, func(w io.Writer) error {
		io.WriteString(w, "half")
		return boom
	})
	if !errors.Is(err, boom) {
		t.Errorf("Write = %v, want fill's error", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "whole" {
		t.Errorf("the file holds %q after a failed write", b)
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Errorf("%d entries after a failed write, want no temporary leftovers", len(entries))
	}
}

func TestCreateRefusesAnExistingFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "root.tar")
	fill := func(w io.Writer) error { _, err := io.WriteString(w, "tar"); return err }
	if err := Create(path, 0o600, fill); err != nil {
		t.Fatal(err)
	}
	if err := Create(path, 0o600, fill); !errors.Is(err, fs.ErrExist) {
		t.Errorf("second Create = %v, want fs.ErrExist", err)
	}
	// A file that appears while fill runs is not replaced either.
	late := filepath.Join(filepath.Dir(path), "late.tar")
	err := Create(late, 0o600, func(w io.Writer) error {
		return os.WriteFile(late, []byte("other"), 0o600)
	})
	if !errors.Is(err, fs.ErrExist) {
		t.Errorf("Create over a file made meanwhile = %v, want fs.ErrExist", err)
	}
	if b, _ := os.ReadFile(late); string(b) != "other" {
		t.Errorf("the other file was replaced: %q", b)
	}
}

// TestCrashBeforeRenameKeepsOldFile fails the final rename, as a crash
// between writing the new file and renaming it would: the old file stays
// whole.
func TestCrashBeforeRenameKeepsOldFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "progress.json")
	before := []byte(`{"current": "commit"}`)
	if err := WriteFile(path, before, 0o600); err != nil {
		t.Fatal(err)
	}
	next := []byte(`{"current": "apply"}`)
	crash := errors.New("crash")
	err := write(path, 0o600, func(w io.Writer) error { _, err := w.Write(next); return err }, func(tmp, final string) error {
		written, rerr := os.ReadFile(tmp)
		if rerr != nil || string(written) != string(next) {
			t.Errorf("the temporary file holds %q (%v) before the rename, want the new content", written, rerr)
		}
		if filepath.Dir(tmp) != filepath.Dir(final) {
			t.Errorf("temporary file %s is not in the same directory as %s", tmp, final)
		}
		return crash
	})
	if !errors.Is(err, crash) {
		t.Fatalf("write = %v, want the crash", err)
	}
	if after, _ := os.ReadFile(path); string(after) != string(before) {
		t.Errorf("the old file changed:\n%s", after)
	}
}

// TestProcessKilledBeforeRename kills a real process after it has written
// and synced the temporary file but before the rename: the old file is
// intact, and the leftover temporary file does not disturb later writes.
func TestProcessKilledBeforeRename(t *testing.T) {
	if path := os.Getenv("ATOMICFILE_CRASH_PATH"); path != "" {
		write(path, 0o600, func(w io.Writer) error { _, err := io.WriteString(w, "NEW"); return err }, func(string, string) error {
			os.Exit(3)
			return nil
		})
		os.Exit(0)
	}
	path := filepath.Join(t.TempDir(), "progress.json")
	if err := WriteFile(path, []byte("OLD"), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestProcessKilledBeforeRename$")
	cmd.Env = append(os.Environ(), "ATOMICFILE_CRASH_PATH="+path)
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 3 {
		t.Fatalf("the child did not die before the rename: %v\n%s", err, out)
	}
	if b, _ := os.ReadFile(path); string(b) != "OLD" {
		t.Errorf("the file holds %q after the crash, want the old content", b)
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 2 {
		t.Errorf("want the old file and one leftover temporary file, found %d entries", len(entries))
	}
	if err := WriteFile(path, []byte("NEXT"), 0o600); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != "NEXT" {
		t.Errorf("write after a crash: the file holds %q", b)
	}
}
