package images

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/labctl/labctl/lab"
)

// recipe is a workload image's build directory as labctl reads it.
type recipe struct {
	dir string
	// tree is the hash of the directory's files (lab.TreeHash).
	tree string
	// goMod is set when the directory holds a Go module; goVersion is the
	// Go version its go directive asks for ("" when it names none), and
	// vendor is set when it vendors its modules (vendor/modules.txt).
	goMod     bool
	goVersion string
	vendor    bool
	// usesBase is set when the Dockerfile names the BASE_IMAGE argument.
	usesBase bool
	// images are the images the Dockerfile needs from the local engine.
	images []dockerfileImage
}

// readRecipe reads the recipe build (a slash path) of the lab in labDir.
// It refuses a recipe reached through a link, one holding links or other
// files that are neither regular files nor directories, files that host
// tools read as configuration (hostToolFiles), a Dockerfile asking the
// builder for what a lab may not have (checkDockerfile), and a Go module
// that needs modules it does not vendor.
func readRecipe(labDir, build string) (recipe, error) {
	dir := filepath.Join(labDir, filepath.FromSlash(build))
	r := recipe{dir: dir}
	p := labDir
	for _, part := range strings.Split(build, "/") {
		p = filepath.Join(p, part)
		info, err := os.Lstat(p)
		if err != nil {
			return r, fmt.Errorf("reading the recipe: %w", err)
		}
		if info.Mode()&fs.ModeSymlink != 0 {
			return r, fmt.Errorf("the recipe %s is reached through the symbolic link %s: a lab's images are built from its own directories; replace the link with the directory", build, p)
		}
		if !info.IsDir() {
			return r, fmt.Errorf("the recipe %s: %s is not a directory", build, p)
		}
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return r, fmt.Errorf("reading the recipe: %w", err)
	}
	defer root.Close()
	fsys := root.FS()
	if err := checkRecipeFiles(dir, fsys); err != nil {
		return r, err
	}
	dockerfile, err := fs.ReadFile(fsys, "Dockerfile")
	if err != nil {
		return r, fmt.Errorf("reading the recipe: %w", err)
	}
	r.usesBase = strings.Contains(string(dockerfile), "BASE_IMAGE")
	if r.images, err = checkDockerfile(filepath.Join(dir, "Dockerfile"), string(dockerfile)); err != nil {
		return r, err
	}
	gomod, err := fs.ReadFile(fsys, "go.mod")
	switch {
	case err == nil:
		r.goMod = true
		r.goVersion = goDirective(string(gomod))
		if _, err := fs.Stat(fsys, "vendor/modules.txt"); err == nil {
			r.vendor = true
		} else if req := firstRequire(string(gomod)); req != "" {
			return r, fmt.Errorf("the Go program in %s needs module %s (go.mod requires it) and does not vendor it; a lab's program is built offline from its own files: "+
				"run `go mod vendor` in %s and keep vendor/ in the lab", dir, req, dir)
		}
	case !errors.Is(err, fs.ErrNotExist):
		return r, fmt.Errorf("reading the recipe: %w", err)
	}
	if r.tree, err = lab.TreeHash(fsys); err != nil {
		return r, fmt.Errorf("reading the recipe %s: %w", dir, err)
	}
	return r, nil
}

// checkRecipeFiles refuses what a recipe may not hold: links, devices,
// FIFOs and sockets (the copy a build uses holds regular files and
// directories only, so nothing leads out of the recipe), and host tools'
// configuration; and a recipe beyond maxRecipeSize.
func checkRecipeFiles(dir string, fsys fs.FS) error {
	var (
		problems []string
		size     int64
	)
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			info, err := d.Info()
			if err != nil {
				return err
			}
			if size += info.Size(); size > maxRecipeSize {
				return fmt.Errorf("the recipe is larger than %d MiB (sparse files count at their full length): keep only what the image is built from", maxRecipeSize>>20)
			}
		}
		if p != "." && hostToolFiles[d.Name()] {
			problems = append(problems, fmt.Sprintf("%s is configuration that host tools (git, go, credential helpers) read and run: remove it from the recipe", p))
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		switch {
		case d.IsDir() || d.Type().IsRegular():
		case d.Type()&fs.ModeSymlink != 0:
			problems = append(problems, fmt.Sprintf("%s is a symbolic link: a recipe's files are its own; replace the link with the file it names", p))
		default:
			problems = append(problems, fmt.Sprintf("%s is not a regular file (%s): remove it from the recipe", p, d.Type()))
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("reading the recipe %s: %w", dir, err)
	}
	if len(problems) > 0 {
		return fmt.Errorf("the recipe %s holds what labctl does not build from:\n  %s", dir, strings.Join(problems, "\n  "))
	}
	return nil
}

// goDirective returns the version of a go.mod's go directive, or "".
func goDirective(gomod string) string {
	sc := bufio.NewScanner(strings.NewReader(gomod))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) >= 2 && f[0] == "go" {
			return f[1]
		}
	}
	return ""
}

// firstRequire returns the first module a go.mod requires, "" when it
// requires none.
func firstRequire(gomod string) string {
	block := false
	for _, line := range strings.Split(gomod, "\n") {
		if i := strings.Index(line, "//"); i >= 0 {
			line = line[:i]
		}
		f := strings.Fields(line)
		switch {
		case len(f) == 0:
		case block && f[0] == ")":
			block = false
		case block:
			return f[0]
		case f[0] == "require" && len(f) >= 2 && f[1] == "(":
			block = true
		case f[0] == "require" && len(f) >= 2:
			return f[1]
		}
	}
	return ""
}

// workloadHash identifies a workload image: its recipe's files, the Go
// that builds its program (goVersion, the host GOROOT's that the build
// container runs; "" for a recipe without one) and how, and the Debian
// base when the recipe builds on it.
func workloadHash(r recipe, goVersion string) string {
	h := sha256.New()
	fmt.Fprintf(h, "labctl-workload %s\ntree %s\n", workloadRevision, r.tree)
	if r.goMod {
		fmt.Fprintf(h, "go %s %q %q\n", goVersion, workloadGoFlags, goBuildEnv(r, "/goroot"))
	}
	if r.usesBase {
		fmt.Fprintf(h, "base %s\n", baseRef())
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}
