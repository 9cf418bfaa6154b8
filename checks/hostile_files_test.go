package checks

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/labctl/labctl/lab"
)

// hostileTimeout is the check timeout the hostile cases run under; each must
// end well before it, with a failure rather than a timeout.
const hostileTimeout = 2 * time.Second

// runHostile runs c with a 2 s timeout and requires it to return within
// 5 s, failed, with a message.
func runHostile(t *testing.T, env Env, c lab.Check) Result {
	t.Helper()
	c.Name = "hostile"
	c.Timeout = lab.Duration{Duration: hostileTimeout}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	start := time.Now()
	rs := Run(ctx, env, []lab.Check{c})
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("the check took %s, want under 5s", d)
	}
	r := rs[0]
	if r.Status != Fail || r.Message == "" {
		t.Fatalf("got %s %q, want a failure with a message", r.Status, r.Message)
	}
	return r
}

func contentCheck(p string) lab.Check {
	return lab.Check{File: &lab.FileCheck{Path: p, Contains: []string{"x"}}}
}

func TestHostileFilesFail(t *testing.T) {
	root := t.TempDir()
	home := filepath.Join(root, "root")
	if err := os.MkdirAll(home, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(home, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	sock, err := net.Listen("unix", filepath.Join(home, "sock"))
	if err != nil {
		t.Fatal(err)
	}
	defer sock.Close()
	sparse, err := os.Create(filepath.Join(home, "sparse"))
	if err != nil {
		t.Fatal(err)
	}
	if err := sparse.Truncate(10 << 30); err != nil {
		t.Fatal(err)
	}
	sparse.Close()
	writeFile(t, root, "/etc/shadow", "root:secret-hash:1", 0o600)
	writeFile(t, root, "/root/small", "x", 0o644)
	links := map[string]string{
		"shadow":  "/etc/shadow",
		"up":      "../../etc/shadow",
		"zero":    "/dev/zero",
		"stdin":   "/proc/self/fd/0",
		"tofifo":  "fifo",
		"dirlink": "/root",
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(home, name)); err != nil {
			t.Fatal(err)
		}
	}
	env := Env{Root: root}
	tests := []struct {
		name  string
		check lab.Check
		msg   string
	}{
		{"fifo", contentCheck("/root/fifo"), "/root/fifo is a named pipe (FIFO), not a regular file"},
		{"link to a fifo", contentCheck("/root/tofifo"), "/root/tofifo is a named pipe (FIFO), not a regular file"},
		{"fifo as a field", lab.Check{File: &lab.FileCheck{Path: "/root/fifo", Field: &lab.FieldAssert{Path: "a"}}}, "/root/fifo is a named pipe (FIFO), not a regular file"},
		{"socket", contentCheck("/root/sock"), "/root/sock is a socket, not a regular file"},
		{"directory", contentCheck("/root"), "/root is a directory, not a regular file"},
		{"link to a directory", contentCheck("/root/dirlink"), "/root/dirlink is a directory, not a regular file"},
		{"sparse 10 GiB", contentCheck("/root/sparse"), "/root/sparse is larger than 4 MiB, more than any check reads"},
		{"link out of the home", contentCheck("/root/shadow"), "/root/shadow leads outside the learner's files (to /etc/shadow)"},
		{"relative link out of the home", contentCheck("/root/up"), "/root/up leads outside the learner's files (to /etc/shadow)"},
		{"existence outside is not told", lab.Check{File: &lab.FileCheck{Path: "/root/shadow"}}, "/root/shadow leads outside the learner's files (to /etc/shadow)"},
		{"absence outside is not told", lab.Check{File: &lab.FileCheck{Path: "/root/shadow", Exists: boolp(false)}}, "/root/shadow leads outside the learner's files (to /etc/shadow)"},
		{"link to /dev/zero", contentCheck("/root/zero"), "/root/zero leads outside the learner's files (to /dev/zero)"},
		{"file reference to a fifo", lab.Check{File: &lab.FileCheck{Path: "/root/small", Equals: refv("file:/root/fifo")}}, "reference file:/root/fifo: /root/fifo is a named pipe (FIFO), not a regular file"},
		{"file reference outside", lab.Check{File: &lab.FileCheck{Path: "/root/small", Equals: refv("file:/root/shadow")}}, "reference file:/root/shadow: /root/shadow leads outside the learner's files (to /etc/shadow)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runHostile(t, env, tt.check)
			if r.Message != tt.msg {
				t.Errorf("message %q\nwant %q", r.Message, tt.msg)
			}
			if strings.Contains(r.Message, "secret-hash") {
				t.Errorf("the message shows the content of a file outside the learner's files: %q", r.Message)
			}
		})
	}
}

// TestHostileLinksOnTheRealRoot resolves links as the grader does, with the
// root at "/": the checker's own stdin, /dev/zero and /etc/shadow are never
// read.
func TestHostileLinksOnTheRealRoot(t *testing.T) {
	home := t.TempDir()
	for name, target := range map[string]string{"stdin": "/proc/self/fd/0", "zero": "/dev/zero", "shadow": "/etc/shadow"} {
		if err := os.Symlink(target, filepath.Join(home, name)); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"stdin", "zero", "shadow"} {
		t.Run(name, func(t *testing.T) {
			p := filepath.Join(home, name)
			r := runHostile(t, Env{Root: "/"}, contentCheck(p))
			if !strings.HasPrefix(r.Message, p+" leads outside the learner's files (to /") {
				t.Errorf("message %q, want it to say %s leads outside the learner's files", r.Message, p)
			}
		})
	}
}

// TestLearnerAreas: a link from the home into another area the checker was
// told of is the learner's; without that area it leads outside.
func TestLearnerAreas(t *testing.T) {
	root := t.TempDir()
	writeFile(t, root, "/opt/lab/fixtures/app.yaml", "kind: x\n", 0o644)
	if err := os.MkdirAll(filepath.Join(root, "root"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/opt/lab/fixtures/app.yaml", filepath.Join(root, "root/app.yaml")); err != nil {
		t.Fatal(err)
	}
	c := lab.Check{File: &lab.FileCheck{Path: "/root/app.yaml", Contains: []string{"kind"}}}
	expect(t, runCheck(t, Env{Root: root, Areas: []string{"/root", "/opt/lab/fixtures"}}, c), Pass, "")
	expect(t, runCheck(t, Env{Root: root}, c), Fail, "/root/app.yaml leads outside the learner's files (to /opt/lab/fixtures/app.yaml)")
	expect(t, runCheck(t, Env{Root: root, Areas: []string{"/opt/lab/fixtures", "/"}}, c), Pass, "")
	// "/" as an area does not open /proc, /sys or /dev.
	if err := os.Symlink("/proc/self/fd/0", filepath.Join(root, "root/stdin")); err != nil {
		t.Fatal(err)
	}
	expect(t, runCheck(t, Env{Root: root, Areas: []string{"/"}}, contentCheck("/root/stdin")), Fail,
		"/root/stdin leads outside the learner's files (to /proc/self/fd/0)")
}

// TestOpenRegularRefusesASwappedPath: a path whose last component became a
// link after it was resolved is not followed.
func TestOpenRegularRefusesASwappedPath(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "/real", "x", 0o644)
	if err := os.Symlink("real", filepath.Join(dir, "swapped")); err != nil {
		t.Fatal(err)
	}
	_, err := openRegular(filepath.Join(dir, "swapped"), "/root/swapped", maxFileSize)
	if s, msg := outcome(err); s != Fail || msg != "/root/swapped is a symbolic link, not a regular file" {
		t.Errorf("got %s %q, want a failure naming the link", s, msg)
	}
}
