//go:build e2e

package grading_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"maps"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/labctl/labctl/checks"
	"github.com/labctl/labctl/cmd/labctl/e2etest"
	"github.com/labctl/labctl/lab"
	"github.com/labctl/labctl/provision/docker"

	"github.com/labctl/labctl/provision"
	"github.com/labctl/labctl/sandbox"
)

// tamperLabName keeps this test's cluster, sandbox and volume apart from
// every other lab's.
const tamperLabName = "tamper-e2e"

// tamperHookLog is where the BASH_ENV / ENV hook records each shell that
// sourced it, outside anything a check reads.
const tamperHookLog = "/var/tmp/labctl-tamper-hook.log"

// tamperScript makes the sandbox lie to anything that trusts its tools,
// files or environment, as a learner who is root there could.
const tamperScript = `set -euo pipefail
cat > /usr/local/lib/tamper-hook.sh <<'HOOK'
echo "$$ $0 ${BASH_EXECUTION_STRING:-}" >> ` + tamperHookLog + `
printf '{"results":[{"name":"report-commit","status":"pass"}]}\n' > /tmp/forged-results.json
echo 'deployment.apps/web unchanged' > /tmp/forged-apply.txt
HOOK
chmod 755 /usr/local/lib/tamper-hook.sh
printf 'export BASH_ENV=/usr/local/lib/tamper-hook.sh ENV=/usr/local/lib/tamper-hook.sh\n' >> /etc/profile
printf 'export BASH_ENV=/usr/local/lib/tamper-hook.sh ENV=/usr/local/lib/tamper-hook.sh\n' >> /root/.bashrc

cat > /usr/local/bin/git.fake <<'GIT'
#!/bin/sh
case " $* " in
*" rev-parse "*) cat /var/tmp/fake-head 2>/dev/null || echo 0123456789abcdef0123456789abcdef01234567 ;;
*" status "*) ;;
*" config "*) echo "Lab Learner" ;;
*" log "*) echo "0123456 Scale web to 3 replicas" ;;
*) echo "Everything up-to-date" ;;
esac
exit 0
GIT
chmod 755 /usr/local/bin/git.fake
mv /usr/local/bin/git.fake /usr/local/bin/git

cat > /usr/local/bin/kubectl.fake <<'KUBECTL'
#!/bin/sh
case " $* " in
*" jsonpath"*) echo 3 ;;
*" get "*) printf 'NAME   READY   UP-TO-DATE   AVAILABLE   AGE\nweb    3/3     3            3            5m\n' ;;
*" apply "*) printf 'deployment.apps/web unchanged\nservice/web unchanged\n' ;;
esac
exit 0
KUBECTL
chmod 755 /usr/local/bin/kubectl.fake
mv /usr/local/bin/kubectl.fake /usr/local/bin/kubectl

printf '#!/bin/sh\nexit 0\n' > /usr/bin/git.fake
chmod 755 /usr/bin/git.fake
mv /usr/bin/git.fake /usr/bin/git

mkdir -p /root/.kube
cat > /root/.kube/config <<'KUBE'
apiVersion: v1
kind: Config
clusters:
- name: fake
  cluster: {server: "https://127.0.0.1:1", insecure-skip-tls-verify: true}
users:
- name: fake
  user: {token: forged}
contexts:
- name: fake
  context: {cluster: fake, user: fake, namespace: gitops-lab}
current-context: fake
KUBE

cat > /root/.gitconfig <<'GITCONFIG'
[user]
	name = Forged Name
	email = forged@example.invalid
[safe]
	directory = *
GITCONFIG

echo /usr/lib/libtamper-forged.so > /etc/ld.so.preload
`

// forgeScript plants forged checker binaries and results where a careless
// grader might pick them up.
const forgeScript = `set -euo pipefail
forged='{"results":[{"name":"report-commit","status":"pass"},{"name":"cluster-replicas","status":"pass"},{"name":"cluster-matches-repo","status":"pass"}]}'
printf '#!/bin/sh\ncat >/dev/null\necho '"'"'%s'"'"'\n' "$forged" > /usr/local/bin/labctl
chmod 755 /usr/local/bin/labctl
mkdir -p /run/labctl-check-forged
cp /usr/local/bin/labctl /run/labctl-check-forged/labctl
for f in /run/labctl-check-forged/results.json /root/results.json /tmp/results.json /root/gitops/out/results.json; do
  printf '%s\n' "$forged" > "$f"
done
`

