package netpolshop_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/netip"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/labctl/labctl/checks"
	"github.com/labctl/labctl/checks/checkstest"
	"github.com/labctl/labctl/internal/mutant"
	"github.com/labctl/labctl/lab"
)

// The netpol-shop lab lives in labs/netpol-shop; `labctl test` proves it end
// to end on a cluster whose kube-router enforces its policies. These tests
// need none: the lab file loads and lints clean, its manifests run its
// image as the restricted Pod Security level wants, every check waits for
// a cluster, and its story replays against a model of the cluster: a fake
// kubectl keeps what the scripts apply, and a small NetworkPolicy
// evaluator decides what each reach check's Pod, and each kubectl exec of
// /app dial, would reach. Each mistake must then fail exactly the checks it
// names, and the solve and every alternative none.
const (
	netpolLabDir = "."
	netpolLab    = netpolLabDir + "/lab.yaml"
)

// TestMain lets the test binary stand in for kubectl in the netpol-shop
// story (see fakeKubectl); otherwise it runs the tests.
func TestMain(m *testing.M) {
	if os.Getenv(fakeKubectlState) != "" {
		os.Exit(fakeKubectl(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

func loadNetpolLab(t *testing.T) *lab.Lab {
	t.Helper()
	l, err := lab.Load(netpolLab)
	if err != nil {
		t.Fatalf("loading %s: %v", netpolLab, err)
	}
	return l
}

func TestNetpolLabLoads(t *testing.T) {
	l := loadNetpolLab(t)
	for _, w := range l.Lint() {
		t.Error(w)
	}
	if l.Metadata.Name != "netpol-shop" || l.Metadata.Language != "en" {
		t.Errorf("metadata = %+v, want the name netpol-shop in English", l.Metadata)
	}
	c := l.Cluster
	if c.Provider != "kind" || c.Workloads != lab.WorkloadsRun || c.PodSecurity != lab.PodSecurityRestricted {
		t.Errorf("cluster = %+v, want kind, workloads run, podSecurity restricted", c)
	}
	if !slices.Equal(c.Addons, []string{lab.AddonNetworkPolicy}) {
		t.Errorf("cluster.addons = %v, want [networkPolicy]", c.Addons)
	}
	if len(c.Workers) != 2 || c.Workers[0].Labels["zone"] != "a" || c.Workers[1].Labels["zone"] != "b" {
		t.Errorf("cluster.workers = %+v, want two, in zones a and b", c.Workers)
	}
	if !slices.Equal(c.Namespaces, []string{"shop", "tools"}) {
		t.Errorf("cluster.namespaces = %v, want [shop tools]", c.Namespaces)
	}
	want := []lab.Image{{Name: "labctl.local/shop:1", Build: "images/shop"}}
	if !slices.Equal(c.Images, want) {
		t.Errorf("cluster.images = %+v, want %+v", c.Images, want)
	}
	if len(l.Access.Rules) != 0 || len(l.Access.ClusterRules) != 0 {
		t.Errorf("access = %+v, want the default (admin of the lab's namespaces)", l.Access)
	}
	if len(l.Steps) < 3 {
		t.Errorf("%d steps, want at least 3", len(l.Steps))
	}
	for _, s := range l.Steps {
		checkstest.RequireCompleteStep(t, s)
		// Isolation is shown both ways: paths that must open and paths
		// that must not.
		var open, closed int
		for _, ch := range s.Checks {
			if r := ch.Reach; r != nil && r.Allowed != nil {
				if *r.Allowed {
					open++
				} else {
					closed++
				}
			}
			if m := ch.Matrix; m != nil {
				for _, row := range m.Expected() {
					for _, o := range row {
						if o {
							open++
						} else {
							closed++
						}
					}
				}
			}
		}
		if open == 0 || closed == 0 {
			t.Errorf("step %s: %d paths that must open and %d that must not; want both", s.ID, open, closed)
		}
	}
	for _, f := range []string{"images/shop/Dockerfile", "images/shop/go.mod", "images/shop/main.go", "images/shop/main_test.go", "README.md", "fixtures/start-shop.sh"} {
		if _, err := os.Stat(filepath.Join(netpolLabDir, f)); err != nil {
			t.Errorf("the lab lacks %s: %v", f, err)
		}
	}
}

// Every check needs the cluster: without credentials each one ends in the
// no-credentials error, never in a verdict or another error.
func TestNetpolLabChecksNeedTheCluster(t *testing.T) {
	l := loadNetpolLab(t)
	env := checks.Env{Root: t.TempDir()}
	for _, s := range l.Steps {
		for _, r := range checks.Run(context.Background(), env, s.Checks) {
			if r.Status != checks.Error || !strings.Contains(r.Message, "no cluster credentials") {
				t.Errorf("%s/%s without a cluster: %s %s, want the no-credentials error", s.ID, r.Name, r.Status, r.Message)
			}
		}
	}
}

// Every Pod template of the fixtures runs the lab's image, never pulled,
// hardened as the restricted Pod Security level wants, in a role the app
// knows; every Service's targetPort is a port its Pods name.
func TestNetpolLabManifests(t *testing.T) {
	l := loadNetpolLab(t)
	objs, err := readManifests(filepath.Join(netpolLabDir, "fixtures/app"), nil)
	if err != nil {
		t.Fatal(err)
	}
	deployments := map[string]appsv1.Deployment{}
	var services []corev1.Service
	for _, o := range objs {
		switch o["kind"] {
		case "Deployment":
			var d appsv1.Deployment
			if err := strictDecode(o, &d); err != nil {
				t.Fatal(err)
			}
			deployments[d.Namespace+"/"+d.Name] = d
		case "Service":
			var s corev1.Service
			if err := strictDecode(o, &s); err != nil {
				t.Fatal(err)
			}
			services = append(services, s)
		default:
			t.Errorf("fixtures/app holds a %v; want Deployments and Services", o["kind"])
		}
	}
	wantDeployments := []string{"shop/admin", "shop/api", "shop/db", "shop/web", "tools/debug"}
	if got := slices.Sorted(maps.Keys(deployments)); !slices.Equal(got, wantDeployments) {
		t.Errorf("Deployments %v, want %v", got, wantDeployments)
	}
	for key, d := range deployments {
		ps := d.Spec.Template.Spec
		if sc := ps.SecurityContext; sc == nil || sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot || sc.SeccompProfile == nil {
			t.Errorf("%s: the Pod must require a non-root user and a seccomp profile", key)
		}
		if len(ps.Containers) != 1 {
			t.Fatalf("%s: %d containers, want 1", key, len(ps.Containers))
		}
		c := ps.Containers[0]
		if c.Image != l.Cluster.Images[0].Name || c.ImagePullPolicy != corev1.PullIfNotPresent {
			t.Errorf("%s: image %q pulled %q, want %s with IfNotPresent", key, c.Image, c.ImagePullPolicy, l.Cluster.Images[0].Name)
		}
		if sc := c.SecurityContext; sc == nil || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation ||
			sc.Capabilities == nil || !slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) {
			t.Errorf("%s: the container must forbid privilege escalation and drop every capability", key)
		}
		role := envValue(c, "ROLE")
		if !slices.Contains([]string{"web", "api", "db", "admin", "idle"}, role) {
			t.Errorf("%s: ROLE %q is no role of the app", key, role)
		}
		if role != "idle" && (c.ReadinessProbe == nil || c.ReadinessProbe.PeriodSeconds != 1) {
			t.Errorf("%s: want a readiness probe every second", key)
		}
		if d.Namespace == "shop" && !labels.SelectorFromSet(d.Spec.Selector.MatchLabels).Matches(labels.Set{"app": "shop", "tier": d.Name}) {
			t.Errorf("%s: select the Pods by app=shop, tier=%s", key, d.Name)
		}
		if tl := d.Spec.Template.Labels; d.Namespace == "shop" && (tl["app"] != "shop" || tl["tier"] != d.Name || len(tl) != 2) {
			t.Errorf("%s: Pod labels %v, want exactly app=shop, tier=%s (the checks stand in for them)", key, tl, d.Name)
		}
	}
	for _, s := range services {
		d, ok := deployments[s.Namespace+"/"+s.Name]
		if !ok || !labels.SelectorFromSet(s.Spec.Selector).Matches(labels.Set(d.Spec.Template.Labels)) {
			t.Errorf("Service %s/%s selects no Deployment's Pods", s.Namespace, s.Name)
			continue
		}
		for _, p := range s.Spec.Ports {
			if _, ok := containerPort(d.Spec.Template.Spec.Containers, p.TargetPort.String()); !ok {
				t.Errorf("Service %s/%s: targetPort %s is not a port of its Pods", s.Namespace, s.Name, p.TargetPort.String())
			}
		}
	}
}

// TestNetpolLabStory replays every step against the model: from the start
// of the step (the earlier steps' setups and solves, then its own setup),
// the checks fail; each mistake fails exactly its checks; each alternative
// and the solve fail none.
func TestNetpolLabStory(t *testing.T) {
	l := loadNetpolLab(t)
	fixtures, err := filepath.Abs(filepath.Join(netpolLabDir, "fixtures"))
	if err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for i, step := range l.Steps {
		t.Run(step.ID, func(t *testing.T) {
			start := func(t *testing.T) *storyEnv {
				e := newStoryEnv(t, self, fixtures)
				for _, s := range l.Steps[:i] {
					e.run(t, "setup of "+s.ID, s.Setup)
					e.run(t, "solve of "+s.ID, s.Solve)
				}
				e.run(t, "setup of "+step.ID, step.Setup)
				return e
			}
			t.Run("fails before solve", func(t *testing.T) {
				e := start(t)
				if failing, _ := e.judge(t, step.Checks); len(failing) == 0 {
					t.Fatal("every check passes before the solve")
				}
				// A learner who has not begun is told no mistake: the
				// evidence of each holds only after it.
				for _, m := range step.Mistakes {
					if len(m.Evidence) == 0 {
						continue
					}
					if failing, _ := e.judge(t, m.Evidence); len(failing) == 0 {
						t.Errorf("the evidence of mistake %s holds at the step's start", m.Name)
					}
				}
			})
			for _, m := range step.Mistakes {
				t.Run("mistake "+m.Name, func(t *testing.T) {
					e := start(t)
					e.run(t, m.Name, m.Script)
					want := slices.Sorted(slices.Values(m.Fails))
					if got, why := e.judge(t, step.Checks); !slices.Equal(got, want) {
						t.Fatalf("failing checks %v, want %v\n%s", got, want, why)
					}
					// The learner is told this mistake, and no other that
					// fails the same checks: its evidence holds, theirs not.
					for _, o := range step.Mistakes {
						if !slices.Equal(slices.Sorted(slices.Values(o.Fails)), want) || len(o.Evidence) == 0 {
							continue
						}
						failing, why := e.judge(t, o.Evidence)
						if held := len(failing) == 0; held != (o.Name == m.Name) {
							t.Errorf("evidence of %s held %v after %s\n%s", o.Name, held, m.Name, why)
						}
					}
					// Its way back passes the step.
					if m.Recover == "" {
						t.Fatalf("mistake %s has no way back (recover)", m.Name)
					}
					e.run(t, m.Name+" recover", m.Recover)
					if got, why := e.judge(t, step.Checks); len(got) > 0 {
						t.Fatalf("after its way back, failing checks %v\n%s", got, why)
					}
				})
			}
			t.Run("mutants", func(t *testing.T) {
				storyMutants(t, l, step, start(t))
			})
			for _, a := range step.Alternatives {
				if a.Mutant != "" {
					continue // judged with the mutants
				}
				t.Run("alternative "+a.Name, func(t *testing.T) {
					e := start(t)
					e.run(t, a.Name, a.Script)
					if got, why := e.judge(t, step.Checks); len(got) > 0 {
						t.Fatalf("failing checks %v\n%s", got, why)
					}
				})
			}
			t.Run("passes after solve", func(t *testing.T) {
				e := start(t)
				e.run(t, "solve", step.Solve)
				if got, why := e.judge(t, step.Checks); len(got) > 0 {
					t.Fatalf("failing checks %v\n%s", got, why)
				}
			})
		})
	}
}

// mutantsNotJudged are wrong answers no check of the lab can judge yet,
// with why: labctl test --mutate reports them as survivors. One that a
// check comes to kill must leave the list.
var mutantsNotJudged = map[string]string{}

// storyMutants replays labctl test --mutate in the model: after the
// solve, each mutant of it is applied in place and undone; one the checks
// all pass is a survivor, which fails unless an alternative declares it,
// and a declared one must survive.
func storyMutants(t *testing.T, l *lab.Lab, step lab.Step, e *storyEnv) {
	declared := map[string]bool{}
	for _, a := range step.Alternatives {
		if a.Mutant != "" {
			declared[a.Mutant] = true
		}
	}
	before, err := loadCluster(e.state)
	if err != nil {
		t.Fatal(err)
	}
	e.run(t, "solve", step.Solve)
	after, err := loadCluster(e.state)
	if err != nil {
		t.Fatal(err)
	}
	objects := func(c *fakeCluster) []mutant.Object {
		var out []mutant.Object
		for _, key := range slices.Sorted(maps.Keys(c.Objects)) {
			out = append(out, c.Objects[key])
		}
		return out
	}
	key := func(o mutant.Object) string {
		return mutant.Kind(o) + "/" + mutant.Namespace(o) + "/" + mutant.Name(o)
	}
	made := map[string]bool{}
	for _, m := range mutant.Generate(objects(before), objects(after), l.Cluster.Namespaces) {
		made[m.ID] = true
		c, err := loadCluster(e.state)
		if err != nil {
			t.Fatal(err)
		}
		for _, ed := range m.Edits {
			if ed.From != nil {
				delete(c.Objects, key(ed.From))
			}
			if ed.To != nil {
				c.Objects[key(ed.To)] = storedAs(ed.To)
			}
		}
		if err := c.save(e.state); err != nil {
			t.Fatal(err)
		}
		failing, _ := e.judge(t, step.Checks)
		switch {
		case len(failing) == 0 && mutantsNotJudged[m.ID] != "":
			t.Logf("mutant %s survives, not judged: %s", m.ID, mutantsNotJudged[m.ID])
		case len(failing) > 0 && mutantsNotJudged[m.ID] != "":
			t.Errorf("mutant %s is killed now: remove it from mutantsNotJudged", m.ID)
		case len(failing) == 0 && !declared[m.ID]:
			t.Errorf("mutant %s survives, and no alternative declares it", m.ID)
		case len(failing) > 0 && declared[m.ID]:
			t.Errorf("mutant %s is declared right, but fails %v", m.ID, failing)
		}
		if err := after.save(e.state); err != nil {
			t.Fatal(err)
		}
	}
	for id := range declared {
		if !made[id] {
			t.Errorf("an alternative declares mutant %s, which the solve no longer makes", id)
		}
	}
}

// storedAs is o as the API server stores it, for the one default a mutant
// meets: a NetworkPolicy without policyTypes gets Ingress, and Egress too
// when it has egress rules.
func storedAs(o mutant.Object) mutant.Object {
	spec, _ := o["spec"].(map[string]any)
	if mutant.Kind(o) != "NetworkPolicy" || spec == nil {
		return o
	}
	if types, _ := spec["policyTypes"].([]any); len(types) > 0 {
		return o
	}
	types := []any{"Ingress"}
	if egress, _ := spec["egress"].([]any); len(egress) > 0 {
		types = append(types, "Egress")
	}
	spec["policyTypes"] = types
	return o
}

// storyEnv is one replay: a home standing in for /root, and a fake
// kubectl (this test binary) keeping its cluster in a file.
type storyEnv struct {
	home, bin, state, fixtures string
}

const (
	fakeKubectlState    = "LABCTL_NETPOL_FAKE_KUBECTL_STATE"
	fakeKubectlFixtures = "LABCTL_NETPOL_FAKE_KUBECTL_FIXTURES"
)

func newStoryEnv(t *testing.T, self, fixtures string) *storyEnv {
	t.Helper()
	dir := t.TempDir()
	e := &storyEnv{home: filepath.Join(dir, "root"), bin: filepath.Join(dir, "bin"), state: filepath.Join(dir, "cluster.json"), fixtures: fixtures}
	for _, d := range []string{e.home, e.bin} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	kubectl := fmt.Sprintf("#!/bin/sh\nexec env %s=%q %s=%q %q \"$@\"\n", fakeKubectlState, e.state, fakeKubectlFixtures, fixtures, self)
	for name, text := range map[string]string{"kubectl": kubectl, "sleep": "#!/bin/sh\nexit 0\n"} {
		if err := os.WriteFile(filepath.Join(e.bin, name), []byte(text), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return e
}

// run runs a lab script as the sandbox would, with /root and the fixtures'
// mount point replaced by the replay's own.
func (e *storyEnv) run(t *testing.T, name, script string) {
	t.Helper()
	script = strings.ReplaceAll(script, "/root", e.home)
	script = strings.ReplaceAll(script, "/opt/lab/fixtures", e.fixtures)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", script)
	cmd.Dir = e.home
	cmd.Env = []string{"HOME=" + e.home, "PATH=" + e.bin + ":/usr/bin:/bin", "LANG=C.UTF-8"}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", name, err, out)
	}
}

// judge returns the names of the checks that fail in the model, sorted,
// and a line per check saying what the model found.
func (e *storyEnv) judge(t *testing.T, cs []lab.Check) ([]string, string) {
	t.Helper()
	st, err := loadCluster(e.state)
	if err != nil {
		t.Fatal(err)
	}
	w, err := st.world()
	if err != nil {
		t.Fatal(err)
	}
	var failing []string
	var why strings.Builder
	for _, c := range cs {
		var pass bool
		var got string
		switch {
		case c.Reach != nil:
			opened, detail, err := w.reach(w.standIn(c.Reach.From), c.Reach.To)
			if err != nil {
				t.Fatalf("%s: %v", c.Name, err)
			}
			pass = opened == *c.Reach.Allowed
			got = fmt.Sprintf("opened %v %s", opened, detail)
		case c.Matrix != nil:
			pass, got = w.matrix(c.Matrix)
		case c.Kube != nil && c.Kube.MatchesFile != "", c.File != nil:
			// The real check, on the fake cluster's objects and the
			// replay's home (its parent stands for the sandbox's /).
			r := checks.Run(context.Background(), checks.Env{Root: filepath.Dir(e.home), Kube: st}, []lab.Check{c})[0]
			if r.Status == checks.Error {
				t.Fatalf("%s: %s", c.Name, r.Message)
			}
			pass, got = r.Status == checks.Pass, r.Message
		case c.Kube != nil && c.Kube.Kind == "Deployment" && c.Kube.Field != nil && c.Kube.Field.Path == "spec.template.metadata.labels" && c.Kube.Field.Equals != nil:
			d, ok := w.deployments[c.Kube.Namespace+"/"+c.Kube.Name]
			var want map[string]string
			b, _ := json.Marshal(c.Kube.Field.Equals.Literal)
			if err := json.Unmarshal(b, &want); err != nil {
				t.Fatalf("%s: %v", c.Name, err)
			}
			pass = ok && maps.Equal(d.Spec.Template.Labels, want)
			got = fmt.Sprintf("labels %v", d.Spec.Template.Labels)
		case c.Kube != nil && c.Kube.Kind == "Service" && c.Kube.Field == nil && (c.Kube.Exists == nil || *c.Kube.Exists):
			_, pass = w.services[c.Kube.Name+"."+c.Kube.Namespace]
			got = fmt.Sprintf("Service exists %v", pass)
		default:
			t.Fatalf("check %s is of a kind the model does not judge", c.Name)
		}
		if !pass {
			failing = append(failing, c.Name)
		}
		fmt.Fprintf(&why, "  %-5v %s: %s\n", pass, c.Name, got)
	}
	sort.Strings(failing)
	return failing, why.String()
}

// ---------------------------------------------------------------- the fake kubectl

// fakeCluster is what the fake kubectl keeps: every object applied, by
// kind/namespace/name.
type fakeCluster struct {
	Objects map[string]map[string]any `json:"objects"`
}

// Get and List read the fake cluster as a kube check reads a real one.
func (c *fakeCluster) Get(_ context.Context, _, kind, ns, name string) (map[string]any, error) {
	o, ok := c.Objects[kind+"/"+ns+"/"+name]
	if !ok {
		return nil, apierrors.NewNotFound(schema.GroupResource{Resource: strings.ToLower(kind) + "s"}, name)
	}
	return o, nil
}

func (c *fakeCluster) List(_ context.Context, _, kind, ns, selector string) ([]map[string]any, error) {
	if selector != "" {
		return nil, fmt.Errorf("the fake cluster lists by no selector but the empty one, not %q", selector)
	}
	var out []map[string]any
	for _, key := range slices.Sorted(maps.Keys(c.Objects)) {
		if strings.HasPrefix(key, kind+"/"+ns+"/") {
			out = append(out, c.Objects[key])
		}
	}
	return out, nil
}

func loadCluster(path string) (*fakeCluster, error) {
	c := &fakeCluster{Objects: map[string]map[string]any{}}
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return c, nil
	}
	if err != nil {
		return nil, err
	}
	return c, json.Unmarshal(data, c)
}

func (c *fakeCluster) save(path string) error {
	data, err := json.Marshal(c)
	if err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o600)
}

// kinds maps what kubectl accepts for the kinds the lab's scripts use.
var kinds = map[string]string{
	"networkpolicy": "NetworkPolicy", "networkpolicies": "NetworkPolicy", "netpol": "NetworkPolicy",
	"deployment": "Deployment", "deployments": "Deployment", "deploy": "Deployment",
	"service": "Service", "services": "Service", "svc": "Service",
}

// fakeKubectl does what the lab's scripts ask of kubectl to the cluster
// kept in $LABCTL_NETPOL_FAKE_KUBECTL_STATE, and fails on anything else:
// apply and delete (-f, by name, --all), patch (json remove, merge),
// exec deploy/NAME -- /app dial|get (answered by the model), and rollout
// status and wait, which have nothing to wait for.
func fakeKubectl(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	path := os.Getenv(fakeKubectlState)
	c, err := loadCluster(path)
	if err != nil {
		fmt.Fprintln(stderr, "fake kubectl:", err)
		return 3
	}
	ns, rest := "", []string{}
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "--":
			rest = append(rest, args[i:]...)
			i = len(args)
		case (a == "-n" || a == "--namespace") && i+1 < len(args):
			ns = args[i+1]
			i++
		default:
			rest = append(rest, a)
		}
	}
	flag := func(name string) string {
		for i, a := range rest {
			if a == name && i+1 < len(rest) {
				return rest[i+1]
			}
			if v, ok := strings.CutPrefix(a, name+"="); ok {
				return v
			}
		}
		return ""
	}
	if len(rest) == 0 {
		fmt.Fprintln(stderr, "fake kubectl: no command")
		return 3
	}
	code, err := 0, error(nil)
	switch rest[0] {
	case "rollout", "wait":
	case "apply", "replace":
		err = c.apply(flag("-f"), ns, stdin, stdout, rest[0] == "replace")
	case "delete":
		err = c.delete(rest, flag("-f"), ns, stdin, stdout)
	case "patch":
		if len(rest) < 3 {
			err = errors.New("patch KIND NAME")
		} else {
			err = c.patch(kinds[rest[1]], nsOr(ns), rest[2], flag("--type"), flag("-p"))
		}
	case "exec":
		code, err = c.exec(rest, nsOr(ns), stdout)
	default:
		fmt.Fprintf(stderr, "fake kubectl: %q is not modelled\n", rest[0])
		return 3
	}
	if err != nil {
		fmt.Fprintln(stderr, "fake kubectl:", err)
		return 1
	}
	if err := c.save(path); err != nil {
		fmt.Fprintln(stderr, "fake kubectl:", err)
		return 3
	}
	return code
}

