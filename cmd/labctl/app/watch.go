package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"

	"github.com/labctl/labctl/lab"
	"github.com/labctl/labctl/usecase/labwatch"
)

// errWatchBuiltIn refuses --watch where there is no file to watch.
var errWatchBuiltIn = errors.New("--watch reloads a lab you edit: pass its directory or file with --lab (labctl --lab ./my-lab ui --watch); the built-in lab and an invite's lab have none")

// watchedFile is the lab file --watch reloads, or why there is none to
// watch: the built-in lab has no file.
func (g *globals) watchedFile() (string, error) {
	file, err := g.labFile()
	if err != nil {
		return "", err
	}
	if file == "" {
		return "", errWatchBuiltIn
	}
	return file, nil
}

// watchLab runs until ctx ends, calling taken with each edit of the lab's
// file that the running environment can take and refused with each that it
// cannot (labctl shell --watch, labctl ui --watch). st is the lab as the
// environment runs it: an edit made since it was loaded counts. Each edit
// is also said on log (the author's terminal, when it is not the shell's).
func (g *globals) watchLab(ctx context.Context, st *labState, log io.Writer, taken func(name string, c labwatch.Change), refused func(name, problem string)) error {
	file, err := g.watchedFile()
	if err != nil {
		return err
	}
	name := filepath.Base(file)
	w := &labwatch.Watcher{File: file, Running: st.lab, Loaded: st.fileSum, Load: func() (*lab.Lab, string, error) {
		st, err := g.loadLabState()
		if err != nil {
			return nil, "", err
		}
		return st.lab, st.digest, nil
	}}
	go w.Run(ctx, func(c labwatch.Change) {
		if c.Err != nil {
			fmt.Fprintf(log, "%s was edited, but the lab stays as it was: %v\n", name, c.Err)
			refused(name, c.Err.Error())
			return
		}
		fmt.Fprintf(log, "%s was edited: reloaded (%d steps, %d lint warnings)\n", name, len(c.Lab.Steps), len(c.Warnings))
		taken(name, c)
	})
	return nil
}

// warningLines are lint warnings as the shell and the page show them.
func warningLines(ws []lab.Warning) []string {
	out := make([]string, 0, len(ws))
	for _, w := range ws {
		out = append(out, w.String())
	}
	return out
}
