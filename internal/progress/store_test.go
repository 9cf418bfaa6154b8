package progress

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func sample() *Progress {
	at := time.Date(2026, 11, 30, 6, 0, 0, 0, time.UTC)
	return &Progress{
		SchemaVersion: SchemaVersion,
		Lab:           "gitops-drift",
		Digest:        "sha256:aa",
		Current:       "commit",
		Passed:        map[string]time.Time{"init": at, "layout": at.Add(time.Minute)},
		Attempts:      map[string]int{"init": 2, "layout": 1, "commit": 3},
		Grades:        []Grade{{Time: at.Add(time.Hour), Score: 4, MaxScore: 10, Digest: "sha256:aa"}},
		UpdatedAt:     at.Add(2 * time.Hour),
	}
}

func TestRoundTrip(t *testing.T) {
	s := NewStore(filepath.Join(t.TempDir(), "state", "gitops-drift"))
	want := sample()
	if err := s.Save(want); err != nil {
		t.Fatal(err)
	}
	got, err := s.Load("gitops-drift")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("round trip:\n got %+v\nwant %+v", got, want)
	}
	fi, err := os.Stat(s.Path())
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", fi.Mode().Perm())
	}
	entries, _ := os.ReadDir(s.Dir())
	if len(entries) != 1 {
		t.Errorf("directory holds %d entries after a save, want only %s", len(entries), FileName)
	}

	// A second save replaces the first.
	want.Current = "apply"
	if err := s.Save(want); err != nil {
		t.Fatal(err)
	}
	got, err = s.Load("gitops-drift")
	if err != nil || got.Current != "apply" {
		t.Errorf("after second save: current %q, err %v; want apply", got.Current, err)
	}
}

func TestLoadMissingIsFresh(t *testing.T) {
	s := NewStore(filepath.Join(t.TempDir(), "nothing-here"))
	p, err := s.Load("lab1")
	if err != nil {
		t.Fatal(err)
	}
	if p.Lab != "lab1" || p.Current != "" || len(p.Passed) != 0 || p.SchemaVersion != SchemaVersion {
		t.Errorf("fresh progress = %+v", p)
	}
	if _, err := os.Stat(s.Dir()); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Load must not create the state directory (stat: %v)", err)
	}
}

func TestLoadCorrupt(t *testing.T) {
	tests := map[string]string{
		"truncated":      `{"schemaVersion": 1, "lab": "lab1", "curr`,
		"not json":       "\x00\x01garbage",
		"empty":          "",
		"no version":     `{"lab": "lab1"}`,
		"future version": `{"schemaVersion": 99, "lab": "lab1"}`,
		"other lab":      `{"schemaVersion": 1, "lab": "lab2"}`,
		"wrong type":     `{"schemaVersion": 1, "lab": "lab1", "attempts": {"a": "x"}}`,
		"negative":       `{"schemaVersion": 1, "lab": "lab1", "attempts": {"a": -1}}`,
	}
	for name, content := range tests {
		t.Run(name, func(t *testing.T) {
			s := NewStore(t.TempDir())
			if err := os.WriteFile(s.Path(), []byte(content), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := s.Load("lab1")
			var ce *CorruptError
			if !errors.As(err, &ce) {
				t.Fatalf("Load = %v, want a *CorruptError", err)
			}
			msg := err.Error()
			for _, want := range []string{s.Path(), "labctl reset", "delete"} {
				if !strings.Contains(msg, want) {
					t.Errorf("message %q does not mention %q", msg, want)
				}
			}
			b, _ := os.ReadFile(s.Path())
			if string(b) != content {
				t.Errorf("the corrupt file was changed to %q", b)
			}
		})
	}
	// The valid file is not reported.
	s := NewStore(t.TempDir())
	os.WriteFile(s.Path(), []byte(`{"schemaVersion": 1, "lab": "lab1"}`), 0o600)
	if _, err := s.Load("lab1"); err != nil {
		t.Errorf("a minimal valid file: %v", err)
	}
}

// TestCrashBeforeRenameKeepsOldFile fails the final rename, as a crash
// between writing the new file and renaming it would: the old progress
// stays whole and readable.
func TestCrashBeforeRenameKeepsOldFile(t *testing.T) {
	s := NewStore(t.TempDir())
	old := sample()
	if err := s.Save(old); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(s.Path())

	next := sample()
	next.Current = "apply"
	b := []byte(`{"schemaVersion": 1, "lab": "gitops-drift", "current": "apply"}`)
	crash := errors.New("crash")
	err := writeAtomic(s.Dir(), FileName, b, func(tmp, final string) error {
		written, rerr := os.ReadFile(tmp)
		if rerr != nil || string(written) != string(b) {
			t.Errorf("the temporary file holds %q (%v) before the rename, want the new content", written, rerr)
		}
		if filepath.Dir(tmp) != filepath.Dir(final) {
			t.Errorf("temporary file %s is not in the same directory as %s", tmp, final)
		}
		return crash
	})
	if !errors.Is(err, crash) {
		t.Fatalf("writeAtomic = %v, want the crash", err)
	}
	after, _ := os.ReadFile(s.Path())
	if string(after) != string(before) {
		t.Errorf("the old file changed:\n%s", after)
	}
	got, err := s.Load("gitops-drift")
	if err != nil || got.Current != old.Current {
		t.Errorf("Load after the crash = %+v, %v; want the old progress", got, err)
	}
}

// TestProcessKilledBeforeRename kills a real process after it has written
// and synced the temporary file but before the rename: the old file is
// intact, and the leftover temporary file does not disturb later saves.
func TestProcessKilledBeforeRename(t *testing.T) {
	if dir := os.Getenv("PROGRESS_CRASH_DIR"); dir != "" {
		writeAtomic(dir, FileName, []byte(`{"schemaVersion":1,"lab":"gitops-drift","current":"NEW"}`), func(string, string) error {
			os.Exit(3)
			return nil
		})
		os.Exit(0)
	}
	s := NewStore(t.TempDir())
	if err := s.Save(sample()); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestProcessKilledBeforeRename$")
	cmd.Env = append(os.Environ(), "PROGRESS_CRASH_DIR="+s.Dir())
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 3 {
		t.Fatalf("the child did not die before the rename: %v\n%s", err, out)
	}
	got, err := s.Load("gitops-drift")
	if err != nil {
		t.Fatal(err)
	}
	if got.Current != "commit" {
		t.Errorf("current = %q after the crash, want the old %q", got.Current, "commit")
	}
	entries, _ := os.ReadDir(s.Dir())
	if len(entries) != 2 {
		t.Errorf("want the old file and one leftover temporary file, found %d entries", len(entries))
	}
	next := sample()
	next.Current = "apply"
	if err := s.Save(next); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.Load("gitops-drift"); got.Current != "apply" {
		t.Errorf("save after a crash: current %q, want apply", got.Current)
	}
}