func nsOr(ns string) string {
	if ns == "" {
		return "default"
	}
	return ns
}

func objectKey(o map[string]any, ns string) (string, error) {
	kind, _ := o["kind"].(string)
	meta, _ := o["metadata"].(map[string]any)
	name, _ := meta["name"].(string)
	if n, _ := meta["namespace"].(string); n != "" {
		ns = n
	}
	if kind == "" || name == "" {
		return "", fmt.Errorf("an object without a kind or a name: %v", o)
	}
	return kind + "/" + nsOr(ns) + "/" + name, nil
}

// apply applies the manifests of from (stdin for "-"); replacing sets every
// object as it is written.
func (c *fakeCluster) apply(from, ns string, stdin io.Reader, stdout io.Writer, replacing bool) error {
	objs, err := readManifests(from, stdin)
	if err != nil {
		return err
	}
	for _, o := range objs {
		key, err := objectKey(o, ns)
		if err != nil {
			return err
		}
		switch o["kind"] {
		case "NetworkPolicy":
			var p networkingv1.NetworkPolicy
			if err := strictDecode(o, &p); err != nil {
				return err
			}
			c.Objects[key] = o
		case "Deployment", "Service":
			// Applying the app again keeps what was patched since.
			if _, ok := c.Objects[key]; !ok || replacing {
				c.Objects[key] = o
			}
		default:
			return fmt.Errorf("applying a %v is not modelled", o["kind"])
		}
		fmt.Fprintln(stdout, key, "applied")
	}
	return nil
}

