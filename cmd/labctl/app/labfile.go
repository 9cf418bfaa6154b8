package app

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/labctl/labctl"
	"github.com/labctl/labctl/lab"
)

// defaultLabFile is the lab file used, when present in the working
// directory, if --lab names none.
const defaultLabFile = "lab.yaml"

// builtInLab names the embedded default lab in messages and errors.
const builtInLab = "built-in lab.yaml"

// loadLab loads the lab named by --lab (or LABCTL_LAB, or the config file),
// else ./lab.yaml when present, else the embedded default lab. It returns
// the lab, its fixtures (the fixtures/ directory beside the lab file, empty
// when there is none) and where the lab came from, for messages. Problems
// in the lab file come back as lab.Errors.
func (g *globals) loadLab() (*lab.Lab, fs.FS, string, error) {
	file := g.labPath()
	if file == "" {
		if _, err := os.Stat(defaultLabFile); err == nil {
			file = defaultLabFile
		} else if !errors.Is(err, fs.ErrNotExist) {
			return nil, nil, "", fmt.Errorf("looking for %s: %w", defaultLabFile, err)
		}
	}
	if file == "" {
		l, err := lab.Parse(builtInLab, labctl.DefaultLab())
		if err != nil {
			return nil, nil, builtInLab, err
		}
		return l, labctl.DefaultFixtures(), builtInLab, nil
	}
	l, err := lab.Load(file)
	if err != nil {
		return nil, nil, file, err
	}
	fixtures, err := fixturesBeside(file)
	if err != nil {
		return nil, nil, file, err
	}
	return l, fixtures, file, nil
}

// fixturesBeside returns the fixtures/ directory next to a lab file, or an
// empty file system when the lab has none.
func fixturesBeside(file string) (fs.FS, error) {
	dir := filepath.Join(filepath.Dir(file), "fixtures")
	info, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return embed.FS{}, nil // the zero embed.FS is an empty file system
	case err != nil:
		return nil, fmt.Errorf("reading the lab's fixtures: %w", err)
	case !info.IsDir():
		return nil, fmt.Errorf("%s is not a directory; a lab's fixtures/ must be one", dir)
	}
	return os.DirFS(dir), nil
}
