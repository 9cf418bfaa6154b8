package docker

import (
	"testing"

	"github.com/docker/docker/api/types/container"
)

func TestStateReason(t *testing.T) {
	for _, tc := range []struct {
		state *container.State
		want  string
	}{
		{&container.State{Running: true}, ""},
		{&container.State{Running: true, Paused: true}, "it is paused"},
		{&container.State{Running: true, Restarting: true}, "it is restarting"},
		{&container.State{OOMKilled: true}, "it was killed for lack of memory"},
		{&container.State{Dead: true}, "it is dead"},
		{&container.State{Status: "exited"}, "it is stopped"},
		{nil, "its state is unknown"},
	} {
		if got := stateReason(tc.state); got != tc.want {
			t.Errorf("stateReason(%+v) = %q, want %q", tc.state, got, tc.want)
		}
	}
}

func TestProbeFirstLine(t *testing.T) {
	if got := firstLine("\n OCI runtime exec failed: fork: resource temporarily unavailable\ngoroutine 1 [running]:\n"); got != "OCI runtime exec failed: fork: resource temporarily unavailable" {
		t.Errorf("firstLine = %q", got)
	}
}

func TestPidsReason(t *testing.T) {
	for _, tc := range []struct{ out, want string }{
		{"12\n512\n", ""},
		{"480\n512\n", ""},
		{"481\n512\n", "its processes use 481 of its 512 pids"},
		{"512\n512\n", "its processes use 512 of its 512 pids"},
		{"40\nmax\n", ""},
		{"", ""},
		{"7\n", ""},
	} {
		if got := pidsReason(tc.out); got != tc.want {
			t.Errorf("pidsReason(%q) = %q, want %q", tc.out, got, tc.want)
		}
	}
}
