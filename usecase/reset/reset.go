// Package reset owns `labctl reset`: it saves the learner's /root, puts the
// lab's environment back to its starting state, optionally replays the
// solve scripts up to a chosen step, and resets the learner's progress. The
// environment itself (Docker, kind, Kubernetes) is reached through the small
// Environment interface; provision's *Live is the real one.
package reset

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/labctl/labctl/grading"
	"github.com/labctl/labctl/grading/progress"
	"github.com/labctl/labctl/internal/msg"
	"github.com/labctl/labctl/lab"
)

// Environment is the learner's live lab, as reset needs it.
type Environment interface {
	// BackupHome writes the sandbox's /root to w as a tar stream.
	BackupHome(ctx context.Context, w io.Writer) error
	// RecreateSandbox removes the sandbox and its home volume and creates
	// them anew, learner kubeconfig included. It runs at the same time as
	// ResetNamespaces.
	RecreateSandbox(ctx context.Context) error
	// ResetNamespaces puts the lab's namespaces back to their starting
	// state (deleting and creating again those that changed), waiting a
	// bounded time.
	ResetNamespaces(ctx context.Context) error
	// RecreateCluster removes the whole environment and brings it up fresh
	// (cluster, namespaces, sandbox and volume, the first step's setup),
	// printing its own progress.
	RecreateCluster(ctx context.Context) error
	// RunScript runs a bash script in the sandbox as the learner would and
	// returns its exit code.
	RunScript(ctx context.Context, script string, stdout, stderr io.Writer) (int, error)
	// RunScripts runs scripts in order, each as RunScript would, and stops
	// at the first that exits non-zero; started is called with each one's
	// index as it starts. It returns the index of the script that failed,
	// or -1, and that script's exit code.
	RunScripts(ctx context.Context, scripts []string, stdout, stderr io.Writer, started func(int)) (failed, code int, err error)
}

// Checkpointer is an Environment that can keep the lab at the start of a
// step and go back there when nothing but files changed since (labctl
// test's, on kind).
type Checkpointer interface {
	// Checkpoint keeps the lab as it is now, at the start of step.
	Checkpoint(ctx context.Context, step string)
	// RestoreCheckpoint puts the lab back at the start of step as
	// Checkpoint kept it and reports whether it did; when it did not,
	// nothing changed.
	RestoreCheckpoint(ctx context.Context, step string) bool
}

// Restorer is an Environment that can put the sandbox back in place.
type Restorer interface {
	// NotePristine keeps the sandbox as RecreateSandbox just left it.
	NotePristine(ctx context.Context)
	// RestoreSandbox puts the sandbox back as NotePristine kept it,
	// without recreating it, and reports whether it did (only when
	// nothing but /root and /tmp changed and no process of its own is
	// left); when it did not, RecreateSandbox follows.
	RestoreSandbox(ctx context.Context) bool
}

// Status prints a line per stage of the reset; status.Logger is the real one.
type Status interface {
	Start(msg string)
	End(ok bool)
}

// Options say what to reset.
type Options struct {
	Lab *lab.Lab
	// Store is the learner's progress; backups go under its directory.
	Store *progress.Store
	// Hard recreates the cluster too.
	Hard bool
	// To, when set, replays the solve scripts of the steps before this step
	// and leaves the learner at it.
	To string
	// Status prints the stages; nil prints nothing.
	Status Status
	// Catalog words the stages in the learner's language; nil is English.
	Catalog *msg.Catalog
	// ScriptOutput, when set, receives the output of setup and solve
	// scripts as they run; it is always kept for the error of a script that
	// fails.
	ScriptOutput io.Writer
	// NoBackup skips saving /root first: for an environment whose home
	// holds nothing worth keeping, such as the one `labctl test` makes, or
	// a learner who chose to lose a /root too big to save (--no-backup).
	NoBackup bool
	// Situation is whose lab it is, which words the retry of a script
	// that fails (grading.ScriptError).
	Situation grading.Situation
	// InPlace restores the sandbox in place when the environment can
	// (Restorer) instead of recreating it: for labctl test, whose scripts
	// are the lab author's. A learner's reset recreates it always: root in
	// the sandbox can leave more behind than a restore in place looks at.
	// With To, it also goes back to the step's checkpoint when the
	// environment kept one and can (Checkpointer), instead of recreating
	// and replaying, and keeps one after a full reset.
	InPlace bool
	// Now is time.Now outside tests.
	Now func() time.Time
}

