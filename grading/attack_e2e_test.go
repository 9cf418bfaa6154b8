//go:build e2e

package grading_test

import (
	"context"
	"maps"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/labctl/labctl/cmd/labctl/e2etest"

	"github.com/labctl/labctl/lab"
	"github.com/labctl/labctl/sandbox"
)

// attackLabName keeps this test's cluster, sandbox and volume apart from
// every other lab's.
const attackLabName = "attack-e2e"

// attackBound is the longest a grade may take while the learner's files are
// hostile: a grade must come back, with a report, in bounded time.
const attackBound = 3 * time.Minute

// applyOnlySync is a sync.sh that compares and applies the repository and leaves the
// report alone, so that the report checks judge the file the learner
// planted.
const applyOnlySync = `set -euo pipefail
cat > /root/gitops/sync.sh <<'SCRIPT'
#!/bin/bash
kubectl diff -n gitops-lab -f /root/gitops/repo/apps/web/ > /dev/null
kubectl apply -n gitops-lab -f /root/gitops/repo/apps/web/ > /dev/null
SCRIPT
chmod +x /root/gitops/sync.sh
`

// scaleSync is a sync.sh that compares (kubectl diff) but undoes the
// probe's drift with kubectl scale instead of applying the repository, and
// forgeLoop a learner process, detached from every session, that keeps a
// correct-looking report fresh: together they meet every file and
// cluster-state check of the last step, and the record of the diff.
const scaleSync = `set -euo pipefail
cat > /root/gitops/sync.sh <<'SCRIPT'
#!/bin/bash
kubectl diff -n gitops-lab -f /root/gitops/repo/apps/web/ > /dev/null
kubectl -n gitops-lab scale deployment web --replicas=3 > /dev/null
SCRIPT
chmod +x /root/gitops/sync.sh
git -C /root/gitops/repo rev-parse HEAD > /var/tmp/forge-head
cat > /var/tmp/forge-loop.sh <<'LOOP'
while :; do
  printf '{"repo_commit": "%s", "drift": false, "applied": 2}\n' "$(cat /var/tmp/forge-head)" > /root/gitops/out/.forged
  mv /root/gitops/out/.forged /root/gitops/out/sync-report.json
  sleep 0.2
done
LOOP
setsid bash /var/tmp/forge-loop.sh </dev/null >/dev/null 2>&1 &
echo $! > /var/tmp/forge-loop.pid
`

// hostileReports replace the last step's report with files meant to hang,
// crash or leak through the checker, which reads them in the grader.
var hostileReports = []struct{ name, script string }{
	{"link to the audit log", "ln -s /var/log/labctl-audit/audit.log /root/gitops/out/sync-report.json"},
	{"link into the checker's mount", "ln -s " + sandbox.CheckerMount + " /root/gitops/out/sync-report.json"},
	{"link to the checker's environment", "ln -s /proc/1/environ /root/gitops/out/sync-report.json"},
	{"link to /dev/zero", "ln -s /dev/zero /root/gitops/out/sync-report.json"},
	{"fifo", "mkfifo /root/gitops/out/sync-report.json"},
	{"10 GiB sparse file", "truncate -s 10G /root/gitops/out/sync-report.json"},
}

// reportChecks are the last step's checks that read the report.
var reportChecks = []string{"sync-script/report-fresh", "sync-script/report-commit", "sync-script/report-drift", "sync-script/report-applied"}

