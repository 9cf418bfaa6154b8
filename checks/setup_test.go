package checks

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/labctl/labctl/lab"
)

func boolp(b bool) *bool { return &b }
func intp(i int) *int    { return &i }

func lit(v any) *lab.Value     { return &lab.Value{Literal: v} }
func refv(s string) *lab.Value { return &lab.Value{Ref: s} }

// writeFile creates the lab path p under root with content and mode.
func writeFile(t *testing.T, root, p, content string, mode os.FileMode) {
	t.Helper()
	host := filepath.Join(root, p)
	if err := os.MkdirAll(filepath.Dir(host), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(host, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(host, mode); err != nil {
		t.Fatal(err)
	}
}

// runCheck runs one check through Run, as the checker does.
func runCheck(t *testing.T, env Env, c lab.Check) Result {
	t.Helper()
	if c.Name == "" {
		c.Name = "c"
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rs := Run(ctx, env, []lab.Check{c})
	if len(rs) != 1 {
		t.Fatalf("Run returned %d results for one check", len(rs))
	}
	return rs[0]
}

// expect asserts a result's status and its exact message.
func expect(t *testing.T, got Result, status Status, msg string) {
	t.Helper()
	if got.Status != status || got.Message != msg {
		t.Errorf("got %s %q\nwant %s %q", got.Status, got.Message, status, msg)
	}
}