func (c *fakeCluster) delete(rest []string, from, ns string, stdin io.Reader, stdout io.Writer) error {
	if from != "" {
		objs, err := readManifests(from, stdin)
		if err != nil {
			return err
		}
		for _, o := range objs {
			key, err := objectKey(o, ns)
			if err != nil {
				return err
			}
			if _, ok := c.Objects[key]; !ok {
				return fmt.Errorf("%s not found", key)
			}
			delete(c.Objects, key)
			fmt.Fprintln(stdout, key, "deleted")
		}
		return nil
	}
	if len(rest) < 2 || kinds[rest[1]] == "" {
		return fmt.Errorf("delete %v is not modelled", rest)
	}
	prefix := kinds[rest[1]] + "/" + nsOr(ns) + "/"
	if slices.Contains(rest, "--all") {
		for key := range c.Objects {
			if strings.HasPrefix(key, prefix) {
				delete(c.Objects, key)
			}
		}
		return nil
	}
	for _, name := range rest[2:] {
		if strings.HasPrefix(name, "-") {
			continue
		}
		if _, ok := c.Objects[prefix+name]; !ok {
			return fmt.Errorf("%s%s not found", prefix, name)
		}
		delete(c.Objects, prefix+name)
	}
	return nil
}

func (c *fakeCluster) patch(kind, ns, name, typ, patch string) error {
	key := kind + "/" + ns + "/" + name
	o, ok := c.Objects[key]
	if !ok {
		return fmt.Errorf("%s not found", key)
	}
	switch typ {
	case "merge":
		var p map[string]any
		if err := json.Unmarshal([]byte(patch), &p); err != nil {
			return err
		}
		c.Objects[key] = mergePatch(o, p)
	case "json":
		var ops []struct{ Op, Path string }
		if err := json.Unmarshal([]byte(patch), &ops); err != nil {
			return err
		}
		for _, op := range ops {
			if op.Op != "remove" {
				return fmt.Errorf("json patch op %q is not modelled", op.Op)
			}
			if err := jsonRemove(o, strings.Split(strings.TrimPrefix(op.Path, "/"), "/")); err != nil {
				return fmt.Errorf("%s: %w", op.Path, err)
			}
		}
	default:
		return fmt.Errorf("patch type %q is not modelled", typ)
	}
	if kind == "NetworkPolicy" {
		var p networkingv1.NetworkPolicy
		return strictDecode(c.Objects[key], &p)
	}
	return nil
}

