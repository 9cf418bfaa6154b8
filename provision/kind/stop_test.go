package kind

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/labctl/labctl/lab"
	"github.com/labctl/labctl/provision"
)

func TestNodeOrderPutsTheControlPlaneFirst(t *testing.T) {
	got := nodeOrder([]string{"c-worker2", "c-control-plane", "c-worker"}, "c-control-plane")
	if want := []string{"c-control-plane", "c-worker", "c-worker2"}; !slices.Equal(got, want) {
		t.Errorf("nodeOrder = %v, want %v", got, want)
	}
}

func TestChangedAddresses(t *testing.T) {
	was := map[string]string{"c-control-plane": "172.18.0.2", "c-worker": "172.18.0.3", "gone": "172.18.0.9"}
	now := map[string]string{"c-control-plane": "172.18.0.2", "c-worker": "172.18.0.4", "new": "172.18.0.5"}
	got := changedAddresses(was, now)
	if want := []string{"c-worker (172.18.0.3 -> 172.18.0.4)"}; !slices.Equal(got, want) {
		t.Errorf("changedAddresses = %v, want %v", got, want)
	}
	if got := changedAddresses(nil, now); len(got) != 0 {
		t.Errorf("nothing kept at stop: changedAddresses = %v, want none", got)
	}
	m := movedMessage(got)
	for _, s := range []string{"c-worker (172.18.0.3 -> 172.18.0.4)", "labctl down", "labctl up", "/root and progress are kept"} {
		if !strings.Contains(m, s) {
			t.Errorf("movedMessage lacks %q: %s", s, m)
		}
	}
}

func TestNotReadyNamesTheNodes(t *testing.T) {
	node := func(name string, ready corev1.ConditionStatus) corev1.Node {
		return corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name},
			Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: ready}}}}
	}
	if got := notReady(nil); got == "" {
		t.Error("no node: notReady says all are Ready")
	}
	if got := notReady([]corev1.Node{node("a", corev1.ConditionTrue), node("b", corev1.ConditionUnknown)}); got != "nodes not Ready: b" {
		t.Errorf("notReady = %q", got)
	}
	if got := notReady([]corev1.Node{node("a", corev1.ConditionTrue)}); got != "" {
		t.Errorf("all Ready: notReady = %q", got)
	}
}

// The stop mark: a stopped lab is seen as such until start or down
// clears it, and up refuses it, naming start, before it touches Docker.
func TestStoppedMark(t *testing.T) {
	t.Setenv("LABCTL_STATE_DIR", t.TempDir())
	l := &lab.Lab{}
	l.Metadata.Name = "keep"
	if Stopped("keep") {
		t.Fatal("a lab never stopped is Stopped")
	}
	dir, err := stateDir("keep")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, stoppedFile), []byte(`{"nodes":{"labctl-keep-control-plane":"172.18.0.2"}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if !Stopped("keep") {
		t.Fatal("a stopped lab is not Stopped")
	}
	if rec := readStopped(dir); rec.Nodes["labctl-keep-control-plane"] != "172.18.0.2" {
		t.Errorf("readStopped = %+v", rec)
	}
	_, err = Up(context.Background(), Options{Lab: l})
	if err == nil || !strings.Contains(err.Error(), "labctl start") || !strings.Contains(err.Error(), "stopped") {
		t.Errorf("up on a stopped lab: %v, want it refused naming labctl start", err)
	}
	if err := clearStopped(dir); err != nil {
		t.Fatal(err)
	}
	if Stopped("keep") {
		t.Error("Stopped after clearStopped")
	}
	if err := clearStopped(dir); err != nil {
		t.Errorf("clearing twice: %v", err)
	}
}

func TestErrStoppedIsNotUp(t *testing.T) {
	err := errors.Join(errors.New("x"), ErrStopped)
	if !errors.Is(err, provision.ErrNotUp) || !errors.Is(err, ErrStopped) {
		t.Error("ErrStopped is not an ErrNotUp")
	}
	if errors.Is(provision.ErrNotUp, ErrStopped) {
		t.Error("ErrNotUp is an ErrStopped")
	}
	if !strings.Contains(ErrStopped.Error(), "labctl start") || strings.Contains(ErrStopped.Error(), "labctl up") {
		t.Errorf("ErrStopped says %q", ErrStopped)
	}
}
