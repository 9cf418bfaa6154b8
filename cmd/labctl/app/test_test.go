package app

import (
	"strings"
	"testing"
)

// These cases stop before any environment is provisioned; labtest's e2e
// tests drive a whole run.
func TestTestCommandRejectsBadInput(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"test", "--step", "no-such-step"}, `no-such-step`},
		{[]string{"test", "-o", "yaml"}, `yaml`},
		{[]string{"--lab", testdata + "broken.yaml", "test"}, `broken.yaml:`},
	} {
		code, out, errOut := runLabctl(t, tc.args...)
		if code != 2 || out != "" || !strings.Contains(errOut, tc.want) {
			t.Errorf("labctl %s: exit %d, stdout %q, stderr %q; want 2, nothing, and a message naming %q",
				strings.Join(tc.args, " "), code, out, errOut, tc.want)
		}
	}
}
