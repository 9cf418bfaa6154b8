package progress

import (
	"errors"
	"os"
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
