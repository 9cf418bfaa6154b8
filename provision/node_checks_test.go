package provision

import (
	"archive/tar"
	"bytes"
	"context"
	"io"
	"io/fs"
	"testing"

	"github.com/labctl/labctl/checks"
	"github.com/labctl/labctl/lab"
)

// nodeRuntime is a fake runtime whose nodes hold files, which it hands out
// as the engine's archive API does: a tar of one entry.
type nodeRuntime struct {
	fakeRuntime
	nodeFiles map[string]string // node:path → content
}

func (n *nodeRuntime) Features() Features {
	f := n.fakeRuntime.Features()
	f.NodeFile = n.copyNodeFile
	return f
}

func (n *nodeRuntime) copyNodeFile(_ context.Context, node, p string) (io.ReadCloser, error) {
	content, ok := n.nodeFiles[node+":"+p]
	if !ok {
		return nil, fs.ErrNotExist
	}
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	tw.WriteHeader(&tar.Header{Name: "f", Mode: 0o600, Size: int64(len(content)), Typeflag: tar.TypeReg})
	io.WriteString(tw, content)
	tw.Close()
	return io.NopCloser(&b), nil
}

// A check of a node's file is judged on the host from what the engine
// hands out; the other checks of the round go to the checker, and every
// result comes back in the round's order.
func TestNodeChecksAreJudgedOnTheHost(t *testing.T) {
	issuing(t, "never")
	rt := &nodeRuntime{nodeFiles: map[string]string{"control-plane:/etc/kubernetes/manifests/web.yaml": "image: web:1\n"}}
	l := liveLab("")
	l.Cluster.NodeAccess = true
	e := NewLive(l, rt, Identity{}, fresh)
	cs := []lab.Check{
		{Name: "manifest", File: &lab.FileCheck{Node: "control-plane", Path: "/etc/kubernetes/manifests/web.yaml", Contains: []string{"image: web:1"}}},
		{Name: "home", File: &lab.FileCheck{Path: "/root/a"}},
		{Name: "wrong-image", File: &lab.FileCheck{Node: "control-plane", Path: "/etc/kubernetes/manifests/web.yaml", Contains: []string{"image: web:2"}}},
		{Name: "absent", File: &lab.FileCheck{Node: "control-plane", Path: "/etc/kubernetes/manifests/db.yaml"}},
	}
	got, err := e.RunChecks(context.Background(), checks.Round{Checks: cs})
	if err != nil {
		t.Fatal(err)
	}
	want := []checks.Status{checks.Pass, checks.Pass, checks.Fail, checks.Fail}
	for i, r := range got {
		if r.Name != cs[i].Name || r.Status != want[i] {
			t.Errorf("result %d: %s %s (%s), want %s %s", i, r.Name, r.Status, r.Message, cs[i].Name, want[i])
		}
	}
	if len(rt.requests) != 1 || len(rt.requests[0].Checks) != 1 || rt.requests[0].Checks[0].Name != "home" {
		t.Errorf("the checker was asked %+v, want the sandbox's check only", rt.requests)
	}
}
