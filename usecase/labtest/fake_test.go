package labtest

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/labctl/labctl/checks"
)

// fakeEnv is a lab environment in miniature. Its sandbox home holds paths,
// its namespaces hold objects, and "outside" holds what neither a sandbox
// nor a namespace reset removes. Scripts are lines of a tiny language:
//
//	touch PATH   create PATH in the home volume
//	rm PATH      remove it
//	apply NAME   create object NAME in the lab's namespace
//	keep PATH    create PATH outside the home (survives every reset)
//	flash PATH   create PATH that is gone once a checker round has seen it
//	fail-if PATH stop with status 1 if PATH exists outside the home
//	exit N       stop with status N
//	global NAME  create NAME outside the namespaces (a cluster object)
//	exec NAME    run a command in Pod NAME's container
//	derive NAME  change NAME, an object its owner made, for good
//
// The learner's writes in the namespaces (apply, exec) are kept in writes,
// as the API server's audit log keeps them.
// File checks pass when their path exists (or, with exists: false, does
// not); kube checks when their object exists; command checks cannot run.
type fakeEnv struct {
	home, cluster, outside, flash map[string]bool
	// global are the objects outside the namespaces, derived the
	// namespaces' objects their owners made, changed for good when true;
	// writes are the learner's writes in the namespaces.
	global, derived map[string]bool
	writes          []string
	// roundErr, when set, makes every checker round fail.
	roundErr error
	// roundHook, when set, runs at the start of every checker round.
	roundHook func()
	// lastScript is the first line of the script run last.
	lastScript string
	// log records what was done, in order: "script <first line>",
	// "recreate-sandbox", "reset-namespaces", "backup", "checks".
	log []string
	// mu guards the sandbox and the namespaces, which a reset resets at
	// once.
	mu sync.Mutex
}

func newFakeEnv() *fakeEnv {
	return &fakeEnv{home: map[string]bool{}, cluster: map[string]bool{}, outside: map[string]bool{}, flash: map[string]bool{},
		global: map[string]bool{}, derived: map[string]bool{}}
}

func (f *fakeEnv) BackupHome(_ context.Context, w io.Writer) error {
	f.log = append(f.log, "backup")
	paths := make([]string, 0, len(f.home))
	for p := range f.home {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	_, err := io.WriteString(w, strings.Join(paths, "\n"))
	return err
}

func (f *fakeEnv) RecreateSandbox(context.Context) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.log = append(f.log, "recreate-sandbox")
	// reset recreates the sandbox and the namespaces at once: log them in
	// one order.
	if n := len(f.log); n > 1 && f.log[n-2] == "reset-namespaces" {
		f.log[n-2], f.log[n-1] = f.log[n-1], f.log[n-2]
	}
	f.home = map[string]bool{}
	f.flash = map[string]bool{}
	return nil
}

func (f *fakeEnv) ResetNamespaces(context.Context) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.log = append(f.log, "reset-namespaces")
	f.cluster, f.derived = map[string]bool{}, map[string]bool{}
	return nil
}

func (f *fakeEnv) RecreateCluster(ctx context.Context) error {
	f.log = append(f.log, "recreate-cluster")
	f.home, f.cluster, f.flash = map[string]bool{}, map[string]bool{}, map[string]bool{}
	return nil
}

// RunScripts runs each script with RunScript, in order, as the sandbox does
// in one exec.
func (f *fakeEnv) RunScripts(ctx context.Context, scripts []string, stdout, stderr io.Writer, started func(int)) (int, int, error) {
	for i, s := range scripts {
		started(i)
		code, err := f.RunScript(ctx, s, stdout, stderr)
		if err != nil {
			return -1, code, err
		}
		if code != 0 {
			return i, code, nil
		}
	}
	return -1, 0, nil
}

func (f *fakeEnv) RunScript(_ context.Context, script string, stdout, stderr io.Writer) (int, error) {
	first, _, _ := strings.Cut(strings.TrimSpace(script), "\n")
	f.mu.Lock()
	f.log = append(f.log, "script "+first)
	f.lastScript = first
	f.mu.Unlock()
	for _, line := range strings.Split(script, "\n") {
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		if len(fields) != 2 {
			fmt.Fprintf(stderr, "bad line %q\n", line)
			return 2, nil
		}
		cmd, arg := fields[0], fields[1]
		fmt.Fprintf(stdout, "+ %s %s\n", cmd, arg)
		switch cmd {
		case "touch":
			f.home[arg] = true
		case "rm":
			delete(f.home, arg)
		case "apply":
			f.cluster[arg] = true
			f.writes = append(f.writes, "create configmaps ns/"+arg)
		case "global":
			f.global[arg] = true
		case "exec":
			f.writes = append(f.writes, "create pods/exec ns/"+arg)
		case "derive":
			f.derived[arg] = true
		case "keep":
			f.outside[arg] = true
		case "flash":
			f.flash[arg] = true
		case "fail-if":
			if f.outside[arg] {
				fmt.Fprintf(stderr, "%s exists\n", arg)
				return 1, nil
			}
		case "exit":
			n, err := strconv.Atoi(arg)
			if err != nil {
				return 2, nil
			}
			fmt.Fprintf(stderr, "exiting with %d\n", n)
			return n, nil
		default:
			fmt.Fprintf(stderr, "%s: command not found\n", cmd)
			return 127, nil
		}
	}
	return 0, nil
}

