package web

import (
	"errors"
	"fmt"
	"html"
	"os"
	"path/filepath"
)

// An Opener is a file only its owner can read that leads a browser to an
// address with a secret in it. labctl ui gives the browser the file's
// file:// URL: a process's arguments are readable by every local user
// (/proc/PID/cmdline), a file of mode 0600 in a directory of mode 0700 is
// not.
type Opener struct {
	// Path is the file's absolute path; URL is its file:// URL.
	Path, URL string
	dir       string
}

// openerName is the file's name inside its own directory.
const openerName = "open.html"

// NewOpener writes an opener of address into a new directory of mode 0700
// under base (made, mode 0700, when missing). Remove deletes it.
func NewOpener(base, address string) (*Opener, error) {
	if !filepath.IsAbs(base) {
		return nil, fmt.Errorf("the directory of the browser's file, %q, is not an absolute path", base)
	}
	if err := os.MkdirAll(base, 0o700); err != nil {
		return nil, fmt.Errorf("making the directory of the browser's file: %w", err)
	}
	dir, err := os.MkdirTemp(base, "ui-")
	if err != nil {
		return nil, fmt.Errorf("making the directory of the browser's file: %w", err)
	}
	o := &Opener{Path: filepath.Join(dir, openerName), dir: dir}
	o.URL = "file://" + filepath.ToSlash(o.Path)
	if err := writeOpener(o.Path, address); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return o, nil
}

// writeOpener writes the page that leads to address: a refresh without a
// referrer, and a link for a browser that does not follow it.
func writeOpener(path, address string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("writing the browser's file: %w", err)
	}
	a := html.EscapeString(address)
	_, err = fmt.Fprintf(f, `<!doctype html>
<html><head><meta charset="utf-8"><meta name="referrer" content="no-referrer">
<meta http-equiv="refresh" content="0;url=%s">
<title>labctl ui</title></head>
<body><p>Opening the lab's page: <a href="%s" rel="noreferrer">follow this link</a> if nothing happens.</p></body></html>
`, a, a)
	return errors.Join(err, f.Close())
}

// Remove deletes the file and its directory.
func (o *Opener) Remove() error {
	if o == nil || o.dir == "" {
		return nil
	}
	return os.RemoveAll(o.dir)
}
