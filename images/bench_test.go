//go:build e2e

package images

import (
	"strings"
	"testing"
)

// BenchmarkGoBuilds times each binary build into an empty labctl cache.
// With the Go build cache warm it measures linking; for a cold build give
// it an empty one:
//
//	GOCACHE=$(mktemp -d) go test -tags e2e -run '^$' -bench GoBuilds -benchtime 1x ./images/
func BenchmarkGoBuilds(b *testing.B) {
	builds := append([]goBuild{kubernetesBuild(), etcdBuild(), corednsBuild(), pauseBuild()}, sandboxToolBuilds()...)
	for _, g := range builds {
		b.Run(strings.Fields(g.name)[0], func(b *testing.B) {
			for range b.N {
				bl, err := newBuilder(Options{CacheDir: b.TempDir()})
				if err != nil {
					b.Fatal(err)
				}
				if _, err := bl.binaries(b.Context(), g); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
