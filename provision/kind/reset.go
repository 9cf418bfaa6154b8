package kind

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/labctl/labctl/internal/msg"
	"github.com/labctl/labctl/internal/statusline"
	"github.com/labctl/labctl/provision"
	"github.com/labctl/labctl/provision/docker"
	"github.com/labctl/labctl/sandbox"
)

// RecreateSandbox replaces the sandbox container, its home volume and the
// grader container with new ones made with the same settings (the home
// empty).
func (k *kindRuntime) RecreateSandbox(ctx context.Context) error {
	name := k.lab.Metadata.Name
	spec, err := sandbox.BuildSpec(k.settings)
	if err != nil {
		return err
	}
	graderSpec, err := sandbox.BuildGraderSpec(k.settings)
	if err != nil {
		return err
	}
	// The grader mounts the home volume too: both go before the volume,
	// and both come back, at the same time.
	if err := both(ctx,
		func(ctx context.Context) error { return k.engine.Remove(ctx, k.container) },
		func(ctx context.Context) error { return k.engine.Remove(ctx, k.grader) }); err != nil {
		return err
	}
	vol := sandbox.VolumeName(name)
	if err := k.engine.RemoveVolume(ctx, vol); err != nil {
		return err
	}
	if _, err := k.engine.EnsureVolume(ctx, vol, sandbox.Labels(name, sandbox.RoleHome)); err != nil {
		return err
	}
	return both(ctx,
		func(ctx context.Context) error { _, err := k.engine.EnsureSandbox(ctx, spec); return err },
		func(ctx context.Context) error { _, err := k.engine.EnsureSandbox(ctx, graderSpec); return err })
}

// copyHome streams /root of container out as a tar (entries root/...).
func copyHome(ctx context.Context, engine *docker.Engine, container string, w io.Writer) error {
	rc, err := engine.CopyOut(ctx, container, "/root")
	if err != nil {
		return err
	}
	defer rc.Close()
	if _, err := io.Copy(w, rc); err != nil {
		return fmt.Errorf("copying /root out of %s: %w", container, err)
	}
	return nil
}

// RecreateCluster takes the whole lab down and brings it up fresh, with
// the options it was brought up with (Up's, or WithUpOptions) and the first
// step's setup. It prints its progress on those options' status lines.
func (k *kindRuntime) RecreateCluster(ctx context.Context) (*provision.Live, error) {
	up := k.up
	up.Lab = k.lab
	up.CurrentStep = ""
	st := up.Status
	if st == nil {
		st = statusline.Discard()
	}
	st.Start(up.Catalog.Say(msg.StatusRemovingCluster))
	if err := Down(ctx, k.lab); err != nil {
		st.End(false)
		return nil, err
	}
	st.End(true)
	fresh, err := Up(ctx, up)
	if err != nil {
		return nil, err
	}
	k.engine.Close()
	return fresh, nil
}

// both runs f and g at the same time and returns their errors joined.
func both(ctx context.Context, f, g func(context.Context) error) error {
	errc := make(chan error, 1)
	go func() { errc <- g(ctx) }()
	err := f(ctx)
	return errors.Join(err, <-errc)
}

// pristineHomeLimit bounds the copy of a fresh /root kept for
// RestoreSandbox; a bigger home is never restored in place.
const pristineHomeLimit = 16 << 20

// pristine is the sandbox as RecreateSandbox and the learner's kubeconfig
// left it, kept for RestoreSandbox.
type pristine struct {
	// id is the container it was taken of.
	id string
	// since is the time, in whole seconds inside the sandbox, from which
	// a change of its filesystem counts: a second or two before it was
	// kept, so that the kernel's coarse file times cannot fall before it.
	since string
	// state is what sandboxState printed then.
	state string
	// home is /root as a tar (entries root/...).
	home []byte
	// audit is the audit log of the learner's writes as KeepSandbox
	// found it ("" for NotePristine's, which does not look).
	audit string
}

// sandboxState prints what a restore in place must find as the fresh
// sandbox had it: how many processes there are besides init and this shell
// (the container's own sleep and the command substitution that runs this
// when nothing was left running), the files Docker mounts over /etc, what
// /dev/shm holds, the System V IPC objects, what / holds, and every file
// or directory of the container's own filesystem whose inode changed since
// $LABCTL_SINCE, with its change time. A change time is the kernel's to set
// (no capability of the sandbox's changes it), and writing, adding,
// removing or renaming a file, or changing its mode or owner, changes it
// or its directory's. / itself and the files Docker mounts over /etc are
// left out of that: Docker's own exec and copy change theirs. So is /tmp,
// empty in a fresh sandbox, which a restore empties (kubectl diff makes
// and removes its directories there); its mode and owner count.
const sandboxState = `state() {
	n=0
	for p in /proc/[0-9]*; do
		pid=${p#/proc/}
		if [ "$pid" = 1 ] || [ "$pid" = $$ ]; then continue; fi
		n=$((n+1))
	done
	echo "processes $n"
	cksum /etc/hosts /etc/resolv.conf /etc/hostname
	ls -A /dev/shm
	cat /proc/sysvipc/shm /proc/sysvipc/sem /proc/sysvipc/msg
	ls -A /
	stat -c '%a %u %g' / /tmp
	find / -xdev -mindepth 1 \( -path /root -o -path /tmp -o -path /etc/hosts -o -path /etc/hostname -o -path /etc/resolv.conf \) -prune \
		-o -newerct "@$LABCTL_SINCE" -printf '%C@ %p\n'
}
`

// notePristine prints the time changes count from and the state then; it
// fails when /tmp is not empty, as a restore would leave it.
const notePristine = sandboxState + `[ -z "$(ls -A /tmp)" ] || exit 1
LABCTL_SINCE=$(($(date +%s) - 1))
echo "$LABCTL_SINCE"
now=$(state) || exit 1
printf '%s\n' "$now"
`

