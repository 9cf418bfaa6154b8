//go:build prebuild

package images

import (
	"context"
	"os"
	"testing"
)

func TestPrebuildNodeBase(t *testing.T) {
	b, _ := newBuilder(Options{Status: os.Stderr, Log: os.Stderr})
	base := baseRef()
	if err := b.progress.phase(context.Background(), "node base", func(ctx context.Context) error {
		return b.buildNodeBase(ctx, base, "labctl/node-base:"+nodeHash(base), t.TempDir())
	}); err != nil {
		t.Fatal(err)
	}
}
