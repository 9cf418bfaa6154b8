package class

import (
	"context"
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// class up says what the class cluster does not enforce: claim sizes on
// node directories, and kubelets that bound no Pod's processes; and what it
// could not read.
func TestCaveats(t *testing.T) {
	ctx := context.Background()
	c, cs := fakeClass()
	for _, sc := range []*storagev1.StorageClass{
		{ObjectMeta: metav1.ObjectMeta{Name: "standard", Annotations: map[string]string{"storageclass.kubernetes.io/is-default-class": "true"}}, Provisioner: "rancher.io/local-path"},
		{ObjectMeta: metav1.ObjectMeta{Name: "block"}, Provisioner: "ebs.csi.aws.com"},
	} {
		if _, err := cs.StorageV1().StorageClasses().Create(ctx, sc, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, n := range []string{"bounded", "unbounded", "secret"} {
		if _, err := cs.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	c.configz = func(_ context.Context, node string) ([]byte, error) {
		switch node {
		case "bounded":
			return []byte(`{"kubeletconfig":{"podPidsLimit":4096}}`), nil
		case "unbounded":
			return []byte(`{"kubeletconfig":{"podPidsLimit":-1}}`), nil
		}
		return nil, errors.New("forbidden")
	}
	got := strings.Join(c.Caveats(ctx), "\n")
	for _, want := range []string{
		"StorageClass standard (rancher.io/local-path) does not enforce a claim's size",
		"the kubelet of node(s) unbounded bounds no Pod's processes",
		"could not read the kubelet configuration of node(s) secret",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("caveats lack %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "bounded,") || strings.Contains(got, "node(s) bounded") {
		t.Errorf("a bounded node is named:\n%s", got)
	}
	// A class on a StorageClass that enforces sizes, on bounded nodes:
	// nothing to say.
	c.cfg.StorageClass = "block"
	c.configz = func(context.Context, string) ([]byte, error) {
		return []byte(`{"kubeletconfig":{"podPidsLimit":1024}}`), nil
	}
	if got := c.Caveats(ctx); len(got) != 0 {
		t.Errorf("caveats on a cluster that enforces both: %q", got)
	}
}
