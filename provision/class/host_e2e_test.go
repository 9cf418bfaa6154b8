//go:build e2e

package class

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/labctl/labctl/cmd/labctl/e2etest"
	"github.com/labctl/labctl/images"
	"github.com/labctl/labctl/lab"
	"github.com/labctl/labctl/provision/docker"
	"github.com/labctl/labctl/provision/kind"
)

// The class cluster of the class tests, made as an instructor makes one: a
// kind cluster from labctl's node image (which holds the control-plane
// images) with the sandbox image loaded into it, and the add-ons that
// enforce NetworkPolicy (kube-router) and bind claims (local-path, the
// default StorageClass). LABCTL_CLASS_HOST=keep keeps it after the tests
// and reuses it the next time.

const classHostName = "classhost"

// pidsPatch bounds the processes of each Pod on the class cluster's nodes.
const pidsPatch = "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\npodPidsLimit: 4096\n"

type classHost struct {
	kubeconfig string
	cs         kubernetes.Interface
	kind       *kind.HostCluster
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
	k := kind.NewHostCluster(classHostName, kubeconfig)
	exists, err := k.Exists(ctx)
	if err != nil {
		return nil, nil, err
	}
	if exists && !keep {
		if err := k.Delete(ctx); err != nil {
			return nil, nil, err
		}
		exists = false
	}
	remove := func() error {
		if keep {
			return nil
		}
		return errors.Join(k.Delete(context.Background()), os.RemoveAll(dir))
	}
	fail := func(err error) (*classHost, func() error, error) {
		return nil, nil, errors.Join(err, remove())
	}
	if !exists {
		ks := images.KindSettingsFor(node)
		// An instructor bounds each Pod's processes on the class cluster.
		patches := append(slices.Clone(ks.KubeadmConfigPatches), pidsPatch)
		if err := k.Create(ctx, kind.ClusterConfig{NodeImage: node, DisableDefaultCNI: ks.DisableDefaultCNI, KubeadmPatches: patches, WaitForReady: 3 * time.Minute}); err != nil {
			return fail(err)
		}
	}
	engine, err := docker.NewEngine(ctx)
	if err != nil {
		return fail(err)
	}
	defer engine.Close()
	if !exists {
		if err := k.LoadImages(ctx, engine, []string{sandboxImage}); err != nil {
			return fail(err)
		}
	}
	if err := k.StartAddons(ctx, engine, lab.AddonNetworkPolicy, lab.AddonStorage); err != nil {
		return fail(err)
	}
	raw, err := os.ReadFile(kubeconfig)
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
	return &classHost{kubeconfig: kubeconfig, cs: cs, kind: k}, remove, nil
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
