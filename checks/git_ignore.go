package checks

import (
	"bufio"
	"io"
	"os"
	"path"
	"strings"

	"github.com/go-git/go-git/v5"
	gitconfig "github.com/go-git/go-git/v5/plumbing/format/config"
	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
	"github.com/go-git/go-git/v5/storage/filesystem"
)

// learnerHome is HOME of the learner's shell, where git finds their own
// configuration.
const learnerHome = "/root"

// infoExcludes reads the repository's .git/info/exclude, which git status
// honours like a top-level .gitignore.
func infoExcludes(repo *git.Repository) []gitignore.Pattern {
	var st *filesystem.Storage
	switch s := repo.Storer.(type) {
	case *boundedStorage:
		st = s.Storage
	case *filesystem.Storage:
		st = s
	default:
		return nil
	}
	f, err := st.Filesystem().Open("info/exclude")
	if err != nil {
		return nil
	}
	defer f.Close()
	return readPatterns(f)
}

// learnerExcludes reads the ignore patterns git status takes from outside
// the repository: the file core.excludesFile names (in the repository's own
// configuration, else in the learner's ~/.gitconfig), or git's default,
// ~/.config/git/ignore. A learner whose editor leaves backup files (a
// "*~" there) has a clean work tree for git, and so for the check. A file
// outside the learner's areas, behind a link that leaves them, or not a
// regular file adds nothing.
func learnerExcludes(env Env, repo *git.Repository) []gitignore.Pattern {
	name := ""
	if cfg, err := repo.Config(); err == nil && cfg.Raw != nil {
		name = cfg.Raw.Section("core").Option("excludesfile")
	}
	if name == "" {
		if f, ok := openLearnerFile(env, path.Join(learnerHome, ".gitconfig")); ok {
			cfg := gitconfig.New()
			if gitconfig.NewDecoder(io.LimitReader(f, maxFileSize)).Decode(cfg) == nil {
				name = cfg.Section("core").Option("excludesfile")
			}
			f.Close()
		}
	}
	if name == "" {
		name = "~/.config/git/ignore"
	}
	if rest, ok := strings.CutPrefix(name, "~/"); ok {
		name = path.Join(learnerHome, rest)
	}
	if !path.IsAbs(name) {
		return nil
	}
	f, ok := openLearnerFile(env, name)
	if !ok {
		return nil
	}
	defer f.Close()
	return readPatterns(f)
}

// openLearnerFile opens the regular file at the lab path p, resolved in
// the learner's areas.
func openLearnerFile(env Env, p string) (*os.File, bool) {
	_, host, err := resolveLearnerPath(env, p)
	if err != nil {
		return nil, false
	}
	f, err := os.Open(host)
	if err != nil {
		return nil, false
	}
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		f.Close()
		return nil, false
	}
	return f, true
}

// readPatterns parses an ignore file whose patterns apply from the
// repository's top, as git reads info/exclude and the excludes file.
func readPatterns(r io.Reader) []gitignore.Pattern {
	var ps []gitignore.Pattern
	sc := bufio.NewScanner(io.LimitReader(r, maxFileSize))
	for sc.Scan() {
		line := sc.Text()
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		ps = append(ps, gitignore.ParsePattern(line, nil))
	}
	return ps
}