func mergePatch(o, p map[string]any) map[string]any {
	for k, v := range p {
		switch pv := v.(type) {
		case nil:
			delete(o, k)
		case map[string]any:
			ov, _ := o[k].(map[string]any)
			if ov == nil {
				ov = map[string]any{}
			}
			o[k] = mergePatch(ov, pv)
		default:
			o[k] = v
		}
	}
	return o
}

func jsonRemove(v any, path []string) error {
	switch n := v.(type) {
	case map[string]any:
		if _, ok := n[path[0]]; !ok {
			return errors.New("no such member")
		}
		if len(path) == 1 {
			delete(n, path[0])
			return nil
		}
		return jsonRemove(n[path[0]], path[1:])
	case []any:
		i, err := strconv.Atoi(path[0])
		if err != nil || i < 0 || i >= len(n) || len(path) == 1 {
			return errors.New("removing an array item is not modelled")
		}
		return jsonRemove(n[i], path[1:])
	}
	return errors.New("no such member")
}

// exec answers `exec deploy/NAME -- /app dial [-timeout T] HOST:PORT` and
// `... /app get [-timeout T] URL` as the app would from that Deployment's
// Pod: exit 0 when the path is open (and, for get, every tier behind it
// answered), 1 when not.
func (c *fakeCluster) exec(rest []string, ns string, stdout io.Writer) (int, error) {
	dash := slices.Index(rest, "--")
	if dash != 2 || !strings.HasPrefix(rest[1], "deploy/") || len(rest) < dash+3 || rest[dash+1] != "/app" {
		return 0, fmt.Errorf("exec %v is not modelled", rest)
	}
	w, err := c.world()
	if err != nil {
		return 0, err
	}
	d, ok := w.deployments[ns+"/"+strings.TrimPrefix(rest[1], "deploy/")]
	if !ok {
		return 1, nil // no Pod to exec into
	}
	cmd := rest[dash+2:]
	if len(cmd) == 4 && cmd[1] == "-timeout" {
		cmd = []string{cmd[0], cmd[3]}
	}
	if len(cmd) != 2 {
		return 0, fmt.Errorf("/app %v is not modelled", cmd)
	}
	src := w.podOf(d)
	var opened bool
	var detail string
	switch cmd[0] {
	case "dial":
		opened, detail, err = w.reach(src, cmd[1])
	case "get":
		opened, detail, err = w.get(src, cmd[1], 0)
	default:
		return 0, fmt.Errorf("/app %v is not modelled", cmd)
	}
	if err != nil {
		return 0, err
	}
	fmt.Fprintf(stdout, "%s %s: open %v %s\n", cmd[0], cmd[1], opened, detail)
	if !opened {
		return 1, nil
	}
	return 0, nil
}

