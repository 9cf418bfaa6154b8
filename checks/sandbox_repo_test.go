package checks

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/labctl/labctl/lab"
)

// ReadTree archives the directory p as the engine does: entries named
// below p's base name, links as links, at most limit bytes.
func (d *dirFS) ReadTree(_ context.Context, p string, limit int64) ([]byte, error) {
	d.read = append(d.read, p)
	top := filepath.Join(d.root, p)
	if fi, err := os.Lstat(top); err != nil {
		return nil, err
	} else if !fi.IsDir() {
		return nil, ErrChanged
	}
	out := &boundedBuffer{limit: limit}
	tw := tar.NewWriter(out)
	err := filepath.WalkDir(top, func(host string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(top, host)
		fi, err := e.Info()
		if err != nil {
			return err
		}
		link := ""
		if fi.Mode()&fs.ModeSymlink != 0 {
			if link, err = os.Readlink(host); err != nil {
				return err
			}
		}
		h, err := tar.FileInfoHeader(fi, link)
		if err != nil {
			return err
		}
		h.Name = path.Join(path.Base(p), filepath.ToSlash(rel))
		if fi.IsDir() {
			h.Name += "/"
		}
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		if fi.Mode().IsRegular() {
			f, err := os.Open(host)
			if err != nil {
				return err
			}
			defer f.Close()
			_, err = io.Copy(tw, f)
			return err
		}
		return nil
	})
	if err == nil {
		err = tw.Close()
	}
	if err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// boundedBuffer is a buffer that refuses to grow past limit.
type boundedBuffer struct {
	bytes.Buffer
	limit int64
}

func (b *boundedBuffer) Write(p []byte) (int, error) {
	if int64(b.Len()+len(p)) > b.limit {
		return 0, ErrTooLarge
	}
	return b.Buffer.Write(p)
}

func (growingFS) ReadTree(context.Context, string, int64) ([]byte, error) { return nil, ErrTooLarge }

// sandboxRepo moves a repository hostileRepo made under the sandbox's
// /root to /srv/<name>, where the grader does not see it.
func sandboxRepo(t *testing.T, d *dirFS, name string) string {
	t.Helper()
	must(t, os.MkdirAll(filepath.Join(d.root, "srv"), 0o755))
	dir := filepath.Join(d.root, "srv", name)
	must(t, os.Rename(hostileRepo(t, d.root, name), dir))
	return dir
}

// runSandboxRepo runs c, a git check of the sandbox path p, with the
// repository the host read there, as the grader would.
func runSandboxRepo(t *testing.T, d *dirFS, p string, c lab.Check) Result {
	t.Helper()
	sf := ReadSandboxRepo(context.Background(), d, p)
	// The request crosses to the checker as JSON.
	req := roundTrip(t, Request{Checks: []lab.Check{c}, Repos: []SandboxFile{sf}})
	env, err := req.env()
	must(t, err)
	env.Root = t.TempDir() // the grader's mounts: no /srv there
	c = req.Checks[0]
	c.Name, c.Timeout = "repo", lab.Duration{Duration: hostileTimeout}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	defer env.RemoveCopies()
	return Run(ctx, env, []lab.Check{c})[0]
}

// roundTrip is req as the checker decodes it.
func roundTrip(t *testing.T, req Request) Request {
	t.Helper()
	b, err := json.Marshal(req)
	must(t, err)
	var back Request
	must(t, json.Unmarshal(b, &back))
	return back
}

// A git check of a repository outside the grader's mounts judges the
// sandbox's repository, read from the host's side, as it would judge one
// under /root; the checker's copy is gone after the check.
func TestGitCheckOfSandboxRepo(t *testing.T) {
	d := sandboxDir(t)
	dir := sandboxRepo(t, d, "app")
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	for kind, c := range gitChecks("/srv/app") {
		if r := runSandboxRepo(t, d, "/srv/app", c); r.Status != Pass {
			t.Errorf("%s check: %s %q, want a pass", kind, r.Status, r.Message)
		}
	}
	d.link(t, "/srv/app", "tmp/app")
	if r := runSandboxRepo(t, d, "/tmp/app", gitChecks("/tmp/app")["commits"]); r.Status != Pass {
		t.Errorf("through a link within the sandbox: %s %q", r.Status, r.Message)
	}
	must(t, os.WriteFile(filepath.Join(dir, "app.yaml"), []byte("replicas: 4\n"), 0o644))
	expect(t, runSandboxRepo(t, d, "/srv/app", gitChecks("/srv/app")["clean"]), Fail,
		"expected a clean work tree in /srv/app, found 1 change(s):  M app.yaml")
	if r := runSandboxRepo(t, d, "/srv/none", gitChecks("/srv/none")["commits"]); r.Status != Fail || !strings.Contains(r.Message, "expected a git repository at /srv/none") {
		t.Errorf("no repository: %s %q", r.Status, r.Message)
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("the checker left %d copies of repositories in its temporary directory", len(left))
	}
}

// Every hostile repository under /root is as hostile outside the grader's
// mounts: each check fails with the same message (or, for a huge object
// store, says the repository is too large to read).
func TestHostileSandboxRepositoriesFail(t *testing.T) {
	d := sandboxDir(t)
	other := sandboxRepo(t, d, "other")
	for i, tc := range hostileCases(other) {
		t.Run(tc.name, func(t *testing.T) {
			name := "repo" + string(rune('a'+i))
			dir := sandboxRepo(t, d, name)
			tc.setup(t, dir)
			want := tc.message
			if tc.sandbox != "" {
				want = tc.sandbox
			}
			for kind, c := range gitChecks("/srv/" + name) {
				if tc.only != nil && !contains(tc.only, kind) {
					continue
				}
				r := runSandboxRepo(t, d, "/srv/"+name, c)
				if r.Status != Fail || !strings.Contains(r.Message, want) {
					t.Errorf("%s check: %s %q, want a failure holding %q", kind, r.Status, r.Message, want)
				}
			}
		})
	}
}

// A repository path whose parent is a link the learner made out of the
// sandbox's file system, or a loop of links, never reads anything there.
func TestSandboxRepoLinksOut(t *testing.T) {
	d := sandboxDir(t)
	must(t, os.MkdirAll(filepath.Join(d.root, "proc/1/root/srv/app/.git"), 0o755))
	d.link(t, "/proc/1/root", "tmp/self")
	d.link(t, "/tmp/loop2", "tmp/loop1")
	d.link(t, "/tmp/loop1", "tmp/loop2")
	d.link(t, "/dev", "tmp/devices")
	for p, want := range map[string]string{
		"/tmp/self/srv/app":  "/tmp/self/srv/app leads outside the learner's files (to /proc/1/root/srv/app)",
		"/tmp/devices":       "/tmp/devices leads outside the learner's files (to /dev)",
		"/tmp/loop1":         "too many levels of symbolic links",
		"/tmp/loop1/srv/app": "too many levels of symbolic links",
	} {
		r := runSandboxRepo(t, d, p, gitChecks(p)["commits"])
		if r.Status == Pass || !strings.Contains(r.Message, want) {
			t.Errorf("%s: %s %q, want it refused saying %q", p, r.Status, r.Message, want)
		}
	}
	for _, p := range d.asked {
		if strings.HasPrefix(p, "/proc") || strings.HasPrefix(p, "/dev") {
			t.Errorf("the host looked at %s", p)
		}
	}
	for _, p := range d.read {
		if !strings.HasPrefix(p, "/srv/") {
			t.Errorf("the host read %s", p)
		}
	}
}

// An archive that is not what the engine writes (an entry outside the
// repository's directory, or below a link it holds) is refused and
// nothing is written outside the checker's directory.
func TestUnpackTreeRefusesEscapes(t *testing.T) {
	archive := func(hs ...tar.Header) []byte {
		var b bytes.Buffer
		tw := tar.NewWriter(&b)
		for _, h := range hs {
			body := ""
			if h.Typeflag == tar.TypeReg {
				body = "pwned"
				h.Size = int64(len(body))
			}
			must(t, tw.WriteHeader(&h))
			_, err := tw.Write([]byte(body))
			must(t, err)
		}
		must(t, tw.Close())
		return b.Bytes()
	}
	top := tar.Header{Typeflag: tar.TypeDir, Name: "app/", Mode: 0o755}
	outside := t.TempDir()
	for name, data := range map[string][]byte{
		"climbing out":        archive(top, tar.Header{Typeflag: tar.TypeReg, Name: "app/../../x", Mode: 0o644}),
		"absolute":            archive(top, tar.Header{Typeflag: tar.TypeReg, Name: filepath.Join(outside, "x"), Mode: 0o644}),
		"another directory":   archive(top, tar.Header{Typeflag: tar.TypeReg, Name: "other/x", Mode: 0o644}),
		"below a link":        archive(top, tar.Header{Typeflag: tar.TypeSymlink, Name: "app/l", Linkname: outside}, tar.Header{Typeflag: tar.TypeReg, Name: "app/l/x", Mode: 0o644}),
		"over a link":         archive(top, tar.Header{Typeflag: tar.TypeSymlink, Name: "app/l", Linkname: filepath.Join(outside, "x")}, tar.Header{Typeflag: tar.TypeReg, Name: "app/l", Mode: 0o644}),
		"a hard link outside": archive(top, tar.Header{Typeflag: tar.TypeLink, Name: "app/h", Linkname: "/etc/passwd"}),
	} {
		dir := t.TempDir()
		if err := unpackTree(data, dir, "app"); err == nil {
			t.Errorf("%s: unpacked", name)
		}
		if _, err := os.Lstat(filepath.Join(outside, "x")); err == nil {
			t.Fatalf("%s: wrote outside the checker's directory", name)
		}
	}
}

// The checker serves a round of several checks of one repository the host
// read: each judges it, and no copy is left in the checker's /tmp after.
func TestServeSandboxRepoRound(t *testing.T) {
	d := sandboxDir(t)
	sandboxRepo(t, d, "app")
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	var cs []lab.Check
	for _, kind := range []string{"commits", "message", "field", "clean", "config"} {
		c := gitChecks("/srv/app")[kind]
		c.Name = kind
		cs = append(cs, c)
	}
	req, err := json.Marshal(Request{Root: t.TempDir(), Checks: cs, Repos: []SandboxFile{ReadSandboxRepo(context.Background(), d, "/srv/app")}})
	must(t, err)
	var out bytes.Buffer
	must(t, Serve(context.Background(), bytes.NewReader(req), &out))
	var resp Response
	must(t, json.Unmarshal(out.Bytes(), &resp))
	for _, r := range resp.Results {
		if r.Status != Pass {
			t.Errorf("%s: %s %q, want a pass", r.Name, r.Status, r.Message)
		}
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("the checker left %d copies of repositories in its temporary directory", len(left))
	}
}