// restorePristine empties /tmp and restores /root from the tar on stdin
// when the sandbox's state is still $LABCTL_PRISTINE, and exits 3,
// touching nothing, when it is not.
const restorePristine = sandboxState + `now=$(state) || exit 1
if [ "$now" != "$LABCTL_PRISTINE" ]; then exit 3; fi
find /root /tmp -mindepth 1 -delete && tar -x -p -f - -C /
`

// NotePristine keeps the sandbox as it is now, just made, for
// RestoreSandbox; a sandbox it cannot keep is simply recreated next time.
func (k *kindRuntime) NotePristine(ctx context.Context) { k.pristine = k.keep(ctx) }

// RestoreSandbox puts the sandbox back as NotePristine kept it without
// recreating it: /root emptied and unpacked again. It does so only when the
// container is the same one and its state (sandboxState) is as it was,
// and reports whether it did; when it did not, RecreateSandbox must follow
// (a restore that fails halfway leaves the home unusable).
func (k *kindRuntime) RestoreSandbox(ctx context.Context) bool { return k.restore(ctx, k.pristine) }

// KeepSandbox keeps the sandbox as it is now under key, as NotePristine
// keeps a fresh one, for RestoreKeptSandbox; a sandbox it cannot keep (a
// process left running, /tmp not empty, a big /root) forgets what key held.
func (k *kindRuntime) KeepSandbox(ctx context.Context, key string) {
	if k.kept == nil {
		k.kept = map[string]*pristine{}
	}
	audit := k.auditLog()
	if p := k.keep(ctx); p != nil {
		p.audit = audit
		k.kept[key] = p
	} else {
		delete(k.kept, key)
	}
}

// RestoreKeptSandbox puts the sandbox back as KeepSandbox kept it under
// key, on RestoreSandbox's conditions, only when the learner's identity
// wrote nothing in the lab's namespaces since (the audit log is as it was)
// and then unchanged holds, and reports whether it did.
func (k *kindRuntime) RestoreKeptSandbox(ctx context.Context, key string, unchanged func() bool) bool {
	p := k.kept[key]
	if p == nil || k.auditLog() != p.audit || !unchanged() {
		return false
	}
	return k.restore(ctx, p)
}

// HasKept says whether KeepSandbox could keep the sandbox under key.
func (k *kindRuntime) HasKept(key string) bool { return k.kept[key] != nil }

// RestoreKept puts the sandbox back as KeepSandbox kept it under key, on
// RestoreSandbox's conditions alone, and reports whether it did: labctl
// test's in-place undo of a case, which judges the lab's namespaces and
// the learner's writes itself.
func (k *kindRuntime) RestoreKept(ctx context.Context, key string) bool {
	return k.restore(ctx, k.kept[key])
}

// auditLog says where the API server's log of the learner's writes stands:
// its file's identity, size and time, or that there is none yet. The
// policy records nothing else (provision.AuditPolicy), so it changes with
// every write of the learner's identity in the lab's namespaces, a status
// or a subresource too.
func (k *kindRuntime) auditLog() string {
	if k.settings.AuditDir == "" {
		return "no audit directory"
	}
	fi, err := os.Stat(filepath.Join(k.settings.AuditDir, provision.AuditLogFile))
	if err != nil {
		return "no log: " + err.Error()
	}
	id := ""
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		id = fmt.Sprintf("%d:%d", st.Dev, st.Ino)
	}
	return fmt.Sprintf("%s %d %d", id, fi.Size(), fi.ModTime().UnixNano())
}

// keep takes the sandbox's state and /root as they are now; nil when the
// sandbox cannot be kept.
func (k *kindRuntime) keep(ctx context.Context) *pristine {
	st, err := k.engine.State(ctx, k.container)
	if err != nil || !st.Running {
		return nil
	}
	var out bytes.Buffer
	code, err := k.engine.Exec(ctx, k.container, docker.ExecOptions{
		Cmd: []string{"sh", "-c", notePristine}, Stdout: &limitedWriter{w: &out, left: 1 << 20}, Stderr: io.Discard,
	})
	since, state, ok := strings.Cut(out.String(), "\n")
	if err != nil || code != 0 || !ok || !strings.HasPrefix(state, "processes 2\n") {
		return nil
	}
	var home bytes.Buffer
	if err := copyHome(ctx, k.engine, k.container, &limitedWriter{w: &home, left: pristineHomeLimit}); err != nil {
		return nil
	}
	return &pristine{id: st.ID, since: since, state: strings.TrimSuffix(state, "\n"), home: home.Bytes()}
}

// restore puts p back when the sandbox is still p's container in p's state.
func (k *kindRuntime) restore(ctx context.Context, p *pristine) bool {
	if p == nil {
		return false
	}
	st, err := k.engine.State(ctx, k.container)
	if err != nil || st.ID != p.id || !st.Running {
		return false
	}
	code, err := k.engine.Exec(ctx, k.container, docker.ExecOptions{
		Cmd: []string{"sh", "-c", restorePristine}, Env: []string{"LABCTL_SINCE=" + p.since, "LABCTL_PRISTINE=" + p.state},
		Stdin: bytes.NewReader(p.home), Stdout: io.Discard, Stderr: io.Discard,
	})
	return err == nil && code == 0
}

// limitedWriter fails once more than left bytes were written.
type limitedWriter struct {
	w    io.Writer
	left int
}

func (l *limitedWriter) Write(b []byte) (int, error) {
	if len(b) > l.left {
		return 0, errors.New("too much to keep")
	}
	l.left -= len(b)
	return l.w.Write(b)
}