// readManifests reads the objects of a file, a directory's .yaml, .yml and
// .json files, or "-" (r); fixtures are read where they are, not at their
// mount point.
func readManifests(from string, r io.Reader) ([]map[string]any, error) {
	var readers []io.Reader
	if from == "-" {
		readers = append(readers, r)
	} else {
		if rest, ok := strings.CutPrefix(from, "/opt/lab/fixtures"); ok && os.Getenv(fakeKubectlFixtures) != "" {
			from = os.Getenv(fakeKubectlFixtures) + rest
		}
		fi, err := os.Stat(from)
		if err != nil {
			return nil, err
		}
		files := []string{from}
		if fi.IsDir() {
			files = nil
			entries, err := os.ReadDir(from)
			if err != nil {
				return nil, err
			}
			for _, e := range entries {
				if ext := filepath.Ext(e.Name()); !e.IsDir() && (ext == ".yaml" || ext == ".yml" || ext == ".json") {
					files = append(files, filepath.Join(from, e.Name()))
				}
			}
			if len(files) == 0 {
				return nil, fmt.Errorf("no objects passed to apply: %s holds no manifest", from)
			}
		}
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				return nil, err
			}
			readers = append(readers, bytes.NewReader(data))
		}
	}
	var out []map[string]any
	for _, rd := range readers {
		dec := utilyaml.NewYAMLOrJSONDecoder(rd, 4096)
		for {
			var o map[string]any
			err := dec.Decode(&o)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return nil, err
			}
			if len(o) > 0 {
				out = append(out, o)
			}
		}
	}
	return out, nil
}

