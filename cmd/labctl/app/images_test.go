package app

import (
	"strings"
	"testing"
)

func TestImagesBuildRejectsBothSelections(t *testing.T) {
	code, out, errOut := runLabctl(t, "images", "build", "--node", "--sandbox")
	if code == 0 || out != "" || !strings.Contains(errOut, "--node and --sandbox exclude each other") {
		t.Errorf("code %d, stdout %q, stderr %q", code, out, errOut)
	}
}

func TestImagesSaveNeedsAFile(t *testing.T) {
	code, _, errOut := runLabctl(t, "images", "save")
	if code == 0 || !strings.Contains(errOut, "accepts 1 arg") {
		t.Errorf("code %d, stderr %q", code, errOut)
	}
}

// doctor prints one line per probe on stdout, each problem followed by its
// fix, and exits 1 exactly when a probe failed.
func TestDoctorReportsEveryProbe(t *testing.T) {
	code, out, errOut := runLabctl(t, "doctor")
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	probes, problems := 0, 0
	for i, l := range lines {
		switch {
		case strings.HasPrefix(l, "✓ "):
			probes++
		case strings.HasPrefix(l, "✗ "):
			probes++
			problems++
			if i+1 >= len(lines) || !strings.Contains(lines[i+1], "fix: ") {
				t.Errorf("problem without a fix: %q", l)
			}
		}
	}
	if probes != 5 {
		t.Errorf("doctor printed %d probes, want 5:\n%s", probes, out)
	}
	if (problems > 0) != (code == 1) || (problems == 0 && code != 0) {
		t.Errorf("%d problems but exit code %d (stderr %q)", problems, code, errOut)
	}
}

func TestImagesKindConfigPrintsTheClusterFile(t *testing.T) {
	code, out, _ := runLabctl(t, "images", "kind-config", "labctl/node:test")
	if code != 0 || !strings.Contains(out, "image: labctl/node:test") || !strings.Contains(out, "disableDefaultCNI: true") ||
		!strings.Contains(out, "leader-elect") {
		t.Errorf("code %d, stdout %q", code, out)
	}
	if code, _, errOut := runLabctl(t, "images", "kind-config", "a", "b"); code == 0 {
		t.Errorf("two node images were accepted: %q", errOut)
	}
}
