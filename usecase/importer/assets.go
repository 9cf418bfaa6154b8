package importer

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"slices"
	"strings"

	"github.com/labctl/labctl/internal/labread"
	"github.com/labctl/labctl/lab"
)

// assetsDir is where a scenario keeps its assets, and where the lab's
// fixtures keep them.
const assetsDir = "assets"

// assets copies the scenario's assets (details.assets.host01, the only
// machine a lab has) into fixtures/assets and returns the setup lines that
// put each where the scenario put it. A link among them, or more than the
// bounds allow, is left out and said.
func (im *importer) assets(byHost map[string][]kcAsset) []string {
	var hosts []string
	for h := range byHost {
		hosts = append(hosts, h)
	}
	slices.Sort(hosts)
	var list []kcAsset
	for _, h := range hosts {
		if h != "host01" {
			im.todo("the assets of %s were not imported: a lab has one sandbox, whose assets are host01's", h)
			continue
		}
		list = byHost[h]
	}
	if len(list) == 0 {
		return nil
	}
	files := im.assetFiles()
	var lines []string
	for _, a := range list {
		target := strings.TrimSpace(a.Target)
		if target == "~" || strings.HasPrefix(target, "~/") {
			target = "/root" + strings.TrimPrefix(target, "~")
		}
		if !path.IsAbs(target) {
			im.todo("asset %s: its target %q is not an absolute path; it was not placed", a.File, a.Target)
			continue
		}
		target = path.Clean(target)
		var matched []string
		for _, f := range files {
			if globMatch(a.File, f) {
				matched = append(matched, f)
			}
		}
		if len(matched) == 0 {
			im.todo("asset %s matches no file of the scenario's assets/", a.File)
			continue
		}
		wild := strings.ContainsAny(a.File, "*?[")
		if len(lines)+len(matched) > maxAssetLines {
			im.todo("the assets were placed only up to %d files (the scenario's asset list names more): place the others in setup", maxAssetLines)
			break
		}
		for _, f := range matched {
			dest := path.Join(target, path.Base(f))
			if wild {
				dest = path.Join(target, f)
			}
			lines = append(lines, fmt.Sprintf("install -D -m 0644 %s %s", quote(path.Join(lab.DefaultFixturesDir, assetsDir, f)), quote(dest)))
			if mode := strings.TrimSpace(a.Chmod); mode != "" {
				if !chmodRE.MatchString(mode) {
					im.todo("asset %s: chmod %q was not understood; set the file's mode in setup", a.File, a.Chmod)
					continue
				}
				lines = append(lines, fmt.Sprintf("chmod %s %s", mode, quote(dest)))
			}
		}
	}
	if len(lines) == 0 {
		return nil
	}
	return []string{"# the scenario's assets\n" + strings.Join(lines, "\n")}
}

// assetFiles copies every regular file under assets/ into the fixtures
// and returns their paths relative to assets/, sorted.
func (im *importer) assetFiles() []string {
	var files []string
	total := 0
	fsys := im.src.root.FS()
	err := fs.WalkDir(fsys, assetsDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel := strings.TrimPrefix(p, assetsDir+"/")
		if err := labread.HostToolFile(rel); err != nil && p != assetsDir {
			var host *labread.HostToolFileError
			errors.As(err, &host)
			im.todo("asset %s is %s, which a tool on the host reads as its configuration (no lab may hold one); it was not copied", rel, host.What)
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			return nil
		}
		if !d.Type().IsRegular() {
			im.todo("asset %s is not a regular file (a link, a FIFO or a device); it was not copied", rel)
			return nil
		}
		if len(files) == maxAssetFiles {
			return fmt.Errorf("more than %d files", maxAssetFiles)
		}
		f, err := im.src.root.OpenFile(p, openNonBlocking, 0)
		if err != nil {
			return err
		}
		defer f.Close()
		if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
			im.todo("asset %s is not a regular file (a link, a FIFO or a device); it was not copied", rel)
			return nil
		}
		b, err := io.ReadAll(io.LimitReader(f, int64(maxAssets-total)+1))
		if err != nil {
			return err
		}
		if total += len(b); total > maxAssets {
			return fmt.Errorf("more than %d MiB", maxAssets>>20)
		}
		im.fixtures[path.Join(assetsDir, rel)] = b
		files = append(files, rel)
		return nil
	})
	if err != nil && !(errors.Is(err, fs.ErrNotExist) && len(files) == 0) {
		im.todo("the scenario's assets were not all copied: %v", err)
	}
	slices.Sort(files)
	return files
}

var chmodRE = lazyRegexp(`^([0-7]{3,4}|[ugoa]*[-+=][rwxXst]+)$`)

// globMatch matches a Killercoda asset pattern: path.Match per segment,
// and ** for any number of segments.
func globMatch(pattern, name string) bool {
	return matchSegments(strings.Split(strings.Trim(pattern, "/"), "/"), strings.Split(name, "/"))
}

func matchSegments(pat, name []string) bool {
	for len(pat) > 0 {
		if pat[0] == "**" {
			for i := 0; i <= len(name); i++ {
				if matchSegments(pat[1:], name[i:]) {
					return true
				}
			}
			return false
		}
		if len(name) == 0 {
			return false
		}
		if ok, err := path.Match(pat[0], name[0]); err != nil || !ok {
			return false
		}
		pat, name = pat[1:], name[1:]
	}
	return len(name) == 0
}

// quote quotes s for bash.
func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