// Result is what a reset did.
type Result struct {
	// Backup is the path of the tar of the learner's /root.
	Backup string
	// Current is the step the learner is at now.
	Current *lab.Step
}

// Run resets the lab: it saves /root under <state>/backups/, recreates the
// sandbox and its volume and, at the same time, the lab's namespaces (or,
// Hard, the whole environment, cluster included), resets the progress,
// runs the first step's setup or, with To, replays every earlier step's setup and solve
// script in order before the setup of To. It stops at the first failure;
// nothing is destroyed before the backup is safely written.
func Run(ctx context.Context, env Environment, o Options) (res *Result, err error) {
	now := o.Now
	if now == nil {
		now = time.Now
	}
	st := o.Status
	if st == nil {
		st = silent{}
	}
	if len(o.Lab.Steps) == 0 {
		return nil, fmt.Errorf("lab %s has no steps", o.Lab.Metadata.Name)
	}
	target := 0
	if o.To != "" {
		if target = progress.Index(o.Lab, o.To); target < 0 {
			_, err := progress.Step(o.Lab, o.To)
			return nil, err
		}
	}
	stage := func(msg string, f func() error) error {
		st.Start(msg)
		if err := f(); err != nil {
			st.End(false)
			return err
		}
		st.End(true)
		return nil
	}
	res = &Result{}

	if !o.NoBackup {
		if err := stage(o.Catalog.Say(msg.StatusSavingHome), func() error {
			res.Backup, err = backup(ctx, env, filepath.Join(o.Store.Dir(), "backups"), now())
			return err
		}); err != nil {
			return nil, fmt.Errorf("saving /root before the reset (nothing was reset): %w", err)
		}
	}
	cp, checkpoints := env.(Checkpointer)
	checkpoints = checkpoints && o.InPlace && !o.Hard && o.To != ""
	restored := checkpoints && cp.RestoreCheckpoint(ctx, o.To)
	switch {
	case restored:
		// The step's start is back as it was kept: nothing to recreate,
		// nothing to replay.
	case o.Hard:
		if err := env.RecreateCluster(ctx); err != nil {
			return res, fmt.Errorf("recreating the lab's environment: %w", err)
		}
	default:
		if err := stage(o.Catalog.Say(msg.StatusRecreatingSandbox), func() error { return recreate(ctx, env, o.InPlace) }); err != nil {
			return res, err
		}
	}

	restart := func(p *progress.Progress) error {
		p.RestartAt(now())
		p.UpdatedAt = now().UTC()
		return nil
	}
	err = o.Store.Update(ctx, o.Lab.Metadata.Name, restart)
	var corrupt *progress.CorruptError
	if errors.As(err, &corrupt) {
		// reset is the documented way out of a corrupt progress file.
		p := progress.New(o.Lab.Metadata.Name)
		restart(p)
		err = o.Store.Replace(ctx, p)
	}
	if err != nil {
		return res, err
	}

	// A hard reset brought the lab up fresh, first step's setup included.
	var replay []script
	add := func(s *lab.Step, kind, text string) {
		if kind == "setup" && o.Hard && s == &o.Lab.Steps[0] {
			return
		}
		if strings.TrimSpace(text) != "" {
			replay = append(replay, script{step: s.ID, kind: kind, text: text})
		}
	}
	for i := 0; i < target; i++ {
		add(&o.Lab.Steps[i], "setup", o.Lab.Steps[i].Setup)
		add(&o.Lab.Steps[i], "solve", o.Lab.Steps[i].Solve)
	}
	cur := &o.Lab.Steps[target]
	add(cur, "setup", cur.Setup)
	retry := grading.Retry{Situation: o.Situation, During: grading.Reset, To: o.To}
	if !restored {
		if err := runScripts(ctx, env, replay, st, o.Catalog, o.ScriptOutput, retry); err != nil {
			return res, err
		}
		if checkpoints {
			cp.Checkpoint(ctx, o.To)
		}
	} else if o.Lab.Cluster.NodeAccess && strings.TrimSpace(cur.Setup) != "" {
		// A node keeps what was done there (its files, its kubelet), which
		// no kept start holds: the step's setup puts it back.
		if err := runScripts(ctx, env, []script{{step: cur.ID, kind: "setup", text: cur.Setup}}, st, o.Catalog, o.ScriptOutput, retry); err != nil {
			return res, err
		}
	}
	if o.To != "" {
		if err := o.Store.Update(ctx, o.Lab.Metadata.Name, func(p *progress.Progress) error {
			p.UpdatedAt = now().UTC()
			return p.StartAt(o.Lab, o.To, now())
		}); err != nil {
			return res, err
		}
	}
	if c, ok := env.(grading.Checker); ok {
		// Where the step's repositories are as it begins, for the checks
		// that count commits from there; if this fails, its first check
		// notes it (grading.EnsureStart).
		_ = grading.NoteStart(ctx, c, o.Store, o.Lab, cur)
	}
	res.Current = cur
	return res, nil
}

