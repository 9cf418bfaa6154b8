package checks

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/labctl/labctl/internal/msg"
	"github.com/labctl/labctl/lab"
)

// auditLine is one event as the API server writes it at level Request.
func auditLine(t *testing.T, at time.Time, verb, uri, resource, sub, name string, code int, body string) string {
	t.Helper()
	ev := map[string]any{
		"kind": "Event", "apiVersion": "audit.k8s.io/v1", "level": "Request",
		"auditID": fmt.Sprintf("id-%d", at.UnixNano()), "stage": "ResponseComplete",
		"requestURI": uri, "verb": verb,
		"user":                     map[string]any{"username": "system:serviceaccount:labctl-system:learner"},
		"objectRef":                map[string]any{"resource": resource, "subresource": sub, "namespace": "gitops-lab", "name": name, "apiGroup": "apps", "apiVersion": "v1"},
		"responseStatus":           map[string]any{"metadata": map[string]any{}, "code": code},
		"requestReceivedTimestamp": at.Format(time.RFC3339Nano),
		"stageTimestamp":           at.Add(3 * time.Millisecond).Format(time.RFC3339Nano),
	}
	if body != "" {
		ev["requestObject"] = json.RawMessage(body)
	}
	b, err := json.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// auditDir writes a policy and the given files (name → lines) into a new
// directory.
func auditDir(t testing.TB, files map[string][]string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, auditPolicyName), []byte("kind: Policy\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for name, lines := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// runAudit runs one audit check against dir with its window starting at
// since, and returns its status and message.
func runAudit(t *testing.T, dir string, since time.Time, ac *lab.AuditCheck) (Status, string) {
	t.Helper()
	env := Env{Root: "/", Audit: &AuditSource{Dir: dir, Since: map[*lab.AuditCheck]time.Time{ac: since}}}
	return outcome(checkAudit(context.Background(), env, ac))
}

var (
	t0       = time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	scaleSel = lab.AuditSelector{Resource: "deployments", Subresource: "scale", Namespace: "gitops-lab", Name: "web"}
	applySel = lab.AuditSelector{Verbs: []string{"apply"}, Resource: "deployments", Namespace: "gitops-lab", Name: "web"}
)

const (
	scaleURI = "/apis/apps/v1/namespaces/gitops-lab/deployments/web/scale?fieldManager=kubectl-scale"
	applyURI = "/apis/apps/v1/namespaces/gitops-lab/deployments/web?fieldManager=kubectl-client-side-apply&fieldValidation=Strict"
)

func num(n int) *lab.Value { return &lab.Value{Literal: int64(n)} }

func TestAuditWindowOrderAndAbsence(t *testing.T) {
	dir := auditDir(t, map[string][]string{"audit.log": {
		auditLine(t, t0, "patch", applyURI, "deployments", "", "web", 200, `{"spec":{"replicas":3}}`),
		auditLine(t, t0.Add(time.Minute), "patch", scaleURI, "deployments", "scale", "web", 200, `{"spec":{"replicas":5}}`),
		auditLine(t, t0.Add(2*time.Minute), "patch", applyURI, "deployments", "", "web", 200, `{"spec":{"replicas":3}}`),
	}})
	scaledTo5 := &lab.AuditCheck{AuditSelector: scaleSel, Request: &lab.RequestAssert{Path: "spec.replicas", Assert: lab.Assert{Equals: num(5)}}}
	appliedAfter := &lab.AuditCheck{AuditSelector: applySel, After: &scaleSel}
	noScaleAfter := &lab.AuditCheck{AuditSelector: scaleSel, Absent: true, After: &applySel}
	for _, tc := range []struct {
		name  string
		check *lab.AuditCheck
		since time.Time
		want  Status
		text  string
	}{
		{"scale in the window", scaledTo5, t0.Add(30 * time.Second), Pass, ""},
		{"scale before the window", scaledTo5, t0.Add(90 * time.Second), Fail, "no such request"},
		{"scale to another number", &lab.AuditCheck{AuditSelector: scaleSel, Request: &lab.RequestAssert{Path: "spec.replicas", Assert: lab.Assert{Equals: num(4)}}}, time.Time{}, Fail, "none with it"},
		{"apply after the scale", appliedAfter, t0.Add(30 * time.Second), Pass, ""},
		{"no scale after the last apply", noScaleAfter, t0.Add(30 * time.Second), Pass, ""},
		{"a scale in the window is not absent", &lab.AuditCheck{AuditSelector: scaleSel, Absent: true}, t0.Add(30 * time.Second), Fail, "expected no"},
		{"nothing to come after", &lab.AuditCheck{AuditSelector: applySel, After: &lab.AuditSelector{Resource: "configmaps"}}, time.Time{}, Fail, "to come after"},
		{"another object", &lab.AuditCheck{AuditSelector: lab.AuditSelector{Verbs: []string{"apply"}, Resource: "deployments", Name: "db"}}, time.Time{}, Fail, "apply deployments/db"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, text := runAudit(t, dir, tc.since, tc.check)
			if s != tc.want || !strings.Contains(text, tc.text) {
				t.Errorf("got %s %q, want %s containing %q", s, text, tc.want, tc.text)
			}
		})
	}

	// A scale after the last apply: the drift was undone by hand.
	undone := auditDir(t, map[string][]string{"audit.log": {
		auditLine(t, t0, "patch", scaleURI, "deployments", "scale", "web", 200, `{"spec":{"replicas":5}}`),
		auditLine(t, t0.Add(time.Minute), "patch", applyURI, "deployments", "", "web", 200, `{"spec":{"replicas":3}}`),
		auditLine(t, t0.Add(2*time.Minute), "patch", scaleURI, "deployments", "scale", "web", 200, `{"spec":{"replicas":3}}`),
	}})
	if s, text := runAudit(t, undone, t0.Add(30*time.Second), noScaleAfter); s != Fail || !strings.Contains(text, "expected no") {
		t.Errorf("a scale after the apply: %s %q", s, text)
	}
	if s, text := runAudit(t, undone, t0.Add(30*time.Second), appliedAfter); s != Fail || !strings.Contains(text, "found none after it") {
		t.Errorf("an apply before the last scale: %s %q", s, text)
	}
}

func TestAuditIgnoresWhatDidNotHappen(t *testing.T) {
	dir := auditDir(t, map[string][]string{"audit.log": {
		// Forbidden, a dry run (kubectl diff), an earlier stage, garbage.
		auditLine(t, t0, "patch", scaleURI, "deployments", "scale", "web", 403, `{"spec":{"replicas":5}}`),
		auditLine(t, t0, "patch", scaleURI+"&dryRun=All", "deployments", "scale", "web", 200, `{"spec":{"replicas":5}}`),
		strings.Replace(auditLine(t, t0, "patch", scaleURI, "deployments", "scale", "web", 200, `{"spec":{"replicas":5}}`), "ResponseComplete", "ResponseStarted", 1),
		`{"stage":"ResponseComplete",`,
		"not json at all",
	}})
	ac := &lab.AuditCheck{AuditSelector: scaleSel}
	if s, text := runAudit(t, dir, time.Time{}, ac); s != Fail || !strings.Contains(text, "no such request") {
		t.Errorf("got %s %q, want a failure: nothing took effect", s, text)
	}
}

func TestAuditApplyIsKubectlApply(t *testing.T) {
	base := "/apis/apps/v1/namespaces/gitops-lab/deployments"
	lastApplied := `{"metadata":{"annotations":{"kubectl.kubernetes.io/last-applied-configuration":"{}"}},"spec":{"replicas":3}}`
	applied := `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web"},"spec":{"replicas":3}}`
	for _, tc := range []struct {
		verb, uri, body string
		apply           bool
	}{
		{"patch", base + "/web?fieldManager=kubectl-client-side-apply&fieldValidation=Strict", `{}`, true},
		{"create", base + "?fieldManager=kubectl-client-side-apply&fieldValidation=Strict", `{}`, true},
		{"patch", base + "/web?fieldManager=kubectl&fieldValidation=Strict&force=false", `{}`, true},
		{"patch", base + "/web?fieldManager=kubectl-edit&fieldValidation=Strict", `{}`, false},
		{"patch", base + "/web?fieldManager=kubectl-patch", `{}`, false},
		{"update", base + "/web?fieldManager=kubectl", `{}`, false},
		{"patch", base + "/web", `{}`, false},
		// kubectl apply --field-manager NAME: client-side (the annotation
		// it writes), server-side (the whole configuration), a new object.
		{"patch", base + "/web?fieldManager=gitops-cli&fieldValidation=Strict", lastApplied, true},
		{"patch", base + "/web?fieldManager=gitops-cli&fieldValidation=Strict&force=false", applied, true},
		{"create", base + "?fieldManager=gitops-cli&fieldValidation=Strict", `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","annotations":{"kubectl.kubernetes.io/last-applied-configuration":"{}"}}}`, true},
		// Not applies: kubectl edit keeps the annotation up to date; a
		// patch of another manager that sends a part of the object; a
		// create without the annotation.
		{"patch", base + "/web?fieldManager=kubectl-edit&fieldValidation=Strict", lastApplied, false},
		{"patch", base + "/web?fieldManager=kubectl-last-applied", applied, false},
		{"patch", base + "/web?fieldManager=my-script", `{"spec":{"replicas":3}}`, false},
		{"create", base + "?fieldManager=my-script", applied, false},
	} {
		rec, ok := parseAuditLine([]byte(auditLine(t, t0, tc.verb, tc.uri, "deployments", "", "web", 200, tc.body)))
		if !ok || rec.isApply() != tc.apply {
			t.Errorf("%s %s: parsed %v, apply %v, want %v", tc.verb, tc.uri, ok, rec.isApply(), tc.apply)
		}
	}
}

func TestAuditReadsRotatedFilesInOrder(t *testing.T) {
	dir := auditDir(t, map[string][]string{
		"audit-2026-11-30T09-00-00.000.log": {auditLine(t, t0, "patch", scaleURI, "deployments", "scale", "web", 200, `{"spec":{"replicas":5}}`)},
		"audit-2026-11-30T09-30-00.000.log": {auditLine(t, t0.Add(time.Minute), "patch", applyURI, "deployments", "", "web", 200, `{"spec":{"replicas":3}}`)},
		"audit.log":                         {auditLine(t, t0.Add(2*time.Minute), "patch", scaleURI, "deployments", "scale", "web", 200, `{"spec":{"replicas":4}}`)},
	})
	recs, err := readAuditLog(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 3 || recs[0].Subresource != "scale" || recs[1].FieldManager != "kubectl-client-side-apply" || recs[2].Seq != 2 {
		t.Fatalf("records: %+v", recs)
	}
	files, err := auditFiles(dir, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 1 || filepath.Base(files[0]) != "audit.log" {
		t.Errorf("with a budget of one byte, files %v; want only the newest", files)
	}
}

func TestAuditSkipsHugeLines(t *testing.T) {
	huge := auditLine(t, t0, "patch", scaleURI, "deployments", "scale", "web", 200,
		`{"spec":{"replicas":9},"pad":"`+strings.Repeat("x", maxAuditLine)+`"}`)
	dir := auditDir(t, map[string][]string{"audit.log": {
		huge,
		auditLine(t, t0.Add(time.Second), "patch", scaleURI, "deployments", "scale", "web", 200, `{"spec":{"replicas":5}}`),
	}})
	recs, err := readAuditLog(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1 || string(recs[0].Body) != `{"spec":{"replicas":5}}` {
		t.Errorf("records after a huge line: %d, first body %.40s", len(recs), recs[0].Body)
	}
}

func TestAuditWithoutALog(t *testing.T) {
	ac := &lab.AuditCheck{AuditSelector: scaleSel}
	for name, dir := range map[string]string{"no directory given": "", "no policy": t.TempDir()} {
		if s, text := runAudit(t, dir, time.Time{}, ac); s != Error || !strings.Contains(text, "reset --hard") {
			t.Errorf("%s: %s %q, want an error naming the fix", name, s, text)
		}
	}
	// A policy and no log yet: the learner wrote nothing.
	if s, _ := runAudit(t, auditDir(t, nil), time.Time{}, ac); s != Fail {
		t.Errorf("an empty log: %s, want fail", s)
	}
	if s, _ := runAudit(t, auditDir(t, nil), time.Time{}, &lab.AuditCheck{AuditSelector: scaleSel, Absent: true}); s != Pass {
		t.Errorf("an empty log and absent: %s, want pass", s)
	}
}

func TestAuditMessagesInJapanese(t *testing.T) {
	ac := &lab.AuditCheck{AuditSelector: scaleSel}
	err := checkAudit(context.Background(), Env{Root: "/", Audit: &AuditSource{Dir: auditDir(t, nil), Since: map[*lab.AuditCheck]time.Time{ac: t0}}}, ac)
	s, text := outcomeIn(err, msg.New(msg.Japanese))
	if s != Fail || !strings.Contains(text, "ステップの開始") || strings.Contains(text, "expected") {
		t.Errorf("%s %q", s, text)
	}
}

func TestAuditLogReadOncePerRound(t *testing.T) {
	dir := auditDir(t, map[string][]string{"audit.log": {
		auditLine(t, t0, "patch", scaleURI, "deployments", "scale", "web", 200, `{"spec":{"replicas":5}}`),
	}})
	a := &lab.AuditCheck{AuditSelector: scaleSel}
	b := &lab.AuditCheck{AuditSelector: scaleSel, Absent: true}
	src := &AuditSource{Dir: dir}
	env := Env{Root: "/", Audit: src}
	rs := Run(context.Background(), env, []lab.Check{{Name: "a", Audit: a}, {Name: "b", Audit: b}})
	if rs[0].Status != Pass || rs[1].Status != Fail {
		t.Fatalf("results %+v", rs)
	}
	// The round keeps what it read: a log removed after the first read
	// changes nothing within the round.
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	rs = Run(context.Background(), env, []lab.Check{{Name: "a", Audit: a}})
	if rs[0].Status != Pass {
		t.Errorf("a second read within the round: %+v", rs[0])
	}
}

func TestRequestGivesEachAuditCheckItsWindow(t *testing.T) {
	a, b := &lab.AuditCheck{AuditSelector: scaleSel}, &lab.AuditCheck{AuditSelector: applySel}
	req := Request{
		AuditDir: "/var/log/labctl-audit",
		Checks:   []lab.Check{{Name: "f", File: &lab.FileCheck{Path: "/x"}}, {Name: "a", Audit: a}, {Name: "b", Audit: b}},
		Since:    []time.Time{{}, t0, t0.Add(time.Hour)},
	}
	env, err := req.env()
	if err != nil {
		t.Fatal(err)
	}
	if env.Audit.Dir != req.AuditDir || !env.Audit.since(a).Equal(t0) || !env.Audit.since(b).Equal(t0.Add(time.Hour)) {
		t.Errorf("windows: dir %q a %v b %v", env.Audit.Dir, env.Audit.since(a), env.Audit.since(b))
	}
	// A request without windows judges the whole log.
	req.Since = nil
	if env, _ = req.env(); !env.Audit.since(a).IsZero() {
		t.Errorf("no windows given, a starts at %v", env.Audit.since(a))
	}
}

func TestAuditScaleObjectBody(t *testing.T) {
	// A client that replaces the Scale object (PUT) rather than patching it.
	dir := auditDir(t, map[string][]string{"audit.log": {
		auditLine(t, t0, "update", "/apis/apps/v1/namespaces/gitops-lab/deployments/web/scale", "deployments", "scale", "web", 200,
			`{"kind":"Scale","apiVersion":"autoscaling/v1","metadata":{"name":"web","namespace":"gitops-lab"},"spec":{"replicas":5}}`),
	}})
	ac := &lab.AuditCheck{AuditSelector: lab.AuditSelector{Verbs: []string{"patch", "update"}, Resource: "deployments", Subresource: "scale", Name: "web"},
		Request: &lab.RequestAssert{Path: "spec.replicas", Assert: lab.Assert{Equals: num(5)}}}
	if s, text := runAudit(t, dir, time.Time{}, ac); s != Pass {
		t.Errorf("a Scale object with 5 replicas: %s %q", s, text)
	}
	ac.Verbs = []string{"patch"}
	if s, _ := runAudit(t, dir, time.Time{}, ac); s != Fail {
		t.Errorf("an update is not a patch: %s", s)
	}
}

// TestAuditDuringProbe: with duringProbe, only the requests the probe's run
// made count: an apply the learner typed before the probe does not, a scale
// the learner's script made during it is no apply, and without a probe in
// the round the check fails.
func TestAuditDuringProbe(t *testing.T) {
	probe := t0.Add(10 * time.Minute)
	typedBefore := auditLine(t, t0.Add(time.Minute), "patch", applyURI, "deployments", "", "web", 200, `{"spec":{"replicas":3}}`)
	scaledDuring := auditLine(t, probe.Add(2*time.Second), "patch", scaleURI, "deployments", "scale", "web", 200, `{"spec":{"replicas":3}}`)
	appliedDuring := auditLine(t, probe.Add(3*time.Second), "patch", applyURI, "deployments", "", "web", 200, `{"spec":{"replicas":3}}`)
	run := func(probeStart time.Time, lines ...string) (Status, string) {
		t.Helper()
		ac := &lab.AuditCheck{AuditSelector: applySel, DuringProbe: true,
			Request: &lab.RequestAssert{Path: "spec.replicas", Assert: lab.Assert{Equals: num(3)}}}
		dir := auditDir(t, map[string][]string{"audit.log": lines})
		env := Env{Root: "/", ProbeStart: probeStart, Audit: &AuditSource{Dir: dir, Since: map[*lab.AuditCheck]time.Time{ac: t0}}}
		return outcome(checkAudit(context.Background(), env, ac))
	}
	if st, m := run(probe, typedBefore, scaledDuring); st != Fail || !strings.Contains(m, "apply deployments/web") {
		t.Errorf("an apply typed before the probe and a scale during it: %s %q, want a fail naming the apply", st, m)
	}
	if st, m := run(probe, typedBefore, scaledDuring, appliedDuring); st != Pass {
		t.Errorf("an apply during the probe: %s %q, want pass", st, m)
	}
	if st, m := run(time.Time{}, typedBefore, appliedDuring); st != Fail || !strings.Contains(m, "probe") {
		t.Errorf("no probe in the round: %s %q, want a fail saying the probe did not run", st, m)
	}
}

// A learner who floods the log until it rotates cannot push a request out
// of it and so have it judged absent: once the log was rotated, absence in
// a window older than the oldest request kept cannot run.
func TestAuditAbsenceAfterRotation(t *testing.T) {
	noScale := &lab.AuditCheck{AuditSelector: scaleSel, Absent: true}
	rotated := auditDir(t, map[string][]string{
		"audit-2026-11-30T10-05-00.000.log": {auditLine(t, t0.Add(5*time.Minute), "patch", applyURI, "deployments", "", "web", 200, `{}`)},
		"audit.log":                         {auditLine(t, t0.Add(6*time.Minute), "patch", applyURI, "deployments", "", "web", 200, `{}`)},
	})
	if s, m := runAudit(t, rotated, t0, noScale); s != Error || !strings.Contains(m, "rotated") {
		t.Errorf("window from before the oldest kept request: %s %q, want an error", s, m)
	}
	if s, m := runAudit(t, rotated, t0.Add(5*time.Minute+time.Second), noScale); s != Pass {
		t.Errorf("window within the kept log: %s %q, want pass", s, m)
	}
	whole := auditDir(t, map[string][]string{"audit.log": {auditLine(t, t0.Add(6*time.Minute), "patch", applyURI, "deployments", "", "web", 200, `{}`)}})
	if s, m := runAudit(t, whole, t0, noScale); s != Pass {
		t.Errorf("a log never rotated: %s %q, want pass", s, m)
	}
}

// TestAuditAs: a check with as counts only the requests the learner made
// impersonating that ServiceAccount; one without counts them all.
func TestAuditAs(t *testing.T) {
	patchURI := "/apis/apps/v1/namespaces/gitops-lab/deployments/web?fieldManager=kubectl-set"
	own := auditLine(t, t0, "patch", patchURI, "deployments", "", "web", 200, `{}`)
	var ev map[string]any
	if err := json.Unmarshal([]byte(auditLine(t, t0.Add(time.Second), "patch", patchURI, "deployments", "", "web", 200, `{}`)), &ev); err != nil {
		t.Fatal(err)
	}
	ev["impersonatedUser"] = map[string]any{"username": "system:serviceaccount:ci:deployer", "groups": []any{"system:serviceaccounts"}}
	b, _ := json.Marshal(ev)
	deployer := string(b)
	sel := lab.AuditSelector{Verbs: []string{"patch"}, Resource: "deployments", Namespace: "gitops-lab", Name: "web", As: "ci/deployer"}
	for _, tc := range []struct {
		name  string
		lines []string
		sel   lab.AuditSelector
		want  Status
	}{
		{"as the deployer", []string{own, deployer}, sel, Pass},
		{"only as yourself", []string{own}, sel, Fail},
		{"as another account", []string{strings.Replace(deployer, "ci:deployer", "ci:test-runner", 1)}, sel, Fail},
		{"without as, impersonated too", []string{deployer}, lab.AuditSelector{Verbs: []string{"patch"}, Resource: "deployments"}, Pass},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := auditDir(t, map[string][]string{"audit.log": tc.lines})
			s, text := runAudit(t, dir, time.Time{}, &lab.AuditCheck{AuditSelector: tc.sel})
			if s != tc.want {
				t.Errorf("got %s %q, want %s", s, text, tc.want)
			}
			if tc.want == Fail && !strings.Contains(text, "--as=system:serviceaccount:ci:deployer") {
				t.Errorf("the failure %q does not name the account", text)
			}
		})
	}
}

// A client-side apply sends only what differs from the object as it is:
// after the cluster was scaled to 3 by hand, applying a repository that
// says 3 sends no spec.replicas. What it applied is the configuration in
// its last-applied annotation, and that is what the request assert reads.
// Another request carrying the annotation (kubectl edit keeps it) is read
// by its body.
func TestAuditApplyIsReadByWhatItApplied(t *testing.T) {
	uri := "/apis/apps/v1/namespaces/gitops-lab/deployments/web?fieldManager=kubectl-client-side-apply&fieldValidation=Strict"
	body := `{"metadata":{"annotations":{"kubectl.kubernetes.io/last-applied-configuration":"{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"spec\":{\"replicas\":3}}\n"}}}`
	dir := auditDir(t, map[string][]string{"audit.log": {auditLine(t, t0, "patch", uri, "deployments", "", "web", 200, body)}})
	three := &lab.AuditCheck{AuditSelector: applySel, Request: &lab.RequestAssert{Path: "spec.replicas", Assert: lab.Assert{Equals: num(3)}}}
	if s, text := runAudit(t, dir, time.Time{}, three); s != Pass {
		t.Errorf("an apply whose configuration says 3: %s %q", s, text)
	}
	four := &lab.AuditCheck{AuditSelector: applySel, Request: &lab.RequestAssert{Path: "spec.replicas", Assert: lab.Assert{Equals: num(4)}}}
	if s, _ := runAudit(t, dir, time.Time{}, four); s != Fail {
		t.Errorf("an apply whose configuration says 3, asked for 4: %s", s)
	}
	edit := "/apis/apps/v1/namespaces/gitops-lab/deployments/web?fieldManager=kubectl-edit&fieldValidation=Strict"
	dir = auditDir(t, map[string][]string{"audit.log": {auditLine(t, t0, "patch", edit, "deployments", "", "web", 200, body)}})
	patched := &lab.AuditCheck{AuditSelector: lab.AuditSelector{Verbs: []string{"patch"}, Resource: "deployments", Namespace: "gitops-lab", Name: "web"},
		Request: &lab.RequestAssert{Path: "spec.replicas", Assert: lab.Assert{Equals: num(3)}}}
	if s, _ := runAudit(t, dir, time.Time{}, patched); s != Fail {
		t.Errorf("an edit read by its annotation: %s", s)
	}
}

// dryRun: true picks only the dry runs (kubectl diff's patches), which the
// default leaves out: a diff is the evidence that the learner compared.
func TestAuditDryRunSelector(t *testing.T) {
	uri := "/apis/apps/v1/namespaces/gitops-lab/deployments/web?fieldManager=kubectl-client-side-apply"
	diffSel := lab.AuditSelector{Verbs: []string{"patch"}, Resource: "deployments", Namespace: "gitops-lab", Name: "web", DryRun: true}
	diffed := auditDir(t, map[string][]string{"audit.log": {auditLine(t, t0, "patch", uri+"&dryRun=All", "deployments", "", "web", 200, `{}`)}})
	applied := auditDir(t, map[string][]string{"audit.log": {auditLine(t, t0, "patch", uri, "deployments", "", "web", 200, `{}`)}})
	refused := auditDir(t, map[string][]string{"audit.log": {auditLine(t, t0, "patch", uri+"&dryRun=All", "deployments", "", "web", 403, `{}`)}})
	for _, tc := range []struct {
		name string
		dir  string
		sel  lab.AuditSelector
		want Status
	}{
		{"a diff, asked for a diff", diffed, diffSel, Pass},
		{"a real patch, asked for a diff", applied, diffSel, Fail},
		{"a refused diff", refused, diffSel, Fail},
		{"a diff, asked for a patch that took effect", diffed, lab.AuditSelector{Verbs: []string{"patch"}, Resource: "deployments", Name: "web"}, Fail},
	} {
		if s, text := runAudit(t, tc.dir, time.Time{}, &lab.AuditCheck{AuditSelector: tc.sel}); s != tc.want {
			t.Errorf("%s: %s %q, want %s", tc.name, s, text, tc.want)
		}
	}
}

// TestAuditTimesOnTheLearnersClock: the times a message shows are in the
// zone the host sent with the request, with its name; UTC without one.
func TestAuditTimesOnTheLearnersClock(t *testing.T) {
	ac := &lab.AuditCheck{AuditSelector: scaleSel}
	dir := auditDir(t, nil)
	for _, tc := range []struct {
		zone *Zone
		want string
	}{
		{&Zone{Name: "JST", Offset: 9 * 3600}, "19:00:00 JST"},
		{&Zone{Name: "", Offset: -5 * 3600}, "05:00:00 -0500"},
		{&Zone{Name: "\x1b[31m", Offset: 3600}, "11:00:00 +0100"}, // a name that is not a zone's is dropped
		{&Zone{Name: "BAD", Offset: 90000}, "10:00:00 UTC"},       // no zone is a day away
		{nil, "10:00:00 UTC"},
	} {
		req := Request{Zone: tc.zone}
		env, err := req.env()
		if err != nil {
			t.Fatal(err)
		}
		env.Audit = &AuditSource{Dir: dir, Since: map[*lab.AuditCheck]time.Time{ac: t0}}
		r := runOne(context.Background(), env, lab.Check{Name: "scaled", Audit: ac})
		if r.Status != Fail || !strings.Contains(r.Message, tc.want) {
			t.Errorf("zone %+v: %s %q, want the time %s", tc.zone, r.Status, r.Message, tc.want)
		}
	}
}