// gradeReport is the part of `labctl grade -o json` this test reads.
type gradeReport struct {
	Score    int  `json:"score"`
	MaxScore int  `json:"maxScore"`
	Passed   bool `json:"passed"`
	Steps    []struct {
		ID     string `json:"id"`
		Passed bool   `json:"passed"`
		Checks []struct {
			Name    string `json:"name"`
			Status  string `json:"status"`
			Message string `json:"message"`
		} `json:"checks"`
	} `json:"steps"`
}

// statuses maps "step/check" to each check's status.
func (g gradeReport) statuses() map[string]string {
	m := map[string]string{}
	for _, s := range g.Steps {
		for _, c := range s.Checks {
			m[s.ID+"/"+c.Name] = c.Status
		}
	}
	return m
}

func (r *labctlRun) grade(ctx context.Context) (int, gradeReport) {
	r.T.Helper()
	code, out, _ := r.Run(ctx, "grade", "-o", "json")
	return code, r.parseGrade(code, out)
}

func (r *labctlRun) parseGrade(code int, out string) gradeReport {
	r.T.Helper()
	var g gradeReport
	if err := json.Unmarshal([]byte(out), &g); err != nil {
		r.T.Fatalf("grade -o json (exit %d) is not a report: %v", code, err)
	}
	return g
}

// gradeUnhooked grades and fails the test when grading started any shell
// that sourced the learner's BASH_ENV/ENV hook, but for the learner's own
// sync script, which the last step's probe runs in the learner's
// environment on purpose.
func (r *labctlRun) gradeUnhooked(ctx context.Context, box string) (int, gradeReport) {
	r.T.Helper()
	before := hookRuns(ctx, r.T, box)
	code, g := r.grade(ctx)
	if n := hookRuns(ctx, r.T, box); n != before {
		r.T.Errorf("grading started %d shell(s) that sourced the learner's BASH_ENV/ENV hook:\n%s",
			n-before, sandboxExec(ctx, r.T, box, "cat", tamperHookLog))
	}
	return code, g
}

// probeRun is what the GitOps lab's last step runs in the sandbox, as the
// learner, to see what it does.
const probeRun = "/root/gitops/sync.sh"

// probeDependent are the checks that judge what the learner's own sync
// script did when the probe ran it: with the learner's tools replaced by
// liars, the script really does nothing, and they fail.
var probeDependent = []string{"sync-script/web-synced", "sync-script/diffed-by-script", "sync-script/applied-by-script", "sync-script/report-commit"}

// sandboxExec runs argv in the sandbox through Docker alone, without any
// shell the learner could have hooked, and returns its stdout.
func sandboxExec(ctx context.Context, t *testing.T, container string, argv ...string) string {
	t.Helper()
	var out, errOut bytes.Buffer
	cmd := exec.CommandContext(ctx, "docker", append([]string{"exec", container}, argv...)...)
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		t.Fatalf("docker exec %s %v: %v\n%s", container, argv, err, errOut.String())
	}
	return out.String()
}

// hookRuns counts the shells that sourced the hook, but those of the
// probe's run of the learner's script. The hook starts each record with
// its shell's PID; other lines (a multi-line command's rest, or a forged
// line the process hijacker writes into the output of the cat reading the
// log) are not shells.
func hookRuns(ctx context.Context, t *testing.T, container string) int {
	t.Helper()
	out := sandboxExec(ctx, t, container, "sh", "-c", "cat "+tamperHookLog+" 2>/dev/null || true")
	n := 0
	for _, line := range strings.Split(out, "\n") {
		if hookRecord.MatchString(line) && !strings.Contains(line, probeRun) {
			n++
		}
	}
	return n
}

// hookRecord is the start of a line the hook writes: "PID $0 ...".
var hookRecord = regexp.MustCompile(`^[0-9]+ (-?bash|sh|/)`)