// strictDecode decodes o into v, refusing fields v does not have.
func strictDecode(o map[string]any, v any) error {
	data, err := json.Marshal(o)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%v %v: %w", o["kind"], o["metadata"], err)
	}
	return nil
}

// ---------------------------------------------------------------- the model

// netpolWorld is the cluster as the lab's checks see it: one Pod per
// Deployment, standing for all of them (their labels and ports are the
// same), CoreDNS, the Services, the Kubernetes API on a node's address,
// and the NetworkPolicies.
type netpolWorld struct {
	namespaces  map[string]labels.Set
	deployments map[string]appsv1.Deployment
	pods        []netpolPod
	services    map[string]corev1.Service
	policies    []networkingv1.NetworkPolicy
}

// netpolPod is a Pod, or an address outside the Pod network (ns empty).
type netpolPod struct {
	ns, deployment string
	labels         labels.Set
	ip             netip.Addr
	containers     []corev1.Container
}

var (
	apiServer = netpolPod{ip: netip.MustParseAddr("172.18.0.2")}
	coreDNS   = netpolPod{ns: "kube-system", labels: labels.Set{"k8s-app": "kube-dns"}, ip: netip.MustParseAddr("10.244.0.2"),
		containers: []corev1.Container{{Ports: []corev1.ContainerPort{
			{Name: "dns", ContainerPort: 53, Protocol: corev1.ProtocolUDP},
			{Name: "dns-tcp", ContainerPort: 53, Protocol: corev1.ProtocolTCP}}}}}
)

func (c *fakeCluster) world() (*netpolWorld, error) {
	w := &netpolWorld{namespaces: map[string]labels.Set{}, deployments: map[string]appsv1.Deployment{}, services: map[string]corev1.Service{}}
	for _, ns := range []string{"shop", "tools", "kube-system", "default"} {
		w.namespaces[ns] = labels.Set{"kubernetes.io/metadata.name": ns}
	}
	keys := slices.Sorted(maps.Keys(c.Objects))
	for _, key := range keys {
		o := c.Objects[key]
		var err error
		switch o["kind"] {
		case "Deployment":
			var d appsv1.Deployment
			if err = strictDecode(o, &d); err == nil {
				d.Namespace = strings.Split(key, "/")[1]
				w.deployments[d.Namespace+"/"+d.Name] = d
			}
		case "Service":
			var s corev1.Service
			if err = strictDecode(o, &s); err == nil {
				s.Namespace = strings.Split(key, "/")[1]
				w.services[s.Name+"."+s.Namespace] = s
			}
		case "NetworkPolicy":
			var p networkingv1.NetworkPolicy
			if err = strictDecode(o, &p); err == nil {
				p.Namespace = strings.Split(key, "/")[1]
				w.policies = append(w.policies, p)
			}
		}
		if err != nil {
			return nil, err
		}
	}
	for i, key := range slices.Sorted(maps.Keys(w.deployments)) {
		d := w.deployments[key]
		w.pods = append(w.pods, netpolPod{ns: d.Namespace, deployment: d.Name, labels: labels.Set(d.Spec.Template.Labels),
			ip: netip.AddrFrom4([4]byte{10, 244, 1, byte(10 + i)}), containers: d.Spec.Template.Spec.Containers})
	}
	w.pods = append(w.pods, coreDNS)
	return w, nil
}

