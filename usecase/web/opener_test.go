package web

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOpenerIsTheOwnersOnly writes the browser's file into a directory
// every user may write (as a shared or misconfigured runtime directory
// is): the file is 0600 in a new directory of 0700, leads to the address,
// and Remove takes both away.
func TestOpenerIsTheOwnersOnly(t *testing.T) {
	base := filepath.Join(t.TempDir(), "runtime")
	if err := os.Mkdir(base, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(base, 0o777); err != nil { // past the umask
		t.Fatal(err)
	}
	const addr = `http://127.0.0.1:1234/?token=abc&x="<y>`
	o, err := NewOpener(base, addr)
	if err != nil {
		t.Fatal(err)
	}
	if o.URL != "file://"+o.Path || filepath.Dir(filepath.Dir(o.Path)) != base {
		t.Errorf("the file is %s (%s), want a file:// URL of a file in a directory of its own under %s", o.Path, o.URL, base)
	}
	for path, want := range map[string]os.FileMode{o.Path: 0o600, filepath.Dir(o.Path): 0o700} {
		st, err := os.Lstat(path)
		if err != nil || st.Mode().Perm() != want {
			t.Errorf("%s: mode %v (%v), want %v", path, st.Mode().Perm(), err, want)
		}
	}
	b, err := os.ReadFile(o.Path)
	if err != nil {
		t.Fatal(err)
	}
	esc := `http://127.0.0.1:1234/?token=abc&amp;x=&#34;&lt;y&gt;`
	for _, want := range []string{`<meta http-equiv="refresh" content="0;url=` + esc + `">`, `<meta name="referrer" content="no-referrer">`, `href="` + esc + `"`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("the file has no %s:\n%s", want, b)
		}
	}
	if strings.Contains(string(b), `"<y>`) {
		t.Errorf("the address is not escaped:\n%s", b)
	}
	if err := o.Remove(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Dir(o.Path)); !os.IsNotExist(err) {
		t.Errorf("after Remove: %v", err)
	}
	if _, err := os.Stat(base); err != nil {
		t.Errorf("Remove took the base directory too: %v", err)
	}
	if _, err := NewOpener("relative", addr); err == nil {
		t.Error("an opener under a relative directory was written")
	}
}
