package app

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/labctl/labctl"
	"github.com/labctl/labctl/internal/labread"
	"github.com/labctl/labctl/internal/msg"
	"github.com/labctl/labctl/lab"
	"github.com/labctl/labctl/usecase/labstore"
)

// defaultLabFile is the lab file used, when present in the working
// directory, if --lab names none.
const defaultLabFile = "lab.yaml"

// builtInLab names the embedded default lab in messages and errors.
const builtInLab = "built-in lab.yaml"

// loadLab loads the lab named by --lab (or LABCTL_LAB, or the config file;
// see labFile), else ./lab.yaml when present, else the embedded default
// lab. It returns the lab, its fixtures (the fixtures/ directory beside
// the lab file, empty when there is none), where the lab came from, for
// messages (its lab file, or builtInLab), and the lab's directory, which
// holds the lab file ("" for the built-in lab). Problems in the lab file
// come back as lab.Errors.
//
// The lab's texts are in the learner's language when the lab has a
// translation in it (see textLanguage); loadLabAsWritten keeps them as
// the lab file's metadata.language has them.
func (g *globals) loadLab() (*lab.Lab, fs.FS, string, string, error) {
	l, fixtures, source, dir, err := g.loadLabAsWritten()
	if err != nil {
		return l, fixtures, source, dir, err
	}
	return l.In(textLanguage(l, os.Getenv)), fixtures, source, dir, nil
}

// textLanguage picks which of the lab's languages the learner reads: the
// first the lab has of labctl's --lang (LABCTL_LANG), the locale's
// language and the language of labctl's messages, else the lab's own.
func textLanguage(l *lab.Lab, getenv func(string) string) string {
	locale := ""
	for _, k := range []string{"LC_ALL", "LC_MESSAGES", "LANG"} {
		if v := getenv(k); v != "" {
			locale = v
			break
		}
	}
	return l.TextLanguage(getenv(msg.EnvLang), locale, string(msg.Choose(l.Metadata.Language, getenv)))
}

// loadLabAsWritten is loadLab with the lab's texts as written.
func (g *globals) loadLabAsWritten() (*lab.Lab, fs.FS, string, string, error) {
	file, err := g.labFile()
	if err != nil {
		return nil, nil, "", "", err
	}
	if file == "" {
		l, err := lab.Parse(builtInLab, labctl.DefaultLab())
		if err != nil {
			return nil, nil, builtInLab, "", err
		}
		return l, labctl.DefaultFixtures(), builtInLab, "", nil
	}
	// The one read of the lab from disk: its fixtures are what was read,
	// held in memory, and so is the lab file's content (labBytes).
	read, l, err := labstore.Read(file)
	if err != nil {
		return nil, nil, file, "", err
	}
	dir, err := filepath.Abs(filepath.Dir(file))
	if err != nil {
		return nil, nil, file, "", err
	}
	g.read = &readLab{file: file, source: read.Source}
	return l, read.FS(labread.Fixtures), file, dir, nil
}

// readLab is the lab file last read, and its content as read.
type readLab struct {
	file   string
	source []byte
}

// labBytes are the bytes of the lab file source (builtInLab: the lab built
// into labctl): as loadLab read them, else read as labread reads a lab file.
func (g *globals) labBytes(source string) ([]byte, error) {
	if source == builtInLab {
		return labctl.DefaultLab(), nil
	}
	if g.read != nil && g.read.file == source {
		return g.read.source, nil
	}
	return labread.ReadFile(source)
}

// labFile resolves the lab the configuration names to its lab file, "" for
// the built-in lab. --lab is a path when it holds a / or ends in .yaml or
// .yml (a lab file, or a directory holding lab.yaml), else the name of an
// installed lab or of the built-in lab. Without --lab it is ./lab.yaml when
// present.
func (g *globals) labFile() (string, error) {
	name := g.labPath()
	switch {
	case name == "":
		if _, err := os.Stat(defaultLabFile); err == nil {
			return defaultLabFile, nil
		} else if !errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("looking for %s: %w", defaultLabFile, err)
		}
		return "", nil
	case isLabPath(name):
		if info, err := os.Stat(name); err == nil && info.IsDir() {
			file := filepath.Join(name, defaultLabFile)
			if _, err := os.Stat(file); err != nil {
				return "", fmt.Errorf("--lab %s: the directory holds no %s: give a lab's directory or its lab file", name, defaultLabFile)
			}
			return file, nil
		}
		return name, nil
	case name == labstore.BuiltIn:
		return "", nil
	}
	store, err := g.labStore()
	if err != nil {
		return "", err
	}
	dir, err := store.Resolve(name)
	if errors.Is(err, labstore.ErrNotInstalled) {
		return "", unknownLab(name, store)
	}
	if err != nil {
		return "", err
	}
	// The labs directory is labctl's own, named by the environment: its
	// path is resolved once; the lab is read beneath it through no link.
	if real, err := filepath.EvalSymlinks(store.Dir()); err == nil {
		dir = filepath.Join(real, filepath.Base(dir))
	}
	return filepath.Join(dir, labstore.LabFile), nil
}

// isLabPath reports whether --lab's value is a path rather than a name.
func isLabPath(s string) bool {
	return strings.ContainsRune(s, '/') || strings.ContainsRune(s, filepath.Separator) ||
		strings.HasSuffix(s, ".yaml") || strings.HasSuffix(s, ".yml") || s == "." || s == ".."
}

// labStore is the labs directory of installed labs.
func (g *globals) labStore() (*labstore.Store, error) {
	dir, err := labstore.Dir(os.Getenv)
	if err != nil {
		return nil, err
	}
	return labstore.New(dir), nil
}

// unknownLab says that no lab has the name --lab gave, which labs there
// are, and how to get one.
func unknownLab(name string, store *labstore.Store) error {
	var b strings.Builder
	fmt.Fprintf(&b, "--lab %s: no lab has that name", name)
	if info, err := os.Stat(name); err == nil {
		what := "a file"
		if info.IsDir() {
			what = "a directory"
		}
		fmt.Fprintf(&b, " (%s %s is here: to use it, write --lab ./%s)", what, name, name)
	}
	names := append([]string{labstore.BuiltIn + " (built in)"}, store.Names()...)
	fmt.Fprintf(&b, "\nlabs: %s", strings.Join(names, ", "))
	fmt.Fprintf(&b, "\ninstall one with `labctl install DIR|GIT-URL|BUNDLE` (labs in %s), or give a lab file: --lab ./PATH/lab.yaml", store.Dir())
	return errors.New(b.String())
}

// completeLab completes --lab with the installed labs and the built-in
// one (paths complete as files).
func completeLab(g *globals) cobra.CompletionFunc {
	return func(cmd *cobra.Command, _ []string, prefix string) ([]cobra.Completion, cobra.ShellCompDirective) {
		store, err := g.labStore()
		if err != nil || isLabPath(prefix) {
			return nil, cobra.ShellCompDirectiveDefault
		}
		var names []cobra.Completion
		for _, n := range append([]string{labstore.BuiltIn}, store.Names()...) {
			if strings.HasPrefix(n, prefix) {
				names = append(names, n)
			}
		}
		return names, cobra.ShellCompDirectiveDefault
	}
}
