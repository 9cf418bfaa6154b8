// Package labstore owns the labs directory, where installed labs live (one
// directory per lab name, holding lab.yaml, fixtures/, README.md and the
// build directories of its images, and a record of where it came from),
// and the installs into it: from a lab's directory, from a git repository
// (read with go-git) and from a bundle file (internal/bundle), which it
// also packs. An install checks the lab before anything lands and lands
// it with one rename, so that no error or interrupt leaves a lab half
// installed.
package labstore

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"time"

	"github.com/labctl/labctl/lab"
)

// LabFile is the name of the lab file in an installed lab's directory.
const LabFile = "lab.yaml"

// metaFile is the install record in an installed lab's directory.
const metaFile = ".labctl-install.json"

// stagingPrefix starts the names of the directories an install works in,
// inside the labs directory; List and Resolve never see them.
const stagingPrefix = ".staging-"

// Dir returns the labs directory: $LABCTL_LABS_DIR when set, else
// $XDG_DATA_HOME/labctl/labs, else ~/.local/share/labctl/labs. getenv is
// os.Getenv outside tests.
func Dir(getenv func(string) string) (string, error) {
	if d := getenv("LABCTL_LABS_DIR"); d != "" {
		return filepath.Abs(d)
	}
	if d := getenv("XDG_DATA_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "labctl", "labs"), nil
	}
	home := getenv("HOME")
	if home == "" {
		h, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("finding the labs directory: %w (set LABCTL_LABS_DIR or XDG_DATA_HOME)", err)
		}
		home = h
	}
	return filepath.Join(home, ".local", "share", "labctl", "labs"), nil
}

// Store is one labs directory.
type Store struct {
	dir string
}

// New returns the store kept in dir; the directory is made by the first
// install.
func New(dir string) *Store { return &Store{dir: dir} }

// Dir is the labs directory.
func (s *Store) Dir() string { return s.dir }

// Source kinds, as the install record says.
const (
	KindDir    = "dir"
	KindGit    = "git"
	KindBundle = "bundle"
)

// Meta is an installed lab's record of where it came from.
type Meta struct {
	Name string `json:"name"`
	// Kind is dir, git or bundle.
	Kind string `json:"kind"`
	// Source is the directory, the git URL or the bundle file installed
	// from (local paths absolute).
	Source string `json:"source"`
	// Ref is the branch, tag or commit asked for, and Commit the commit it
	// named, for a git source.
	Ref    string `json:"ref,omitempty"`
	Commit string `json:"commit,omitempty"`
	// Subdir is the lab's directory in the git repository, when not its root.
	Subdir string `json:"subdir,omitempty"`
	// Digest identifies the installed files (see Digest).
	Digest string `json:"digest"`
	// Images are the images a bundle held.
	Images []string `json:"images,omitempty"`
	// HostAccess are the risks of the lab (lab.Risk.Key) the user
	// consented to with --allow-host-access.
	HostAccess  []string  `json:"hostAccess,omitempty"`
	InstalledAt time.Time `json:"installedAt"`
}

// Origin says where the lab came from in a few words: the directory, the
// git URL with its commit, or the bundle file.
func (m *Meta) Origin() string {
	switch m.Kind {
	case KindGit:
		c := m.Commit
		if len(c) > 12 {
			c = c[:12]
		}
		src := m.Source
		if m.Subdir != "" {
			src += "//" + m.Subdir
		}
		return src + "@" + c
	default:
		return m.Source
	}
}

// Installed is one lab in the labs directory.
type Installed struct {
	Name string
	// Dir is the lab's directory (it holds lab.yaml).
	Dir string
	// Lab is the lab loaded, or nil with Err when it does not load.
	Lab *lab.Lab
	Err error
	// Meta is the install record; nil when it is missing or unreadable.
	Meta *Meta
}

// List returns the installed labs, by name. A missing labs directory holds
// none.
func (s *Store) List() ([]Installed, error) {
	entries, err := os.ReadDir(s.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the labs directory: %w", err)
	}
	var labs []Installed
	for _, e := range entries {
		name := e.Name()
		if !e.IsDir() || !validName(name) {
			continue
		}
		dir := filepath.Join(s.dir, name)
		if _, err := os.Stat(filepath.Join(dir, LabFile)); err != nil {
			continue
		}
		in := Installed{Name: name, Dir: dir}
		in.Lab, in.Err = lab.Load(filepath.Join(dir, LabFile))
		in.Meta, _ = readMeta(dir)
		labs = append(labs, in)
	}
	sort.Slice(labs, func(i, j int) bool { return labs[i].Name < labs[j].Name })
	return labs, nil
}

// Names returns the names of the installed labs.
func (s *Store) Names() []string {
	entries, err := os.ReadDir(s.dir)
	if err != nil {
		return nil
	}
	var names []string
	for _, e := range entries {
		if e.IsDir() && validName(e.Name()) {
			if _, err := os.Stat(filepath.Join(s.dir, e.Name(), LabFile)); err == nil {
				names = append(names, e.Name())
			}
		}
	}
	sort.Strings(names)
	return names
}

// ErrNotInstalled is Resolve's answer for a name no installed lab has.
var ErrNotInstalled = errors.New("no such lab is installed")

// Resolve returns the directory of the installed lab name, or an error
// wrapping ErrNotInstalled.
func (s *Store) Resolve(name string) (string, error) {
	if !validName(name) {
		return "", fmt.Errorf("%q: %w (a lab's name is a DNS label)", name, ErrNotInstalled)
	}
	dir := filepath.Join(s.dir, name)
	_, err := os.Stat(filepath.Join(dir, LabFile))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", fmt.Errorf("%s: %w", name, ErrNotInstalled)
	case err != nil:
		return "", fmt.Errorf("looking for the installed lab %s: %w", name, err)
	}
	return dir, nil
}

// nameRE is a lab's metadata.name: a DNS label (lab/validate.go).
var nameRE = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)

func validName(name string) bool {
	return len(name) <= 63 && nameRE.MatchString(name)
}

// readMeta reads the install record in dir.
func readMeta(dir string) (*Meta, error) {
	b, err := os.ReadFile(filepath.Join(dir, metaFile))
	if err != nil {
		return nil, err
	}
	var m Meta
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("reading %s: %w", filepath.Join(dir, metaFile), err)
	}
	return &m, nil
}
