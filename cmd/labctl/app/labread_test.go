package app

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/labctl/labctl/usecase/importer"
)

// userKey is what a user's private key holds in these tests.
const userKey = "-----BEGIN OPENSSH PRIVATE KEY----- not for any lab"

// linkedClone is a lab directory as a cloned repository leaves it: the
// class lab's lab.yaml, and fixtures a committed link to the user's ~/.ssh.
// It returns the clone and that .ssh directory.
func linkedClone(t *testing.T) (clone string) {
	t.Helper()
	home := t.TempDir()
	ssh := filepath.Join(home, ".ssh")
	if err := os.MkdirAll(ssh, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ssh, "id_ed25519"), []byte(userKey), 0o600); err != nil {
		t.Fatal(err)
	}
	clone = filepath.Join(home, "src", "lab")
	if err := os.MkdirAll(clone, 0o755); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(classSteps)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(clone, "lab.yaml"), raw, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../../.ssh", filepath.Join(clone, "fixtures")); err != nil {
		t.Fatal(err)
	}
	return clone
}

// holdsKey says whether any file under the directories holds the key.
func holdsKey(t *testing.T, dirs ...string) string {
	t.Helper()
	for _, d := range dirs {
		var found string
		filepath.WalkDir(d, func(p string, e fs.DirEntry, err error) error {
			if err == nil && e.Type().IsRegular() {
				if b, err := os.ReadFile(p); err == nil && bytes.Contains(b, []byte(userKey)) {
					found = p
				}
			}
			return nil
		})
		if found != "" {
			return found
		}
	}
	return ""
}

// A directory lab whose fixtures are a link to the user's ~/.ssh is
// refused by up, test and class up before anything is created, whether it
// is named with --lab or picked as ./lab.yaml, and the key reaches no copy.
func TestDirectoryLabWithLinkedFixturesIsRefused(t *testing.T) {
	clone := linkedClone(t)
	for _, tc := range []struct {
		name string
		dir  string // the working directory
		args []string
	}{
		{"up --lab DIR", "", []string{"--lab", clone, "up"}},
		{"up in the clone", clone, []string{"up"}},
		{"test --lab DIR", "", []string{"--lab", clone, "test"}},
		{"ui --watch --lab FILE", "", []string{"--lab", clone + "/lab.yaml", "ui", "--no-browser", "--watch"}},
		{"class up --lab DIR", "", []string{"--lab", clone, "class", "up", "--learners", "2"}},
		{"class up in the clone", clone, []string{"class", "up", "--learners", "2"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			isolate(t)
			tmp := t.TempDir()
			t.Setenv("TMPDIR", tmp) // where a temporary copy would go
			if tc.dir != "" {
				t.Chdir(tc.dir)
			}
			env := &fakeEnv{class: &fakeClass{}}
			code, out, errOut := runFake(t, env, tc.args...)
			want{code: 2, noCalls: true, errOut: []string{
				"fixtures in the lab", "is a symbolic link to ../../.ssh", "labs may not contain links", "replace it with the files",
			}}.check(t, env, tc.args, code, out, errOut)
			if env.fixtures != nil {
				if b, _ := fs.ReadFile(env.fixtures, "id_ed25519"); bytes.Contains(b, []byte(userKey)) {
					t.Errorf("the user's key is among the fixtures given to Up, for the sandbox's /opt/lab/fixtures")
				}
			}
			if env.fixtures != nil || len(env.class.calls) > 0 || env.class.cfg.Lab != nil {
				t.Errorf("something was created: fixtures %v, class calls %q", env.fixtures, env.class.calls)
			}
			if strings.Contains(out+errOut, userKey) {
				t.Errorf("the key was shown:\n%s%s", out, errOut)
			}
			if p := holdsKey(t, os.Getenv("LABCTL_STATE_DIR"), os.Getenv("LABCTL_LABS_DIR"), os.Getenv("XDG_CONFIG_HOME"), tmp); p != "" {
				t.Errorf("the key was copied to %s", p)
			}
		})
	}

	// The same lab with its fixtures as files comes up, and Up gets them:
	// the refusal above is of the link, and Up is where a copy would go.
	t.Run("fixtures as files", func(t *testing.T) {
		isolate(t)
		os.Remove(filepath.Join(clone, "fixtures"))
		if err := os.MkdirAll(filepath.Join(clone, "fixtures"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(clone, "fixtures", "notes.txt"), []byte("a fixture"), 0o644); err != nil {
			t.Fatal(err)
		}
		env := &fakeEnv{}
		code, out, errOut := runFake(t, env, "--lab", clone, "up")
		if code != 0 || env.fixtures == nil {
			t.Fatalf("up: exit %d, fixtures %v\n%s%s", code, env.fixtures, out, errOut)
		}
		if b, err := fs.ReadFile(env.fixtures, "notes.txt"); err != nil || string(b) != "a fixture" {
			t.Errorf("Up's fixtures: %q, %v", b, err)
		}
	})
}

// An interrupt ends `labctl import` whatever its import is doing: here a
// read that never returns.
func TestImportEndsOnInterrupt(t *testing.T) {
	isolate(t)
	block := make(chan struct{})
	defer close(block)
	stuck := func(src, out string, _ importer.Options) (*importer.Result, error) {
		<-block
		return nil, errors.New("unblocked")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	var errOut bytes.Buffer
	g := &globals{streams: Streams{In: strings.NewReader(""), Out: io.Discard, Err: &errOut}}
	done := make(chan error, 1)
	go func() {
		done <- runImport(ctx, g, stuck, t.TempDir(), filepath.Join(t.TempDir(), "out"), importer.Options{})
	}()
	select {
	case err := <-done:
		var exit *ExitError
		if !errors.As(err, &exit) || exit.Code != exitInterrupted || !strings.Contains(err.Error(), "import was interrupted") {
			t.Errorf("got %v, want an interrupted import (exit %d)", err, exitInterrupted)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("labctl import does not end on an interrupt")
	}
}