// TestE2ETamper shows that a learner who is root in the sandbox cannot
// fool the grade: lying tools, a hostile shell environment, a fake
// kubeconfig, a forged git identity and a bogus preload change nothing;
// real mistakes hidden behind those lies are still failures; forged
// checker binaries or results planted in the sandbox are never used; and a
// learner process that hijacks every new process in the sandbox neither
// meets the checker nor changes the grade.
func TestE2ETamper(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	dir := t.TempDir()
	bin := e2etest.BuildLabctl(t)
	labFile, l := e2etest.CopyLab(t, dir, tamperLabName)
	if l.Metadata.Name != tamperLabName {
		t.Fatalf("lab name %q, want %q", l.Metadata.Name, tamperLabName)
	}
	box := sandbox.ContainerName(tamperLabName)
	controlPlane := provision.ClusterName(tamperLabName) + "-control-plane"
	r := &labctlRun{e2etest.NewLabctl(t, bin, labFile, filepath.Join(dir, "state"), "LANG=C.UTF-8", "LC_ALL=", "LC_MESSAGES=")}

	r.UpFresh(ctx)

	// 1. The honest solution scores 100 %.
	for _, s := range l.Steps {
		if code, _, _ := r.Run(ctx, "exec", "--", "bash", "-l", "-c", s.Solve); code != 0 {
			t.Fatalf("the solve script of %s exited %d", s.ID, code)
		}
	}
	_, out, _ := r.Run(ctx, "exec", "--", "git", "-C", "/root/gitops/repo", "rev-parse", "HEAD")
	head := strings.TrimSpace(out)
	if !regexp.MustCompile(`^[0-9a-f]{40}$`).MatchString(head) {
		t.Fatalf("HEAD of the learner's repository: %q, want a full hash", head)
	}
	short := head[:7]
	code, honest := r.grade(ctx)
	if code != 0 || !honest.Passed || honest.MaxScore == 0 || honest.Score != honest.MaxScore {
		t.Fatalf("honest grade: exit %d, passed %v, score %d/%d", code, honest.Passed, honest.Score, honest.MaxScore)
	}
	all := honest.statuses()
	for _, s := range l.Steps {
		for _, c := range s.Checks {
			if all[s.ID+"/"+c.Name] != "pass" {
				t.Fatalf("honest grade: %s/%s is %q, want pass", s.ID, c.Name, all[s.ID+"/"+c.Name])
			}
		}
	}

	// 2. Lying tools and a hostile environment change nothing.
	if code, _, _ := r.Run(ctx, "exec", "--", "bash", "-l", "-c", tamperScript); code != 0 {
		t.Fatalf("tampering exited %d", code)
	}
	// The lies are in place: the learner's own tools now see a different world.
	if _, out, _ := r.Run(ctx, "exec", "--", "git", "-C", "/root/gitops/repo", "config", "user.name"); strings.TrimSpace(out) != "Lab Learner" {
		t.Fatalf("the fake git is not first on PATH: it printed %q", out)
	}
	if got := sandboxExec(ctx, t, box, "/usr/bin/git", "--version"); got != "" {
		t.Fatalf("/usr/bin/git was not replaced: it printed %q", got)
	}
	if got := sandboxExec(ctx, t, box, "sh", "-c", "cat /etc/ld.so.preload"); !strings.Contains(got, "libtamper-forged.so") {
		t.Fatalf("/etc/ld.so.preload: %q", got)
	}
	// The shell hook runs for every non-interactive bash the learner's
	// environment starts, so it would catch a grader that used one.
	before := hookRuns(ctx, t, box)
	if code, _, _ := r.Run(ctx, "exec", "--", "bash", "-c", "true"); code != 0 {
		t.Fatalf("bash -c true in the tampered sandbox exited %d", code)
	}
	armed := hookRuns(ctx, t, box)
	if armed <= before {
		t.Fatalf("the BASH_ENV hook did not run for a bash started in the sandbox (%d runs before, %d after)", before, armed)
	}
	// Only what the learner's own script does when the probe runs it
	// changes: it now runs the learner's lying tools.
	tamperedWant := maps.Clone(all)
	for _, k := range probeDependent {
		if _, ok := tamperedWant[k]; !ok {
			t.Fatalf("the lab has no check %s", k)
		}
		tamperedWant[k] = "fail"
	}
	code, tampered := r.gradeUnhooked(ctx, box)
	if code != 1 || tampered.Passed || tampered.Score != honest.Score-len(probeDependent) || tampered.MaxScore != honest.MaxScore {
		t.Errorf("grade after tampering: exit %d, passed %v, score %d/%d; want exit 1 and %d/%d",
			code, tampered.Passed, tampered.Score, tampered.MaxScore, honest.Score-len(probeDependent), honest.MaxScore)
	}
	if got := tampered.statuses(); !maps.Equal(got, tamperedWant) {
		t.Errorf("check statuses after tampering:\n%v\nwant\n%v", got, tamperedWant)
	}

	// 3. Real mistakes behind the lies are still failures.
	scale := exec.CommandContext(ctx, "docker", "exec", controlPlane, "kubectl", "--kubeconfig", "/etc/kubernetes/admin.conf",
		"-n", "gitops-lab", "scale", "deploy", "web", "--replicas=5")
	if out, err := scale.CombinedOutput(); err != nil {
		t.Fatalf("scaling web from the host: %v\n%s", err, out)
	}
	lie := "set -euo pipefail\necho " + short + " > /var/tmp/fake-head\n" +
		`printf '{"repo_commit": "%s", "drift": false, "applied": 2}\n' "$(git -C /root/gitops/repo rev-parse HEAD)" > /root/gitops/out/sync-report.json` + "\n"
	if code, _, _ := r.Run(ctx, "exec", "--", "bash", "-l", "-c", lie); code != 0 {
		t.Fatalf("writing the short-hash report exited %d", code)
	}
	if got := sandboxExec(ctx, t, box, "cat", "/root/gitops/out/sync-report.json"); !strings.Contains(got, `"`+short+`"`) {
		t.Fatalf("sync-report.json: %q, want the short hash %s", got, short)
	}
	// The learner's tools hide both mistakes.
	if _, out, _ := r.Run(ctx, "exec", "--", "git", "-C", "/root/gitops/repo", "rev-parse", "HEAD"); strings.TrimSpace(out) != short {
		t.Fatalf("the fake git printed %q for rev-parse, want %s", out, short)
	}
	if _, out, _ := r.Run(ctx, "exec", "--", "kubectl", "get", "deploy", "web", "-n", "gitops-lab", "-o", "jsonpath={.spec.replicas}"); strings.TrimSpace(out) != "3" {
		t.Fatalf("the fake kubectl printed %q, want its lie 3", out)
	}
	replicas := exec.CommandContext(ctx, "docker", "exec", controlPlane, "kubectl", "--kubeconfig", "/etc/kubernetes/admin.conf",
		"-n", "gitops-lab", "get", "deploy", "web", "-o", "jsonpath={.spec.replicas}")
	if out, err := replicas.Output(); err != nil || strings.TrimSpace(string(out)) != "5" {
		t.Fatalf("web's replicas seen with the admin credentials: %q, %v; want 5", out, err)
	}

	// The learner's lying tools still run inside the probe, so every check
	// that depends on it fails as in part 2, and the cluster's real state
	// fails five more: every check that compares web with the repository.
	wantFail := append([]string{
		"apply/deployment-as-repo",
		"change-via-commit/cluster-replicas",
		"change-via-commit/cluster-matches-repo",
		"revert/cluster-replicas",
		"revert/cluster-matches-repo",
	}, probeDependent...)
	want := maps.Clone(all)
	for _, k := range wantFail {
		if _, ok := want[k]; !ok {
			t.Fatalf("the lab has no check %s", k)
		}
		want[k] = "fail"
	}
	code, wrong := r.gradeUnhooked(ctx, box)
	if code != 1 || wrong.Passed {
		t.Errorf("grade with hidden mistakes: exit %d, passed %v; want exit 1, not passed", code, wrong.Passed)
	}
	got := wrong.statuses()
	if !maps.Equal(got, want) {
		t.Errorf("check statuses with hidden mistakes:\n%v\nwant every check to pass except %v, which fail", got, wantFail)
	}
	if wrong.Score != honest.Score-len(wantFail) {
		t.Errorf("score with hidden mistakes %d/%d, want %d", wrong.Score, wrong.MaxScore, honest.Score-len(wantFail))
	}
	for _, s := range wrong.Steps {
		for _, c := range s.Checks {
			if s.ID+"/"+c.Name == "sync-script/report-commit" && !strings.Contains(c.Message, head) {
				t.Errorf("report-commit's message %q does not name the real HEAD %s", c.Message, head)
			}
		}
	}
	failedSteps := []string{}
	for _, s := range wrong.Steps {
		if !s.Passed {
			failedSteps = append(failedSteps, s.ID)
		}
	}
	if wantSteps := []string{"apply", "change-via-commit", "revert", "sync-script"}; !slices.Equal(failedSteps, wantSteps) {
		t.Errorf("failed steps %v, want %v", failedSteps, wantSteps)
	}

	// 4. Forged checkers and results in the sandbox are never used.
	if code, _, _ := r.Run(ctx, "exec", "--", "bash", "-l", "-c", forgeScript); code != 0 {
		t.Fatalf("planting forgeries exited %d", code)
	}
	if got := sandboxExec(ctx, t, box, "/usr/local/bin/labctl"); !strings.Contains(got, `"status":"pass"`) {
		t.Fatalf("the forged labctl printed %q", got)
	}
	code, forged := r.gradeUnhooked(ctx, box)
	if code != 1 || forged.Passed || forged.Score != wrong.Score || forged.MaxScore != wrong.MaxScore {
		t.Errorf("grade with forgeries: exit %d, passed %v, score %d/%d; want exit 1, not passed, %d/%d",
			code, forged.Passed, forged.Score, forged.MaxScore, wrong.Score, wrong.MaxScore)
	}
	if got := forged.statuses(); !maps.Equal(got, want) {
		t.Errorf("check statuses with forgeries:\n%v\nwant\n%v", got, want)
	}

	// 5. A learner process that stops every new process in the sandbox and
	// reads and rewrites its pipes through /proc never meets the checker: it
	// runs in the grader container, in a PID namespace of its own. The
	// hijacker is shown to work on a process that does run in the sandbox.
	t.Run("process hijacker", func(t *testing.T) {
		rr := r.with(t)
		if code, _, _ := rr.Run(ctx, "exec", "--", "bash", "-l", "-c", hijackScript); code != 0 {
			t.Fatalf("starting the hijacker exited %d", code)
		}
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			_ = exec.CommandContext(ctx, "docker", "exec", box, "sh", "-c", "kill $(cat /var/tmp/hijack.pid)").Run()
		})
		// The hijacker works: a process started in the sandbox is stopped,
		// and a forged answer is written into what it prints.
		_, probe, _ := rr.Run(ctx, "exec", "--", "sh", "-c", "sleep 1; echo probe-says-fail")
		code, hijacked := rr.gradeUnhooked(ctx, box)
		// The hijacker rewrites the output of every process, the test's own
		// reads included: stop it before reading what it did.
		sandboxExec(ctx, t, box, "sh", "-c", "kill $(cat /var/tmp/hijack.pid); sleep 0.2")
		log := sandboxExec(ctx, t, box, "sh", "-c", "cat /var/tmp/hijack.log 2>/dev/null || true")
		stolen := sandboxExec(ctx, t, box, "sh", "-c", "cat /var/tmp/stolen-* 2>/dev/null | head -c 400 || true")
		if !strings.Contains(log, "stopped") || !strings.Contains(probe, `{"results":[{"name":"x","status":"pass"}]}`) || !strings.Contains(probe, "probe-says-fail") {
			t.Errorf("the hijacker never caught the probe, so this proves nothing; probe printed %q, its log:\n%s", probe, log)
		}
		// The hijacker may break the learner's own sync script when the
		// probe runs it (it writes into that script's output files too):
		// the last step may only get worse. Every other check is as before.
		if code != 1 || hijacked.Passed || hijacked.Score > wrong.Score {
			t.Errorf("grade while a learner process hijacks every new process: exit %d, passed %v, score %d/%d; want exit 1, not passed, at most %d/%d\nhijacker log:\n%s",
				code, hijacked.Passed, hijacked.Score, hijacked.MaxScore, wrong.Score, wrong.MaxScore, log)
		}
		for k, st := range hijacked.statuses() {
			if strings.HasPrefix(k, "sync-script/") {
				if want[k] == "fail" && st == "pass" {
					t.Errorf("%s passes while the hijacker runs; it failed without it", k)
				}
				continue
			}
			if st != want[k] {
				t.Errorf("%s is %q while the hijacker runs, want %q", k, st, want[k])
			}
		}
		if strings.Contains(log, "labctl-check-") || strings.Contains(log, "__check") || strings.Contains(log, sandbox.CheckerMount+"/") {
			t.Errorf("the hijacker saw the checker:\n%s", log)
		}
		if strings.Contains(stolen, "token") || strings.Contains(stolen, `"kube"`) {
			t.Errorf("the learner captured the grader's check request, credentials included: %q…", stolen)
		}
		if got := sandboxExec(ctx, t, box, "sh", "-c", "test -e "+sandbox.CheckerMount+" && echo present || echo absent"); strings.TrimSpace(got) != "absent" {
			t.Errorf("the sandbox has the checker's mount %s", sandbox.CheckerMount)
		}
	})

	// 6. A command check, the lab's, cannot leave the grader's mounts by a
	// file handle, and the learner's .pth file and git configuration run
	// nothing in it.
	t.Run("command checks", func(t *testing.T) {
		commandChecksInTheGrader(ctx, t, bin, box)
	})
}

