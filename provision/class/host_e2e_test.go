//go:build e2e

package class

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/labctl/labctl/images"
	"github.com/labctl/labctl/internal/docker"
	"github.com/labctl/labctl/internal/e2etest"
	"github.com/labctl/labctl/lab"
	"github.com/labctl/labctl/provision/kind"
)

// The class cluster of the class tests, made as an instructor makes one: a
// kind cluster from labctl's node image (which holds the control-plane
// images) with the sandbox image loaded into it, and the add-ons that
// enforce NetworkPolicy (kube-router) and bind claims (local-path, the
// default StorageClass). LABCTL_CLASS_HOST=keep keeps it after the test
// and reuses it the next time.

const classHostName = "classhost"

// pidsPatch bounds the processes of each Pod on the class cluster's nodes.
const pidsPatch = "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\npodPidsLimit: 4096\n"

type classHost struct {
	kubeconfig string
	cs         kubernetes.Interface
}

func newClassHost(tb testing.TB) *classHost {
	tb.Helper()
	e2etest.Heavy(tb)
	ctx := context.Background()
	node, sandboxImage := e2etest.Images()
	keep := os.Getenv("LABCTL_CLASS_HOST") == "keep"
	dir := tb.TempDir()
	if keep {
		dir = filepath.Join(os.TempDir(), "labctl-classhost")
		if err := os.MkdirAll(dir, 0o700); err != nil {
			tb.Fatal(err)
		}
	}
	kubeconfig := filepath.Join(dir, "kubeconfig")
	k := kind.NewHostCluster(classHostName, kubeconfig)
	exists, err := k.Exists(ctx)
	if err != nil {
		tb.Fatal(err)
	}
	if exists && !keep {
		if err := k.Delete(ctx); err != nil {
			tb.Fatal(err)
		}
		exists = false
	}
	if !exists {
		ks := images.KindSettingsFor(node)
		// An instructor bounds each Pod's processes on the class cluster.
		patches := append(slices.Clone(ks.KubeadmConfigPatches), pidsPatch)
		if err := k.Create(ctx, kind.ClusterConfig{NodeImage: node, DisableDefaultCNI: ks.DisableDefaultCNI, KubeadmPatches: patches, WaitForReady: 3 * time.Minute}); err != nil {
			tb.Fatal(err)
		}
	}
	engine, err := docker.NewEngine(ctx)
	if err != nil {
		tb.Fatal(err)
	}
	defer engine.Close()
	if !exists {
		if err := k.LoadImages(ctx, engine, []string{sandboxImage}); err != nil {
			tb.Fatal(err)
		}
	}
	if err := k.StartAddons(ctx, engine, lab.AddonNetworkPolicy, lab.AddonStorage); err != nil {
		tb.Fatal(err)
	}
	if !keep {
		tb.Cleanup(func() {
			if err := k.Delete(context.Background()); err != nil {
				tb.Error(err)
			}
		})
	}
	raw, err := os.ReadFile(kubeconfig)
	if err != nil {
		tb.Fatal(err)
	}
	cfg, err := clientcmd.RESTConfigFromKubeConfig(raw)
	if err != nil {
		tb.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	return &classHost{kubeconfig: kubeconfig, cs: cs}
}

// config is a class on the host, with its default storage class and the
// sandbox image loaded into its node.
func (h *classHost) config(prefix string) Config {
	_, sandboxImage := e2etest.Images()
	return Config{Kubeconfig: h.kubeconfig, Prefix: prefix, SandboxImage: sandboxImage}
}