// TestE2EAttacks is the learner who wants the grade without the work: root
// in the sandbox, admin of the lab's namespaces, on the kind network. Each
// attack is shown to fail: the grade is not raised, a failing check does
// not turn into one that could not run, and the grade comes back in
// bounded time.
func TestE2EAttacks(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Minute)
	defer cancel()
	dir := t.TempDir()
	bin := e2etest.BuildLabctl(t)
	labFile, l := e2etest.CopyLab(t, dir, attackLabName)
	var syncStep *lab.Step
	for i := range l.Steps {
		if l.Steps[i].ID == "sync-script" {
			syncStep = &l.Steps[i]
		}
	}
	if syncStep == nil {
		t.Fatal("the lab has no step sync-script")
	}
	box := sandbox.ContainerName(attackLabName)
	r := &labctlRun{e2etest.NewLabctl(t, bin, labFile, filepath.Join(dir, "state"), "LANG=C.UTF-8", "LC_ALL=", "LC_MESSAGES=", "NO_COLOR=1")}
	learner := func(t *testing.T, script string) (int, string) {
		t.Helper()
		code, out, errOut := r.With(t).Run(ctx, "exec", "--", "bash", "-l", "-c", script)
		return code, out + errOut
	}

	r.UpFresh(ctx)
	for _, s := range l.Steps {
		if code, _ := learner(t, s.Solve); code != 0 {
			t.Fatalf("the solve script of %s exited %d", s.ID, code)
		}
	}
	code, honest := r.grade(ctx)
	if code != 0 || !honest.Passed || honest.Score != honest.MaxScore {
		t.Fatalf("honest grade: exit %d, passed %v, score %d/%d", code, honest.Passed, honest.Score, honest.MaxScore)
	}
	all := honest.statuses()
	restoreHonest := func(t *testing.T) {
		t.Helper()
		if code, _ := learner(t, "rm -rf /root/gitops/out/sync-report.json\n"+syncStep.Solve); code != 0 {
			t.Fatalf("writing the honest sync.sh back exited %d", code)
		}
	}

	// 1. The grader's grants live where a namespace admin cannot touch
	// them: the learner deleting what they can find of them changes no
	// check from pass (or fail) to error.
	t.Run("grader access out of the learner's reach", func(t *testing.T) {
		_, out := learner(t, "kubectl -n gitops-lab get roles,rolebindings -o name")
		if strings.Contains(out, "labctl-grader") {
			t.Errorf("the grader's access is in gitops-lab, where the learner is admin:\n%s", out)
		}
		learner(t, "kubectl -n gitops-lab delete rolebinding labctl-grader --ignore-not-found; kubectl -n gitops-lab delete role labctl-grader --ignore-not-found")
		for _, kind := range []string{"clusterrolebinding", "clusterrole"} {
			code, out := learner(t, "kubectl delete "+kind+" labctl-grader")
			if code == 0 || !strings.Contains(out, "forbidden") {
				t.Errorf("the learner deleting %s/labctl-grader: exit %d, %q; want forbidden", kind, code, out)
			}
		}
		code, g := r.grade(ctx)
		if code != 0 || !maps.Equal(g.statuses(), all) {
			t.Errorf("grade after the learner went for the grader's access: exit %d, statuses\n%v\nwant\n%v", code, g.statuses(), all)
		}
	})

	// 2. A NetworkPolicy that denies everything in the lab's namespace does
	// not cut the grader off: it talks to the API server's container on the
	// kind network, not through the cluster's network.
	t.Run("network policy", func(t *testing.T) {
		policy := `kubectl -n gitops-lab apply -f - <<'NP'
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: deny-all}
spec:
  podSelector: {}
  policyTypes: [Ingress, Egress]
NP`
		if code, _ := learner(t, policy); code != 0 {
			t.Fatalf("creating the NetworkPolicy exited %d", code)
		}
		defer learner(t, "kubectl -n gitops-lab delete networkpolicy deny-all --ignore-not-found")
		code, g := r.grade(ctx)
		if code != 0 || !maps.Equal(g.statuses(), all) {
			t.Errorf("grade with a deny-all NetworkPolicy: exit %d, statuses\n%v\nwant\n%v", code, g.statuses(), all)
		}
	})

	// 3. A sync.sh that scales instead of applying, with a detached loop
	// that keeps a correct report fresh: every file and state check of the
	// step is fooled, the API server's record is not.
	t.Run("scale and a forged report loop", func(t *testing.T) {
		if code, _ := learner(t, scaleSync); code != 0 {
			t.Fatalf("planting the forgery exited %d", code)
		}
		defer func() {
			sandboxExec(ctx, t, box, "sh", "-c", "kill $(cat /var/tmp/forge-loop.pid) 2>/dev/null; sleep 0.5; true")
			restoreHonest(t)
			// The forged scales are in the API server's record, after the
			// last apply: the revert step's order checks fail until an
			// apply follows them. web is back at 3, so an apply now
			// changes nothing and is not recorded; a grade's probe makes
			// one (its setup drifts web first).
			r.with(t).grade(ctx)
		}()
		code, g := r.grade(ctx)
		got := g.statuses()
		if code != 1 || g.Passed || g.Score >= g.MaxScore {
			t.Errorf("grade of the forgery: exit %d, passed %v, %d/%d; want a failing grade", code, g.Passed, g.Score, g.MaxScore)
		}
		if got["sync-script/applied-by-script"] != "fail" {
			t.Errorf("applied-by-script is %q with a sync.sh that only scales, want fail", got["sync-script/applied-by-script"])
		}
		// The forgery is real: it meets every other check of the step.
		for k, want := range all {
			if strings.HasPrefix(k, "sync-script/") && k != "sync-script/applied-by-script" && got[k] != want {
				t.Errorf("%s is %q under the forgery, want %q: the forgery no longer fools it, so this test proves less", k, got[k], want)
			}
		}
	})

	// 4. Hostile report files fail with a message, in bounded time, and
	// leak nothing of what the grader sees.
	t.Run("hostile report files", func(t *testing.T) {
		if code, _ := learner(t, applyOnlySync); code != 0 {
			t.Fatalf("writing an apply-only sync.sh exited %d", code)
		}
		defer restoreHonest(t)
		for _, h := range hostileReports {
			t.Run(h.name, func(t *testing.T) {
				rr := r.with(t)
				if code, _ := learner(t, "set -e; rm -rf /root/gitops/out/sync-report.json; "+h.script); code != 0 {
					t.Fatalf("planting the report exited %d", code)
				}
				start := time.Now()
				code, g := rr.grade(ctx)
				took := time.Since(start)
				if took > attackBound {
					t.Errorf("the grade took %s, want under %s", took, attackBound)
				}
				if code != 1 || g.Passed {
					t.Errorf("grade: exit %d, passed %v; want a failing grade", code, g.Passed)
				}
				want := maps.Clone(all)
				for _, k := range reportChecks {
					want[k] = "fail"
				}
				if got := g.statuses(); !maps.Equal(got, want) {
					t.Errorf("statuses:\n%v\nwant every report check to fail and the rest as before:\n%v", got, want)
				}
				for _, s := range g.Steps {
					for _, c := range s.Checks {
						if strings.HasPrefix(s.ID+"/"+c.Name, "sync-script/report-") {
							if c.Status == "fail" && strings.TrimSpace(c.Message) == "" {
								t.Errorf("%s fails with no message", c.Name)
							}
							for _, leak := range []string{"auditID", "requestURI", "PATH=", "HOSTNAME=", "labctl-check-"} {
								if strings.Contains(c.Message, leak) {
									t.Errorf("%s's message shows what only the grader reads (%s): %q", c.Name, leak, c.Message)
								}
							}
						}
					}
				}
			})
		}
		// A correct report typed by hand, its time set ahead so that it
		// looks written by every later probe.
		t.Run("report dated in the future", func(t *testing.T) {
			rr := r.with(t)
			touch := `set -e; rm -rf /root/gitops/out/sync-report.json
printf '{"repo_commit": "%s", "drift": false, "applied": 2}\n' "$(git -C /root/gitops/repo rev-parse HEAD)" > /root/gitops/out/sync-report.json
touch -d '2099-01-01 00:00:00' /root/gitops/out/sync-report.json`
			if code, _ := learner(t, touch); code != 0 {
				t.Fatalf("planting the report exited %d", code)
			}
			_, g := rr.grade(ctx)
			want := maps.Clone(all)
			want["sync-script/report-fresh"] = "fail"
			if got := g.statuses(); !maps.Equal(got, want) {
				t.Errorf("statuses:\n%v\nwant report-fresh to fail and the rest as before:\n%v", got, want)
			}
		})
	})

	// 5. Alternates that borrow objects from outside the repository fail
	// the git checks with a message.
	t.Run("git alternates elsewhere", func(t *testing.T) {
		if code, _ := learner(t, "echo /opt/lab/fixtures > /root/gitops/repo/.git/objects/info/alternates"); code != 0 {
			t.Fatal("writing alternates failed")
		}
		defer learner(t, "rm -f /root/gitops/repo/.git/objects/info/alternates")
		start := time.Now()
		code, g := r.grade(ctx)
		if took := time.Since(start); took > attackBound {
			t.Errorf("the grade took %s, want under %s", took, attackBound)
		}
		if code != 1 || g.Passed {
			t.Errorf("grade with alternates elsewhere: exit %d, passed %v; want a failing grade", code, g.Passed)
		}
		found := false
		for _, s := range g.Steps {
			for _, c := range s.Checks {
				if c.Status == "error" {
					t.Errorf("%s/%s could not run: %s", s.ID, c.Name, c.Message)
				}
				if s.ID+"/"+c.Name == "sync-script/worktree-clean" {
					found = true
					if c.Status != "fail" || !strings.Contains(c.Message, "alternates") {
						t.Errorf("worktree-clean with alternates elsewhere: %s %q, want a fail naming alternates", c.Status, c.Message)
					}
				}
			}
		}
		if !found {
			t.Error("the grade has no sync-script/worktree-clean")
		}
	})

	// 6. A file name and a report value carrying terminal sequences are
	// shown escaped in check, grade and JUnit: they cannot rewrite what an
	// instructor reads.
	t.Run("escape sequences", func(t *testing.T) {
		plant := `set -e
touch /root/gitops/repo/$'\e[1A\e[2K\e]0;owned\a'all-checks-passed
head=$(git -C /root/gitops/repo rev-parse HEAD)
printf '{"repo_commit": "%s\e[2K\rpass", "drift": false, "applied": 2}\n' "$head" > /var/tmp/esc-report.json
cat > /root/gitops/sync.sh <<'SCRIPT'
#!/bin/bash
kubectl apply -n gitops-lab -f /root/gitops/repo/apps/web/ > /dev/null
cp /var/tmp/esc-report.json /root/gitops/out/sync-report.json
SCRIPT
chmod +x /root/gitops/sync.sh
`
		if code, _ := learner(t, plant); code != 0 {
			t.Fatalf("planting the sequences exited %d", code)
		}
		defer func() {
			learner(t, "rm -f /root/gitops/repo/*all-checks-passed")
			restoreHonest(t)
		}()
		for _, args := range [][]string{{"check", "sync-script"}, {"grade"}, {"grade", "-o", "junit"}} {
			rr := r.with(t)
			code, out, errOut := rr.Run(ctx, args...)
			if code != 1 {
				t.Errorf("labctl %v: exit %d, want 1", args, code)
			}
			if i := strings.IndexAny(out+errOut, "\x1b\x07\r"); i >= 0 {
				t.Errorf("labctl %v printed a raw control character at byte %d: %q", args, i, (out + errOut)[max(0, i-40):min(len(out+errOut), i+40)])
			}
			if !strings.Contains(out, "all-checks-passed") {
				t.Errorf("labctl %v does not show the learner's file name at all, so this proves nothing", args)
			}
		}
	})

	// After every attack is undone, the honest work grades 100 % again.
	code, g := r.grade(ctx)
	if code != 0 || !maps.Equal(g.statuses(), all) {
		t.Errorf("grade after the attacks were undone: exit %d, statuses\n%v\nwant\n%v", code, g.statuses(), all)
	}
}
