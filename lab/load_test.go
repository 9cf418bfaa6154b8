package lab

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func TestLoadValidTestdata(t *testing.T) {
	files, err := filepath.Glob("testdata/valid_*.yaml")
	if err != nil || len(files) < 2 {
		t.Fatalf("want at least two testdata/valid_*.yaml, found %v (%v)", files, err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			l, err := Load(f)
			if err != nil {
				t.Fatalf("Load(%s):\n%v", f, err)
			}
			if len(l.Steps) == 0 || len(l.Steps[0].Checks) == 0 {
				t.Fatalf("Load(%s) returned a lab without steps or checks", f)
			}
			file, line, col, ok := l.Position("steps[0].checks[0]")
			if !ok || file != f || line < 1 || col < 1 {
				t.Errorf("Position(steps[0].checks[0]) = %s:%d:%d %v", file, line, col, ok)
			}
		})
	}
}

func TestLoadFullLab(t *testing.T) {
	l, err := Load("testdata/valid_full.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if l.Metadata.Language != "ja" || l.Sandbox.WorkDir != "/root/work" || len(l.Cluster.Namespaces) != 2 {
		t.Errorf("metadata/sandbox/cluster not as written: %+v %+v %+v", l.Metadata, l.Sandbox, l.Cluster)
	}
	s := l.Steps[0]
	if len(s.Checks) != 6 || len(s.Mistakes) != 1 || len(s.Hints) != 2 {
		t.Fatalf("step 0 has %d checks, %d mistakes, %d hints; want 6, 1, 2", len(s.Checks), len(s.Mistakes), len(s.Hints))
	}
	repo := s.Checks[0]
	if repo.Timeout.String() != "30s" || repo.Points != 2 || repo.Git.Message.Which != "any" || *repo.Git.Commits.Max != 5 {
		t.Errorf("repo-exists check = %+v", repo)
	}
	// The second check takes timeout and points from the first through a merge key.
	if notes := s.Checks[1]; notes.Timeout.String() != "30s" || notes.Points != 2 || !notes.Optional {
		t.Errorf("notes check = %+v", notes)
	}
	if ref := s.Checks[3].Kube.Field.Equals.Ref; ref != "git:/root/gitops/repo@HEAD:apps/web/deployment.yaml#spec.replicas" {
		t.Errorf("replicas ref = %q", ref)
	}
	if !l.Steps[1].PassesInitially || *l.Steps[1].Checks[0].File.Exists {
		t.Errorf("cleanup step = %+v", l.Steps[1])
	}
	if _, line, col, _ := l.Position("steps[0].checks[3].kube.labels[\"app.kubernetes.io/name\"]"); line != 83 || col != 37 {
		t.Errorf("label position = %d:%d, want 83:37", line, col)
	}
}

var wantRE = regexp.MustCompile(`# want: (.*)$`)

// TestLoadBrokenReportsEverything checks that every problem marked in
// testdata/broken.yaml is reported on its line, and nothing else.
func TestLoadBrokenReportsEverything(t *testing.T) {
	const file = "testdata/broken.yaml"
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	type want struct {
		line int
		text string
	}
	var wants []want
	for i, l := range strings.Split(string(data), "\n") {
		if m := wantRE.FindStringSubmatch(l); m != nil {
			wants = append(wants, want{i + 1, m[1]})
		}
	}
	if len(wants) < 6 {
		t.Fatalf("broken.yaml marks %d problems, want at least 6", len(wants))
	}
	_, err = Load(file)
	var errs Errors
	if !errors.As(err, &errs) {
		t.Fatalf("Load(%s) = %v, want lab.Errors", file, err)
	}
	found := make([]bool, len(errs))
	for _, w := range wants {
		ok := false
		for i, e := range errs {
			if e.File == file && e.Line == w.line && e.Column >= 1 && strings.Contains(e.Path+": "+e.Msg, w.text) {
				ok, found[i] = true, true
				break
			}
		}
		if !ok {
			t.Errorf("line %d: no problem containing %q", w.line, w.text)
		}
	}
	for i, e := range errs {
		if !found[i] {
			t.Errorf("unexpected problem: %v", e)
		}
	}
	for i := 1; i < len(errs); i++ {
		if errs[i].Line < errs[i-1].Line {
			t.Errorf("problems are not sorted by line: %v before %v", errs[i-1], errs[i])
		}
	}
}

func TestLoadMissingFile(t *testing.T) {
	_, err := Load(filepath.Join(t.TempDir(), "nope.yaml"))
	if err == nil || !errors.Is(err, os.ErrNotExist) || !strings.HasPrefix(err.Error(), "reading lab file: ") {
		t.Fatalf("Load(missing) = %v, want a wrapped not-exist error", err)
	}
}

func TestPositionFallsBackToParent(t *testing.T) {
	l, err := Load("testdata/valid_minimal.yaml")
	if err != nil {
		t.Fatal(err)
	}
	// timeout was not written, so its position is its check's.
	_, line, col, ok := l.Position("steps[0].checks[0].timeout")
	_, cline, ccol, _ := l.Position("steps[0].checks[0]")
	if !ok || line != cline || col != ccol || line != 11 {
		t.Errorf("Position(timeout) = %d:%d, want the check's %d:%d (line 11)", line, col, cline, ccol)
	}
}

func TestParentPath(t *testing.T) {
	for in, want := range map[string]string{
		"steps[0].checks[1].file.path": "steps[0].checks[1].file",
		"steps[0]":                     "steps",
		"steps":                        "",
		`kube.labels["a.b[c]"]`:        "kube.labels",
		`labels["x"].y`:                `labels["x"]`,
	} {
		if got := parentPath(in); got != want {
			t.Errorf("parentPath(%q) = %q, want %q", in, got, want)
		}
	}
}
