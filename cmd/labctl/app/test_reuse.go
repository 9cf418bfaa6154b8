package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/labctl/labctl/grading/progress"
	"github.com/labctl/labctl/internal/atomicfile"
	"github.com/labctl/labctl/lab"
	"github.com/labctl/labctl/provision/kind"
	"github.com/labctl/labctl/usecase/labwatch"
	"github.com/labctl/labctl/usecase/reset"
)

// builtFrom records what a kept test environment was brought up from, so
// that `labctl test --reuse` knows whether an edited lab can run on it:
// the lab file's bytes and the hash of each tree copied into it at up (the
// fixtures, the directories its own images are built from).
type builtFrom struct {
	LabFile []byte            `json:"labFile"`
	Trees   map[string]string `json:"trees"`
}

const builtFromFile = "test-environment.json"

// treesOf hashes the trees `labctl up` copies into l's environment.
func treesOf(l *lab.Lab, fixtures fs.FS, labDir string) (map[string]string, error) {
	trees := map[string]string{}
	h, err := lab.TreeHash(fixtures)
	if err != nil {
		return nil, err
	}
	trees["fixtures"] = h
	for _, im := range l.Cluster.Images {
		if im.Build == "" {
			continue
		}
		h, err := lab.TreeHash(os.DirFS(filepath.Join(labDir, im.Build)))
		if err != nil {
			return nil, fmt.Errorf("hashing %s: %w", im.Build, err)
		}
		trees["images/"+im.Build] = h
	}
	return trees, nil
}

// recordBuiltFrom writes what the test environment in dir was built from.
func recordBuiltFrom(g *globals, dir, source string, l *lab.Lab, fixtures fs.FS, labDir string) error {
	raw, err := g.labBytes(source)
	if err != nil {
		return err
	}
	trees, err := treesOf(l, fixtures, labDir)
	if err != nil {
		return err
	}
	b, err := json.Marshal(builtFrom{LabFile: raw, Trees: trees})
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	return atomicfile.WriteFile(filepath.Join(dir, builtFromFile), b, 0o600)
}

// reusable says why the kept test environment in dir cannot run the lab of
// the file source (tl, under test, with its fixtures and directory), or ""
// when it can: it was built from a lab whose cluster, sandbox, access and
// copied trees are this one's.
func reusable(g *globals, dir, source string, tl *lab.Lab, fixtures fs.FS, labDir string) string {
	b, err := os.ReadFile(filepath.Join(dir, builtFromFile))
	if errors.Is(err, fs.ErrNotExist) {
		return "no test environment was kept (`labctl test --keep` or --reuse keeps one)"
	}
	if err != nil {
		return err.Error()
	}
	var was builtFrom
	if err := json.Unmarshal(b, &was); err != nil {
		return "its record cannot be read: " + err.Error()
	}
	prev, err := lab.Parse(builtFromFile, was.LabFile)
	if err != nil {
		return "the lab it was built from no longer loads: " + err.Error()
	}
	raw, err := g.labBytes(source)
	if err != nil {
		return err.Error()
	}
	cur, err := lab.Parse(builtFromFile, raw)
	if err != nil {
		return err.Error()
	}
	if why := labwatch.NeedsUp(prev, cur); len(why) > 0 {
		return "the lab's " + strings.Join(why, ", ") + " changed since"
	}
	trees, err := treesOf(tl, fixtures, labDir)
	if err != nil {
		return err.Error()
	}
	var changed []string
	for k, h := range trees {
		if was.Trees[k] != h {
			changed = append(changed, k)
		}
	}
	for k := range was.Trees {
		if _, ok := trees[k]; !ok {
			changed = append(changed, k)
		}
	}
	if len(changed) > 0 {
		slices.Sort(changed)
		return "the lab's " + strings.Join(changed, ", ") + " changed since"
	}
	return ""
}

// reuseTestEnvironment connects to the kept test environment of tl and
// brings it back to the lab's start, as a reset does; nil, with the reason,
// when it cannot be used (then a fresh one is brought up).
func reuseTestEnvironment(ctx context.Context, g *globals, source string, tl *lab.Lab, store *progress.Store, up kind.Options) (liveLab, string) {
	if why := reusable(g, store.Dir(), source, tl, up.Fixtures, up.LabDir); why != "" {
		return nil, why
	}
	env, err := g.env.Connect(ctx, up)
	if err != nil {
		return nil, "it is not running: " + err.Error()
	}
	if _, err := reset.Run(ctx, env, reset.Options{Lab: tl, Store: store, NoBackup: true, Status: g.statusLogger(), ScriptOutput: g.detail()}); err != nil {
		env.Close()
		return nil, "resetting it failed: " + err.Error()
	}
	return env, ""
}
