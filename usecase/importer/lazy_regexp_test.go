package importer

import (
	"regexp"
	"testing"
)

// TestLazyRegexpsCompile: every expression the importer compiles at its
// first use is valid, as regexp.MustCompile at start-up once proved.
func TestLazyRegexpsCompile(t *testing.T) {
	if len(lazyExprs) < 90 {
		t.Fatalf("only %d lazy expressions registered", len(lazyExprs))
	}
	for _, l := range lazyExprs {
		if _, err := regexp.Compile(l.expr); err != nil {
			t.Errorf("%q: %v", l.expr, err)
		}
	}
}
