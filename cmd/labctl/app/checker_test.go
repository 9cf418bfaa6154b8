package app

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/labctl/labctl/checks"
)

func TestCheckerCommand(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "done.txt"), []byte("yes\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	req := `{"root":"` + root + `","checks":[
		{"name":"done","file":{"path":"/done.txt","equals":"yes"}},
		{"name":"other","file":{"path":"/other.txt"}}]}`
	var out, errOut bytes.Buffer
	code := Run(context.Background(), Streams{In: strings.NewReader(req), Out: &out, Err: &errOut}, []string{"__check"})
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, errOut.String())
	}
	var resp checks.Response
	if err := json.Unmarshal(out.Bytes(), &resp); err != nil {
		t.Fatalf("stdout %q: %v", out.String(), err)
	}
	if len(resp.Results) != 2 || resp.Results[0].Status != checks.Pass || resp.Results[1].Status != checks.Fail ||
		resp.Results[1].Message != "expected /other.txt to exist, found nothing there" {
		t.Errorf("results %+v", resp.Results)
	}

	out.Reset()
	errOut.Reset()
	code = Run(context.Background(), Streams{In: strings.NewReader(`{"checks": 3}`), Out: &out, Err: &errOut}, []string{"__check"})
	if code == 0 || out.Len() != 0 || !strings.Contains(errOut.String(), "reading the check request") {
		t.Errorf("malformed request: exit %d, stdout %q, stderr %q", code, out.String(), errOut.String())
	}
}
