package provision

import (
	"context"
	"crypto/sha256"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/labctl/labctl/checks"
	"github.com/labctl/labctl/lab"
)

// noClusterLab is a lab with no cluster (cluster.provider: none).
func noClusterLab() *lab.Lab {
	l := &lab.Lab{}
	l.Metadata.Name = "nightly"
	l.Metadata.Language = "en"
	l.Cluster.Provider = lab.ProviderNone
	return l
}

// A lab with no cluster asks no cluster for anything: no token is issued,
// the checker gets no credentials, the learner gets no kubeconfig but a
// kubectl that says why, and there are no namespaces to reset or record.
func TestLiveWithNoClusterAsksNoCluster(t *testing.T) {
	issued := issuing(t, "never")
	rt := &fakeRuntime{}
	e := NewLive(noClusterLab(), rt, Identity{}, Identity{})
	ctx := context.Background()

	got, err := e.RunChecks(ctx, checks.Round{Checks: []lab.Check{{Name: "a", File: &lab.FileCheck{Path: "/root/a"}}}})
	if err != nil || len(got) != 1 {
		t.Fatalf("RunChecks: %v, %v", got, err)
	}
	if req := rt.requests[0]; req.Kube != nil || len(req.Checks) != 1 {
		t.Errorf("the checker's request %+v, want its checks and no cluster credentials", req)
	}

	if err := e.RecreateSandbox(ctx); err != nil {
		t.Fatal(err)
	}
	if _, ok := rt.files["/root/.kube/config"]; ok {
		t.Error("a lab with no cluster got a kubeconfig")
	}
	if len(rt.execs) != 1 {
		t.Fatalf("%d execs, want the one that writes the stand-in for kubectl", len(rt.execs))
	}
	x := rt.execs[0]
	script, _ := io.ReadAll(x.Stdin)
	if !strings.Contains(strings.Join(x.Cmd, " "), NoClusterKubectl) || !strings.Contains(string(script), "this lab has no Kubernetes cluster") ||
		!strings.Contains(string(script), "exit 1") || x.User != "root" {
		t.Errorf("the stand-in written by %q as %q:\n%s", x.Cmd, x.User, script)
	}

	if err := e.ResetNamespaces(ctx); err != nil {
		t.Errorf("ResetNamespaces: %v", err)
	}
	if rec, err := e.namespacesRecord(ctx); err != nil || rec != sha256.Sum256(nil) {
		t.Errorf("the namespaces' record: %x, %v; want the record of nothing", rec, err)
	}
	if _, err := e.LearnerConfig(ctx); !errors.Is(err, ErrNoCluster) {
		t.Errorf("LearnerConfig: %v, want ErrNoCluster", err)
	}
	if *issued != 0 {
		t.Errorf("%d tokens issued, want none", *issued)
	}
}

// A stand-in that cannot be written is an error that says so.
func TestLiveWithNoClusterSaysWhenKubectlCannotBeReplaced(t *testing.T) {
	rt := &fakeRuntime{execCode: 1}
	e := NewLive(noClusterLab(), rt, Identity{}, Identity{})
	err := e.WriteKubeconfig(context.Background())
	if err == nil || !strings.Contains(err.Error(), "writing the sandbox's kubectl of a lab with no cluster: exit 1") {
		t.Errorf("err = %v", err)
	}
}