// recreate recreates the sandbox and resets the lab's namespaces at once:
// neither needs the other, and each mostly waits on Docker or Kubernetes.
// Both run to their end; every failure is returned. inPlace restores the
// sandbox in place when it can, and keeps a recreated one for next time.
func recreate(ctx context.Context, env Environment, inPlace bool) error {
	var (
		wg    sync.WaitGroup
		nsErr error
	)
	wg.Go(func() {
		if err := env.ResetNamespaces(ctx); err != nil {
			nsErr = fmt.Errorf("recreating the lab's namespaces: %w", err)
		}
	})
	var sbErr error
	r, canRestore := env.(Restorer)
	inPlace = inPlace && canRestore
	if inPlace && r.RestoreSandbox(ctx) {
		wg.Wait()
		return nsErr
	}
	if err := env.RecreateSandbox(ctx); err != nil {
		sbErr = fmt.Errorf("recreating the sandbox: %w", err)
	} else if inPlace {
		r.NotePristine(ctx)
	}
	wg.Wait()
	return errors.Join(sbErr, nsErr)
}

// script is a setup or solve script of a step.
type script struct{ step, kind, text string }

// runScripts runs the scripts in order, in one go, with a status line for
// each, and stops at the first that fails: a *grading.ScriptError with
// retry when it exits non-zero.
func runScripts(ctx context.Context, env Environment, scripts []script, st Status, c *msg.Catalog, out io.Writer, retry grading.Retry) error {
	if len(scripts) == 0 {
		return nil
	}
	texts := make([]string, len(scripts))
	for i, s := range scripts {
		texts[i] = s.text
	}
	// buf holds the output of the script running now, for its error.
	var buf bytes.Buffer
	w := io.Writer(&buf)
	if out != nil {
		w = io.MultiWriter(&buf, out)
	}
	running := -1
	started := func(i int) {
		if running >= 0 {
			st.End(true)
		}
		running = i
		buf.Reset()
		key := msg.StatusRunningSolveOf
		if scripts[i].kind == "setup" {
			key = msg.StatusRunningSetupOf
		}
		st.Start(c.Say(key, scripts[i].step))
	}
	failed, code, err := env.RunScripts(ctx, texts, w, w, started)
	if running >= 0 {
		st.End(err == nil && failed < 0)
	}
	switch {
	case err != nil && running >= 0:
		s := scripts[running]
		return fmt.Errorf("running the %s script of step %s: %w", s.kind, s.step, err)
	case err != nil:
		return fmt.Errorf("running the setup and solve scripts: %w", err)
	case failed >= 0:
		return &grading.ScriptError{Step: scripts[failed].step, Kind: scripts[failed].kind, Code: code,
			Output: grading.ScriptOutput(buf.String()), Retry: retry}
	}
	return nil
}

type silent struct{}

func (silent) Start(string) {}
func (silent) End(bool)     {}