// handleScript tries what a command check would do to leave the grader's
// mounts: a handle of /root's file system (name_to_handle_at), then a
// forged handle of that file system's root directory (open_by_handle_at,
// the inode 2 of ext2/3/4). It exits 0 only if a file opened.
const handleScript = `import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
class Handle(ctypes.Structure):
    _fields_ = [("size", ctypes.c_uint), ("type", ctypes.c_int), ("data", ctypes.c_ubyte * 128)]
h, mnt = Handle(size=128), ctypes.c_int()
if libc.name_to_handle_at(-100, b"/root", ctypes.byref(h), ctypes.byref(mnt), 0) != 0:
    print("name_to_handle_at:", os.strerror(ctypes.get_errno()))
    h = Handle(size=8, type=1)
    h.data[0] = 2
fd = libc.open_by_handle_at(os.open("/root", os.O_RDONLY), ctypes.byref(h), os.O_RDONLY)
if fd < 0:
    print("open_by_handle_at:", os.strerror(ctypes.get_errno()))
    sys.exit(1)
print("opened", os.listdir("/proc/self/fd/%d" % fd)[:5])
`

// learnerHooksScript leaves, in the learner's home and repository, what
// ran as root in the grader when a command check ran python3 or git: a .pth
// file of the user's site directory that makes every python3 exit 0, and an
// fsmonitor command in ~/.gitconfig and the repository's .git/config.
const learnerHooksScript = `set -eu
site=$(HOME=/root python3 -c 'import site; print(site.getusersitepackages())')
mkdir -p "$site"
echo 'import os; os._exit(0)' > "$site/flip.pth"
printf '[core]\n\tfsmonitor = "touch /tmp/labctl-hook-ran; false"\n' >> /root/.gitconfig
printf '[core]\n\tfsmonitor = "touch /tmp/labctl-hook-ran; false"\n' >> /root/gitops/repo/.git/config
mkdir -p /root/locked
echo locked-secret > /root/locked/f
chmod 000 /root/locked/f /root/locked
`