func (w *netpolWorld) podOf(d appsv1.Deployment) netpolPod {
	for _, p := range w.pods {
		if p.ns == d.Namespace && p.deployment == d.Name {
			return p
		}
	}
	panic("no Pod for " + d.Name)
}

// standIn is a reach check's Pod: every label of the first running Pod its
// labels select, else exactly its labels; a new address.
func (w *netpolWorld) standIn(f lab.ReachFrom) netpolPod {
	p := netpolPod{ns: f.Namespace, labels: labels.Set(f.Labels), ip: netip.MustParseAddr("10.244.9.9")}
	for _, real := range w.pods {
		if real.ns == f.Namespace && labels.SelectorFromSet(f.Labels).Matches(real.labels) {
			p.labels = real.labels
			break
		}
	}
	return p
}

// reach says whether src opens a TCP connection to host:port, looking the
// name up first, as a reach check's Pod and /app dial do.
func (w *netpolWorld) reach(src netpolPod, to string) (bool, string, error) {
	host, port, err := lab.SplitReachTarget(to)
	if err != nil {
		return false, "", err
	}
	if ok, _ := w.allowed(src, coreDNS, 53, corev1.ProtocolUDP); !ok {
		return false, "the name does not resolve (DNS unreachable)", nil
	}
	dsts, dport, err := w.resolve(src, host, port)
	if err != nil || len(dsts) == 0 {
		return false, fmt.Sprintf("%s does not resolve or has no endpoints (%v)", host, err), nil
	}
	var results []bool
	var why string
	for _, d := range dsts {
		ok, detail := w.allowed(src, d, dport(d), corev1.ProtocolTCP)
		results = append(results, ok)
		why = detail
	}
	if slices.Contains(results, !results[0]) {
		return false, "", fmt.Errorf("%s's endpoints disagree about %s: %v", to, src.labels, results)
	}
	return results[0], why, nil
}

// matrix judges a matrix check as labctl does: one prober per source, with
// exactly its labels, tries every target but its own prober; it says
// whether every cell is as expected, and names the wrong ones.
func (w *netpolWorld) matrix(m *lab.MatrixCheck) (bool, string) {
	probers := make([]netpolPod, len(m.Sources))
	for i, s := range m.Sources {
		var ports []corev1.ContainerPort
		for _, p := range m.ProberPorts(s.Name) {
			ports = append(ports, corev1.ContainerPort{Name: "probe-" + strconv.Itoa(p), ContainerPort: int32(p), Protocol: corev1.ProtocolTCP})
		}
		probers[i] = netpolPod{ns: s.Namespace, labels: labels.Set(s.Labels), ip: netip.AddrFrom4([4]byte{10, 244, 8, byte(i + 1)}),
			containers: []corev1.Container{{Ports: ports}}}
	}
	want := m.Expected()
	var wrong []string
	for i, s := range m.Sources {
		for j, tg := range m.Targets {
			var opened bool
			switch {
			case tg.Source == s.Name:
				continue
			case tg.Source != "":
				k := slices.IndexFunc(m.Sources, func(o lab.MatrixSource) bool { return o.Name == tg.Source })
				opened, _ = w.allowed(probers[i], probers[k], tg.ProberPort(), corev1.ProtocolTCP)
			default:
				var err error
				if opened, _, err = w.reach(probers[i], tg.To); err != nil {
					return false, err.Error()
				}
			}
			if opened != want[i][j] {
				wrong = append(wrong, fmt.Sprintf("%s->%s opened %v", s.Name, tg.Name, opened))
			}
		}
	}
	return len(wrong) == 0, "wrong cells: " + strings.Join(wrong, ", ")
}

// get says whether src gets an answer from url, as /app get asks: the
// connection opens, and the tier behind it reaches the next one.
func (w *netpolWorld) get(src netpolPod, rawURL string, depth int) (bool, string, error) {
	u, err := url.Parse(rawURL)
	if err != nil || depth > 3 {
		return false, "", fmt.Errorf("get %s: %v", rawURL, err)
	}
	port := u.Port()
	if port == "" {
		port = "80"
	}
	to := u.Hostname() + ":" + port
	ok, detail, err := w.reach(src, to)
	if !ok || err != nil {
		return ok, detail, err
	}
	host, p, _ := lab.SplitReachTarget(to)
	dsts, _, err := w.resolve(src, host, p)
	if err != nil {
		return false, "", err
	}
	for _, d := range dsts {
		c := d.containers[0]
		switch envValue(c, "ROLE") {
		case "web":
			if ok, detail, err := w.get(d, envValue(c, "API_URL"), depth+1); !ok || err != nil {
				return false, "web: api unreachable: " + detail, err
			}
		case "api":
			if ok, detail, err := w.reach(d, envValue(c, "DB_ADDR")); !ok || err != nil {
				return false, "api: db unreachable: " + detail, err
			}
		}
	}
	return true, "", nil
}

