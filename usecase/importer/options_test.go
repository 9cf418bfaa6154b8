package importer

import (
	"strings"
	"testing"
)

// --name names the lab, so that two sources in directories of the same
// name import as two labs; a name that is no lab name is refused, naming
// the flag, before anything is read or written.
func TestImportName(t *testing.T) {
	files := map[string]string{
		"index.json": `{"title": "Pod", "details": {"steps": [{"title": "One", "text": "1.md"}]}, "backend": {"imageid": "kubernetes-kubeadm-1node"}}`,
		"1.md":       "Run `kubectl get pods`{{exec}}",
	}
	named := func(src, out string) (*Result, error) { return KillercodaWith(src, out, Options{Name: "kc-pod-intro"}) }
	_, l, _ := importTree(t, named, "pod-intro", files)
	if l.Metadata.Name != "kc-pod-intro" {
		t.Errorf("metadata.name = %q, want kc-pod-intro", l.Metadata.Name)
	}
	_, l, _ = importTree(t, Killercoda, "pod-intro", files)
	if l.Metadata.Name != "pod-intro" {
		t.Errorf("without --name, metadata.name = %q, want the directory's name pod-intro", l.Metadata.Name)
	}
	for _, bad := range []string{"Pod", "-pod", strings.Repeat("a", 41)} {
		_, err := KillercodaWith(t.TempDir(), t.TempDir(), Options{Name: bad})
		if err == nil || !strings.Contains(err.Error(), "--name") {
			t.Errorf("--name %q: %v, want an error naming --name", bad, err)
		}
		_, err = InstruqtWith(t.TempDir(), t.TempDir(), Options{Name: bad})
		if err == nil || !strings.Contains(err.Error(), "--name") {
			t.Errorf("instruqt --name %q: %v, want an error naming --name", bad, err)
		}
	}
}
