package msg

import (
	"strings"
	"testing"
)

// TestStatusLinesInBothLanguages: every status and doctor key has its own
// Japanese words, and a nil catalogue (a caller that chose no language)
// gives the English lines that logs and tests read.
func TestStatusLinesInBothLanguages(t *testing.T) {
	var none *Catalog
	if got := none.Say(StatusReusingCluster); got != "Reusing cluster" {
		t.Errorf("nil catalogue: %q, want the English line", got)
	}
	if got := none.Say(StatusRemovingKeepHome, "gitops-drift"); got != "Removing lab gitops-drift (your /root is kept)" {
		t.Errorf("nil catalogue with an argument: %q", got)
	}
	ja, en := New(Japanese), New(English)
	n := 0
	for k := range declaredKeys(t) {
		if !strings.HasPrefix(string(k), "status.") && !strings.HasPrefix(string(k), "preflight.") && !strings.HasPrefix(string(k), "doctor.") {
			continue
		}
		n++
		if k == PreflightCgroup {
			continue // "cgroup v2" is the same in both
		}
		if j, e := japaneseKeyed[k], englishKeyed[k]; j == e {
			t.Errorf("%s: the Japanese text is the English one: %q", k, j)
		}
	}
	if n < 30 {
		t.Errorf("found %d status, preflight and doctor keys, want every one of them (30 or more)", n)
	}
	if got := ja.Say(StatusRunningSolveOf, "drift"); !strings.Contains(got, "drift") || got == en.Say(StatusRunningSolveOf, "drift") {
		t.Errorf("ja: %q", got)
	}
}