// resolve finds the endpoints of a Service name (name, or name.namespace)
// and the port each listens on for the Service's port.
func (w *netpolWorld) resolve(src netpolPod, host string, port int) ([]netpolPod, func(netpolPod) int, error) {
	if host == "kubernetes.default" && port == 443 {
		return []netpolPod{apiServer}, func(netpolPod) int { return 6443 }, nil
	}
	if host == "kube-dns.kube-system" && port == 53 {
		return []netpolPod{coreDNS}, func(netpolPod) int { return 53 }, nil
	}
	name, ns, _ := strings.Cut(host, ".")
	if ns == "" {
		ns = src.ns
	}
	s, ok := w.services[name+"."+ns]
	if !ok {
		return nil, nil, fmt.Errorf("no Service %s in %s", name, ns)
	}
	i := slices.IndexFunc(s.Spec.Ports, func(p corev1.ServicePort) bool { return int(p.Port) == port })
	if i < 0 {
		return nil, nil, fmt.Errorf("Service %s has no port %d", host, port)
	}
	target := s.Spec.Ports[i].TargetPort.String()
	var out []netpolPod
	for _, p := range w.pods {
		if p.ns == ns && len(s.Spec.Selector) > 0 && labels.SelectorFromSet(s.Spec.Selector).Matches(p.labels) {
			out = append(out, p)
		}
	}
	return out, func(p netpolPod) int {
		cp, _ := containerPort(p.containers, target)
		return int(cp.ContainerPort)
	}, nil
}

// allowed applies NetworkPolicy: src's egress, then dst's ingress.
func (w *netpolWorld) allowed(src, dst netpolPod, port int, proto corev1.Protocol) (bool, string) {
	if !w.admits(src, dst, port, proto, networkingv1.PolicyTypeEgress) {
		return false, "src's egress policies drop it"
	}
	if !w.admits(dst, src, port, proto, networkingv1.PolicyTypeIngress) {
		return false, "dst's ingress policies drop it"
	}
	return true, ""
}

// admits says whether the policies that select pod in the direction dir
// let the connection with peer through; a Pod that none selects admits
// everything, and so does an address outside the Pod network.
func (w *netpolWorld) admits(pod, peer netpolPod, port int, proto corev1.Protocol, dir networkingv1.PolicyType) bool {
	if pod.ns == "" {
		return true
	}
	isolated := false
	// The destination's ports decide named ports.
	dst := peer
	if dir == networkingv1.PolicyTypeIngress {
		dst = pod
	}
	for _, p := range w.policies {
		if p.Namespace != pod.ns || !selects(&p.Spec.PodSelector, pod.labels) || !hasType(p.Spec, dir) {
			continue
		}
		isolated = true
		if dir == networkingv1.PolicyTypeIngress {
			for _, r := range p.Spec.Ingress {
				if w.peersMatch(r.From, peer, p.Namespace) && portsMatch(r.Ports, dst, port, proto) {
					return true
				}
			}
		} else {
			for _, r := range p.Spec.Egress {
				if w.peersMatch(r.To, peer, p.Namespace) && portsMatch(r.Ports, dst, port, proto) {
					return true
				}
			}
		}
	}
	return !isolated
}

func hasType(s networkingv1.NetworkPolicySpec, dir networkingv1.PolicyType) bool {
	if len(s.PolicyTypes) == 0 {
		return dir == networkingv1.PolicyTypeIngress || len(s.Egress) > 0
	}
	return slices.Contains(s.PolicyTypes, dir)
}

func selects(s *metav1.LabelSelector, l labels.Set) bool {
	sel, err := metav1.LabelSelectorAsSelector(s)
	return err == nil && sel.Matches(l)
}

func (w *netpolWorld) peersMatch(peers []networkingv1.NetworkPolicyPeer, p netpolPod, policyNS string) bool {
	if len(peers) == 0 {
		return true
	}
	for _, peer := range peers {
		switch {
		case peer.IPBlock != nil:
			if inCIDR(peer.IPBlock.CIDR, p.ip) && !slices.ContainsFunc(peer.IPBlock.Except, func(e string) bool { return inCIDR(e, p.ip) }) {
				return true
			}
		case p.ns == "":
			// A selector never matches an address outside the Pod network.
		case peer.NamespaceSelector != nil:
			if selects(peer.NamespaceSelector, w.namespaces[p.ns]) && (peer.PodSelector == nil || selects(peer.PodSelector, p.labels)) {
				return true
			}
		default:
			if p.ns == policyNS && selects(peer.PodSelector, p.labels) {
				return true
			}
		}
	}
	return false
}

func inCIDR(cidr string, ip netip.Addr) bool {
	pfx, err := netip.ParsePrefix(cidr)
	return err == nil && pfx.Contains(ip)
}

func portsMatch(ports []networkingv1.NetworkPolicyPort, dst netpolPod, port int, proto corev1.Protocol) bool {
	if len(ports) == 0 {
		return true
	}
	for _, p := range ports {
		pp := corev1.ProtocolTCP
		if p.Protocol != nil {
			pp = *p.Protocol
		}
		if pp != proto {
			continue
		}
		switch {
		case p.Port == nil:
			return true
		case p.Port.Type == intstr.Int && p.Port.IntValue() == port:
			return true
		case p.Port.Type == intstr.String:
			if cp, ok := containerPort(dst.containers, p.Port.StrVal); ok && int(cp.ContainerPort) == port && cp.Protocol == proto {
				return true
			}
		}
	}
	return false
}

// containerPort finds a port of the containers by name or number.
func containerPort(cs []corev1.Container, nameOrNumber string) (corev1.ContainerPort, bool) {
	for _, c := range cs {
		for _, p := range c.Ports {
			if p.Protocol == "" {
				p.Protocol = corev1.ProtocolTCP
			}
			if p.Name == nameOrNumber || strconv.Itoa(int(p.ContainerPort)) == nameOrNumber {
				return p, true
			}
		}
	}
	return corev1.ContainerPort{}, false
}

func envValue(c corev1.Container, name string) string {
	for _, e := range c.Env {
		if e.Name == name {
			return e.Value
		}
	}
	return ""
}
