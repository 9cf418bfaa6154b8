package kind

import "testing"

// The node is asked for each image by its name as containerd records it
// and the host's image ID up labelled it with.
func TestHeldFilter(t *testing.T) {
	got := heldFilter("nginx:1.27", "sha256:0123")
	want := `name=="docker.io/library/nginx:1.27",labels."dev.labctl.image-id"=="sha256:0123"`
	if got != want {
		t.Errorf("heldFilter = %s, want %s", got, want)
	}
}