func (f *fakeEnv) RunChecks(_ context.Context, round checks.Round) ([]checks.Result, error) {
	cs := round.Checks
	f.mu.Lock()
	f.log = append(f.log, "checks")
	f.mu.Unlock()
	if f.roundHook != nil {
		f.roundHook()
	}
	if f.roundErr != nil {
		return nil, f.roundErr
	}
	out := make([]checks.Result, len(cs))
	for i, c := range cs {
		r := checks.Result{Name: c.Name, Points: c.Points, Optional: c.Optional}
		switch {
		case c.File != nil:
			p := c.File.Path
			exists := f.home[p] || f.outside[p] || f.flash[p]
			want := c.File.Exists == nil || *c.File.Exists
			r.Status = checks.Pass
			if exists != want {
				r.Status = checks.Fail
				r.Message = fmt.Sprintf("%s: expected exists=%t, found exists=%t", p, want, exists)
			}
		case c.Kube != nil:
			r.Status = checks.Pass
			if !f.cluster[c.Kube.Name] {
				r.Status = checks.Fail
				r.Message = "object " + c.Kube.Name + " not found"
			}
		default:
			r.Status = checks.Error
			r.Message = "the fake runs no commands"
		}
		out[i] = r
	}
	f.flash = map[string]bool{}
	return out, nil
}

// keepingEnv is a fakeEnv that keeps step starts (reset.Checkpointer):
// going back restores the home, only while the namespaces are as kept.
type keepingEnv struct {
	*fakeEnv
	kept map[string][2]map[string]bool
}

func (k *keepingEnv) Checkpoint(_ context.Context, step string) {
	k.log = append(k.log, "checkpoint "+step)
	k.kept[step] = [2]map[string]bool{maps.Clone(k.home), maps.Clone(k.cluster)}
}

func (k *keepingEnv) RestoreCheckpoint(_ context.Context, step string) bool {
	c, ok := k.kept[step]
	if !ok || !maps.Equal(c[1], k.cluster) {
		return false
	}
	k.log = append(k.log, "back-to "+step)
	k.home, k.flash = maps.Clone(c[0]), map[string]bool{}
	return true
}

// undoingEnv is a fakeEnv that undoes cases in place (InPlaceUndoer): its
// world is the namespace's ConfigMaps, the derived objects (Pods of a
// ReplicaSet) and the cluster objects; putting the sandbox back restores
// the home, only while nothing outside it changed. The sandbox is put back
// while the objects are written back: mu guards both.
type undoingEnv struct {
	*fakeEnv
	keptHome, keptOutside map[string]map[string]bool
	keptWrites            map[string]int
	// version is bumped at each listing: a resource version the API
	// server sets, which the undo sets aside.
	version int
	// looks has, for each listing, the first line of the script run last
	// before it; lookHook, when set, runs at the start of every listing.
	looks    []string
	lookHook func()
}

func newUndoingEnv() *undoingEnv {
	return &undoingEnv{fakeEnv: newFakeEnv(), keptHome: map[string]map[string]bool{},
		keptOutside: map[string]map[string]bool{}, keptWrites: map[string]int{}}
}

func (u *undoingEnv) KeepCaseStart(_ context.Context, key string) bool {
	u.log = append(u.log, "keep-start "+key)
	u.keptHome[key], u.keptOutside[key] = maps.Clone(u.home), maps.Clone(u.outside)
	u.keptWrites[key] = len(u.writes)
	return true
}

func (u *undoingEnv) World(context.Context) ([]map[string]any, error) {
	if u.lookHook != nil {
		u.lookHook()
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	u.version++
	u.looks = append(u.looks, u.lastScript)
	var out []map[string]any
	md := func(ns, name string) map[string]any {
		m := map[string]any{"name": name, "resourceVersion": strconv.Itoa(u.version), "uid": "u-" + name}
		if ns != "" {
			m["namespace"] = ns
		}
		return m
	}
	for name := range u.cluster {
		out = append(out, map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": md("ns", name),
			"data": map[string]any{"v": "1"}})
	}
	for name, changed := range u.derived {
		m := md("ns", name)
		m["ownerReferences"] = []any{map[string]any{"kind": "ReplicaSet", "name": "web", "controller": true}}
		out = append(out, map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": m,
			"spec": map[string]any{"changed": changed}, "status": map[string]any{"phase": "Running", "at": u.version}})
	}
	for name := range u.global {
		out = append(out, map[string]any{"apiVersion": "v1", "kind": "Node", "metadata": md("", name)})
	}
	return out, nil
}

func (u *undoingEnv) WriteObjects(_ context.Context, deletes, creates, replaces []map[string]any) error {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.log = append(u.log, fmt.Sprintf("write-back %d %d %d", len(deletes), len(creates), len(replaces)))
	name := func(o map[string]any) string { return o["metadata"].(map[string]any)["name"].(string) }
	for _, o := range deletes {
		delete(u.cluster, name(o))
	}
	for _, o := range creates {
		u.cluster[name(o)] = true
	}
	return nil
}

func (u *undoingEnv) LearnerWrites(key string) ([]string, error) {
	return slices.Clone(u.writes[u.keptWrites[key]:]), nil
}

func (u *undoingEnv) RestoreCaseStart(_ context.Context, key string) bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	if !maps.Equal(u.outside, u.keptOutside[key]) {
		return false
	}
	u.log = append(u.log, "restore-start "+key)
	u.home, u.flash = maps.Clone(u.keptHome[key]), map[string]bool{}
	return true
}
