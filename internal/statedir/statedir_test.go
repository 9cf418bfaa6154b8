package statedir

import "testing"

func TestDir(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	tests := []struct {
		name string
		env  map[string]string
		want string
	}{
		{"override", map[string]string{"LABCTL_STATE_DIR": "/tmp/st", "XDG_STATE_HOME": "/x", "HOME": "/h"}, "/tmp/st/lab1"},
		{"xdg", map[string]string{"XDG_STATE_HOME": "/x", "HOME": "/h"}, "/x/labctl/lab1"},
		{"relative xdg is ignored", map[string]string{"XDG_STATE_HOME": "rel", "HOME": "/h"}, "/h/.local/state/labctl/lab1"},
		{"home", map[string]string{"HOME": "/h"}, "/h/.local/state/labctl/lab1"},
	}
	for _, tt := range tests {
		got, err := Dir(env(tt.env), "lab1")
		if err != nil || got != tt.want {
			t.Errorf("%s: Dir = %q, %v; want %q", tt.name, got, err, tt.want)
		}
	}
	for _, bad := range []string{"", "..", "a/b"} {
		if _, err := Dir(env(map[string]string{"HOME": "/h"}), bad); err == nil {
			t.Errorf("Dir(%q) must fail", bad)
		}
	}
}