// commandChecksInTheGrader runs a round of command checks in the grader
// container as labctl does: the grader's policy holds against them.
func commandChecksInTheGrader(ctx context.Context, t *testing.T, bin string, box string) {
	t.Helper()
	if out := sandboxExec(ctx, t, box, "sh", "-c", learnerHooksScript+"echo planted"); !strings.Contains(out, "planted") {
		t.Fatalf("planting the learner's hooks: %q", out)
	}
	cs := []lab.Check{
		{Name: "file-handles", Command: &lab.CommandCheck{Run: []string{"python3", "-c", handleScript}}},
		{Name: "python-fails", Command: &lab.CommandCheck{Run: []string{"python3", "-c", "import sys; sys.exit(3)"}}},
		{Name: "git-hooks", Command: &lab.CommandCheck{Run: []string{"sh", "-c",
			"git -C /root/gitops/repo status >/dev/null 2>&1; cd /root/gitops/repo && git status >/dev/null 2>&1; test ! -e /tmp/labctl-hook-ran"}}},
		{Name: "locked-by-command", Command: &lab.CommandCheck{Run: []string{"cat", "/root/locked/f"}, Stdout: `^locked-secret$`}},
		{Name: "locked-by-checker", File: &lab.FileCheck{Path: "/root/locked/f", Contains: []string{"locked-secret"}}},
	}
	e, err := docker.NewEngine(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	rs, err := provision.RunChecker(ctx, checks.Request{Root: "/", Checks: cs}, func(ctx context.Context, in io.Reader, out, errOut io.Writer) (int, error) {
		return e.ExecChecker(ctx, sandbox.GraderName(tamperLabName), bin, []string{"__check"}, in, out, errOut)
	})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]checks.Result{}
	for _, r := range rs {
		got[r.Name] = r
	}
	if r := got["file-handles"]; r.Status != checks.Fail || !strings.Contains(r.Message, "open_by_handle_at: Operation not permitted") {
		t.Errorf("a command check opening a file by a forged handle: %s %q, want a fail refused with EPERM", r.Status, r.Message)
	}
	if r := got["python-fails"]; r.Status != checks.Fail {
		t.Errorf("python3 exiting 3 with a .pth file in the learner's home: %s %q, want a fail", r.Status, r.Message)
	}
	// DAC_OVERRIDE alone reads a file and searches a directory of mode 000,
	// for the checker and for a command's user.
	for _, name := range []string{"locked-by-command", "locked-by-checker"} {
		if r := got[name]; r.Status != checks.Pass {
			t.Errorf("%s: a file of mode 000 in a directory of mode 000: %s %q, want it read", name, r.Status, r.Message)
		}
	}
	if r := got["git-hooks"]; r.Status != checks.Pass {
		t.Errorf("git in the learner's repository ran an fsmonitor of theirs in the grader: %s %q", r.Status, r.Message)
	}
}

