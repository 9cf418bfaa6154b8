//go:build e2e

package class

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/labctl/labctl/cmd/labctl/e2etest"
	"github.com/labctl/labctl/internal/statusline"
	"github.com/labctl/labctl/provision/docker"
	"github.com/labctl/labctl/provision/kind"
)

// The class cluster of the class tests, made as an instructor makes one,
// by `labctl class cluster create`'s own function: a kind cluster from
// labctl's node image (which holds the control-plane images) with the
// sandbox image loaded into it, the add-ons that enforce NetworkPolicy
// (kube-router) and bind claims (local-path, the default StorageClass), and
// a bound on each Pod's processes. LABCTL_CLASS_HOST=keep keeps it after
// the tests and reuses it the next time.

const classHostName = "labctl-classhost"

type classHost struct {
	kubeconfig string
	cs         kubernetes.Interface
	kind       *kind.ClassCluster
}

// newClassHost is the class cluster, made by the first test that needs one
// and shared by the others (TestMain removes it after the last). Each test
// takes the heavy place while it uses it.
func newClassHost(tb testing.TB) *classHost {
	tb.Helper()
	e2etest.Heavy(tb)
	shared.Do(func() { shared.h, shared.remove, shared.err = makeClassHost(context.Background()) })
	if shared.err != nil {
		tb.Fatal(shared.err)
	}
	return shared.h
}

var shared struct {
	sync.Once
	h      *classHost
	remove func() error
	err    error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if shared.remove != nil {
		if err := shared.remove(); err != nil {
			fmt.Fprintln(os.Stderr, "removing the class cluster:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// makeClassHost makes the class cluster (or, with LABCTL_CLASS_HOST=keep,
// reuses the one kept), and returns what removes it.
func makeClassHost(ctx context.Context) (*classHost, func() error, error) {
	node, sandboxImage := e2etest.Images()
	keep := os.Getenv("LABCTL_CLASS_HOST") == "keep"
	dir := filepath.Join(os.TempDir(), "labctl-classhost")
	if !keep {
		var err error
		if dir, err = os.MkdirTemp("", "labctl-classhost-"); err != nil {
			return nil, nil, err
		}
	} else if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, nil, err
	}
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if !keep {
		// A cluster left by an interrupted run is made afresh.
		if _, err := kind.DeleteClassCluster(ctx, classHostName, kubeconfig); err != nil {
			return nil, nil, err
		}
	}
	remove := func() error {
		if keep {
			return nil
		}
		_, err := kind.DeleteClassCluster(context.Background(), classHostName, kubeconfig)
		return errors.Join(err, os.RemoveAll(dir))
	}
	fail := func(err error) (*classHost, func() error, error) {
		return nil, nil, errors.Join(err, remove())
	}
	k, err := kind.CreateClassCluster(ctx, kind.ClassClusterOptions{Name: classHostName, NodeImage: node, SandboxImage: sandboxImage, Kubeconfig: kubeconfig})
	if err != nil {
		return fail(err)
	}
	raw, err := os.ReadFile(k.Kubeconfig)
	if err != nil {
		return fail(err)
	}
	cfg, err := clientcmd.RESTConfigFromKubeConfig(raw)
	if err != nil {
		return fail(err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return fail(err)
	}
	return &classHost{kubeconfig: k.Kubeconfig, cs: cs, kind: k}, remove, nil
}

// load puts images of the local engine on the class cluster's node, as an
// instructor does with kind load docker-image.
func (h *classHost) load(tb testing.TB, refs ...string) {
	tb.Helper()
	ctx := context.Background()
	engine, err := docker.NewEngine(ctx)
	if err != nil {
		tb.Fatal(err)
	}
	defer engine.Close()
	if err := h.kind.LoadImages(ctx, engine, refs); err != nil {
		tb.Fatal(err)
	}
}

// config is a class on the host, with its default storage class and the
// sandbox image loaded into its node.
func (h *classHost) config(prefix string) Config {
	_, sandboxImage := e2etest.Images()
	return Config{Kubeconfig: h.kubeconfig, Prefix: prefix, SandboxImage: sandboxImage}
}

// testClassClusterAgain runs `class cluster create`'s function again on the
// class cluster, which is reused as it is (no image loaded again, the
// add-ons applied), then on the same cluster without its mark, as a kind
// cluster of someone else's, which create and delete both refuse.
func testClassClusterAgain(t *testing.T, h *classHost) {
	ctx := context.Background()
	node, sandboxImage := e2etest.Images()
	opts := kind.ClassClusterOptions{Name: classHostName, NodeImage: node, SandboxImage: sandboxImage, Kubeconfig: h.kubeconfig}
	var out bytes.Buffer
	opts.Status = statusline.New(&out, statusline.Options{NoColor: true})
	start := time.Now()
	again, err := kind.CreateClassCluster(ctx, opts)
	if err != nil {
		t.Fatalf("create again: %v\n%s", err, out.String())
	}
	t.Logf("create again took %s", time.Since(start).Round(time.Millisecond))
	if again.Created || again.Context != "kind-"+classHostName || again.Kubeconfig != h.kubeconfig ||
		!strings.Contains(out.String(), "Reusing class cluster "+classHostName) || strings.Contains(out.String(), "Loading images") {
		t.Errorf("create again: %+v:\n%s", again, out.String())
	}

	setMark := func(v *string) {
		t.Helper()
		patch := `{"metadata":{"labels":{"labctl.dev/class-cluster":null}}}`
		if v != nil {
			patch = fmt.Sprintf(`{"metadata":{"labels":{"labctl.dev/class-cluster":%q}}}`, *v)
		}
		nodes, err := h.cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range nodes.Items {
			if _, err := h.cs.CoreV1().Nodes().Patch(ctx, n.Name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	setMark(nil)
	name := classHostName
	defer setMark(&name)
	opts.Status = nil
	if _, err := kind.CreateClassCluster(ctx, opts); err == nil || !strings.Contains(err.Error(), "is not a class cluster made by labctl: give another --name") {
		t.Errorf("create on a kind cluster that is not a class cluster: %v", err)
	}
	if existed, err := kind.DeleteClassCluster(ctx, classHostName, h.kubeconfig); err == nil || existed || !strings.Contains(err.Error(), "kind delete cluster --name "+classHostName) {
		t.Errorf("delete of a kind cluster that is not a class cluster: %v, %v", existed, err)
	}
	if _, err := h.cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{}); err != nil {
		t.Fatalf("the cluster is gone after a refused delete: %v", err)
	}
}
