package app

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/labctl/labctl"
	"github.com/labctl/labctl/images"
	"github.com/labctl/labctl/lab"
	"github.com/labctl/labctl/provision"
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
	t.Setenv("LC_ALL", "")
	t.Setenv("LC_MESSAGES", "")
	t.Setenv("LANG", "en_US.UTF-8")
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
	state := t.TempDir()
	t.Setenv("LABCTL_STATE_DIR", state)
	code, out, _ := runLabctl(t, "images", "kind-config", "labctl/node:test")
	if code != 0 || !strings.Contains(out, "image: labctl/node:test") || !strings.Contains(out, "disableDefaultCNI: true") ||
		!strings.Contains(out, "leader-elect") || !strings.Contains(out, "audit-policy-file") {
		t.Errorf("code %d, stdout %q", code, out)
	}
	// The file names the audit policy, which must exist for the API server to start.
	policies, _ := filepath.Glob(filepath.Join(state, "*", "audit", "policy.yaml"))
	if len(policies) != 1 || !strings.Contains(out, "hostPath: "+filepath.Dir(policies[0])) {
		t.Errorf("audit policies written: %v; stdout %q", policies, out)
	}
	if code, _, errOut := runLabctl(t, "images", "kind-config", "a", "b"); code == 0 {
		t.Errorf("two node images were accepted: %q", errOut)
	}
}

// doctor speaks the learner's language: the built-in lab is Japanese, so
// with no locale its lines are Japanese, with an English locale English.
func TestDoctorSpeaksTheLabsLanguage(t *testing.T) {
	t.Setenv("LC_ALL", "")
	t.Setenv("LC_MESSAGES", "")
	for lang, want := range map[string]string{"": "空き容量", "en_US.UTF-8": "free"} {
		t.Setenv("LANG", lang)
		_, out, _ := runLabctl(t, "doctor")
		disk := ""
		for _, l := range strings.Split(out, "\n") {
			if strings.Contains(l, " disk ") {
				disk = l
			}
		}
		if !strings.Contains(disk, want) {
			t.Errorf("LANG=%q: disk line %q, want it to say %q\n%s", lang, disk, want, out)
		}
		if lang == "" && strings.Contains(out, "fix: ") {
			t.Errorf("LANG unset: an English fix in a Japanese lab:\n%s", out)
		}
	}
}

// TestImagesKindConfigIsWhatUpUses holds the printed file to the one up
// gives kind (provision.KindConfigFile renders up's configuration; the
// provision tests hold the two together), for the lab's node image and for
// one given on the command line.
func TestImagesKindConfigIsWhatUpUses(t *testing.T) {
	t.Setenv("LABCTL_STATE_DIR", t.TempDir())
	l, err := lab.Parse(builtInLab, labctl.DefaultLab())
	if err != nil {
		t.Fatal(err)
	}
	node := l.Cluster.NodeImage
	if node == "" {
		node = images.NodeRef()
	}
	for args, ref := range map[string]string{"": node, "labctl/node:test": "labctl/node:test"} {
		code, out, errOut := runLabctl(t, strings.Fields("images kind-config "+args)...)
		want, err := provision.KindConfigFile(l, ref)
		if err != nil {
			t.Fatal(err)
		}
		if code != 0 || out != string(want) {
			t.Errorf("kind-config %s: exit %d (stderr %q), stdout\n%s\nwant up's file\n%s", args, code, errOut, out, want)
		}
	}
}