// hijackScript starts, detached, a learner process that watches /proc for
// every new process in the sandbox, stops it with SIGSTOP, logs its command
// line, saves whatever it can read of its stdin, writes a forged all-pass
// answer into its stdout, and lets it go on: the attack that forged a full
// grade while the checker ran in the sandbox. It needs only the sandbox's
// perl.
const hijackScript = `set -euo pipefail
cat > /var/tmp/hijack.pl <<'HIJACK'
use POSIX ();
open(my $log, '>>', '/var/tmp/hijack.log') or die;
select((select($log), $| = 1)[0]);
my %seen = ($$ => 1, getppid() => 1);
my $forged = '{"results":[{"name":"x","status":"pass"}]}' . "\n";
while (1) {
  opendir(my $dh, '/proc') or die;
  for my $pid (grep { /^\d+$/ } readdir($dh)) {
    next if $seen{$pid}++;
    kill('STOP', $pid) or next;
    my $cmd = '';
    if (open(my $c, '<', "/proc/$pid/cmdline")) { local $/; $cmd = <$c> // ''; $cmd =~ s/\0/ /g; }
    print $log "stopped $pid $cmd\n";
    if (sysopen(my $in, "/proc/$pid/fd/0", POSIX::O_RDONLY | POSIX::O_NONBLOCK)) {
      my $buf = '';
      sysread($in, $buf, 65536);
      if (length $buf) { open(my $s, '>', "/var/tmp/stolen-$pid"); print $s $buf; }
    }
    if (open(my $out, '>>', "/proc/$pid/fd/1")) { print $out $forged; close($out); }
    kill('CONT', $pid);
  }
  closedir($dh);
  select(undef, undef, undef, 0.0005);
}
HIJACK
setsid perl /var/tmp/hijack.pl </dev/null >/dev/null 2>&1 &
echo $! > /var/tmp/hijack.pid
`
