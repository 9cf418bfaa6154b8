//go:build e2e

package class

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/labctl/labctl/images"
	"github.com/labctl/labctl/internal/docker"
	"github.com/labctl/labctl/internal/e2etest"
	"github.com/labctl/labctl/provision/kind"
)

// The class cluster of the class tests: a kind cluster made from labctl's
// node image (which holds the control-plane images), with labctl's sandbox
// image loaded into it and a storage class whose volumes are directories
// on the node. LABCTL_CLASS_HOST=keep keeps it after the test and reuses
// it the next time.

const (
	classHostName    = "classhost"
	classStorage     = "labctl-e2e-hostpath"
	classHostPathDir = "/var/local/labctl-e2e"
)

type classHost struct {
	kubeconfig string
	cs         kubernetes.Interface
}

func newClassHost(tb testing.TB) *classHost {
	tb.Helper()
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
		if err := k.Create(ctx, kind.ClusterConfig{NodeImage: node, DisableDefaultCNI: ks.DisableDefaultCNI, KubeadmPatches: ks.KubeadmConfigPatches, WaitForReady: 3 * time.Minute}); err != nil {
			tb.Fatal(err)
		}
		engine, err := docker.NewEngine(ctx)
		if err != nil {
			tb.Fatal(err)
		}
		err = k.LoadImages(ctx, engine, []string{sandboxImage})
		engine.Close()
		if err != nil {
			tb.Fatal(err)
		}
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
	h := &classHost{kubeconfig: kubeconfig, cs: cs}
	h.storage(tb)
	return h
}

// storage makes the test's storage class and, until the test ends, binds
// every claim of it to a new host-path volume on the node, and deletes the
// volumes their claims left: the cluster's own provisioner, for this test.
func (h *classHost) storage(tb testing.TB) {
	ctx, cancel := context.WithCancel(context.Background())
	mode := storagev1.VolumeBindingImmediate
	_, err := h.cs.StorageV1().StorageClasses().Create(ctx, &storagev1.StorageClass{
		ObjectMeta:        metav1.ObjectMeta{Name: classStorage},
		Provisioner:       "kubernetes.io/no-provisioner",
		VolumeBindingMode: &mode,
	}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		tb.Fatal(err)
	}
	done := make(chan struct{})
	tb.Cleanup(func() { cancel(); <-done })
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			h.provision(ctx)
			select {
			case <-ctx.Done():
			case <-time.After(300 * time.Millisecond):
			}
		}
	}()
}

func (h *classHost) provision(ctx context.Context) {
	claims, err := h.cs.CoreV1().PersistentVolumeClaims("").List(ctx, metav1.ListOptions{})
	if err != nil {
		return
	}
	for _, c := range claims.Items {
		if c.Spec.StorageClassName == nil || *c.Spec.StorageClassName != classStorage || c.Spec.VolumeName != "" || c.DeletionTimestamp != nil {
			continue
		}
		hostPath := corev1.HostPathDirectoryOrCreate
		pv := &corev1.PersistentVolume{
			ObjectMeta: metav1.ObjectMeta{Name: "e2e-" + string(c.UID)},
			Spec: corev1.PersistentVolumeSpec{
				Capacity:                      c.Spec.Resources.Requests,
				AccessModes:                   c.Spec.AccessModes,
				PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
				StorageClassName:              classStorage,
				ClaimRef:                      &corev1.ObjectReference{Kind: "PersistentVolumeClaim", Namespace: c.Namespace, Name: c.Name, UID: c.UID},
				PersistentVolumeSource:        corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: classHostPathDir + "/" + string(c.UID), Type: &hostPath}},
			},
		}
		_, _ = h.cs.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{})
	}
	pvs, err := h.cs.CoreV1().PersistentVolumes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return
	}
	for _, pv := range pvs.Items {
		if pv.Spec.StorageClassName == classStorage && pv.Status.Phase == corev1.VolumeReleased {
			_ = h.cs.CoreV1().PersistentVolumes().Delete(ctx, pv.Name, metav1.DeleteOptions{})
		}
	}
}

// config is a class on the host, with the test's storage class and the
// sandbox image loaded into its node.
func (h *classHost) config(prefix string) Config {
	_, sandboxImage := e2etest.Images()
	return Config{Kubeconfig: h.kubeconfig, Prefix: prefix, StorageClass: classStorage, SandboxImage: sandboxImage}
}
