package checks

import (
	"errors"
	"net"
	"os/exec"
	"strconv"
	"testing"
	"time"
)

// flippingPort is a TCP port on the loopback that accepts connections
// (open) or refuses them (closed), and turns to the other state after
// flipAfter (never when zero): a policy that a new Pod meets only once
// its agent has programmed it.
func flippingPort(t *testing.T, open bool, flipAfter time.Duration) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	serve := func(l net.Listener) {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}
	if !open {
		l.Close()
	} else {
		go serve(l)
		t.Cleanup(func() { l.Close() })
	}
	if flipAfter > 0 {
		timer := time.AfterFunc(flipAfter, func() {
			if open {
				l.Close()
				return
			}
			again, err := net.Listen("tcp", "127.0.0.1:"+port)
			if err != nil {
				t.Errorf("opening port %s again: %v", port, err)
				return
			}
			t.Cleanup(func() { again.Close() })
			go serve(again)
		})
		t.Cleanup(func() { timer.Stop() })
	}
	return port
}

// TestReachScriptWaitsForTheExpectedOutcome runs the reach Pod's script in
// bash against a port whose state turns over while it tries, as a new
// Pod's traffic does when its policies are programmed a few seconds after
// it starts: the script answers with the state the Pod settles in, not the
// one it met first, in both directions.
func TestReachScriptWaitsForTheExpectedOutcome(t *testing.T) {
	if _, err := exec.LookPath("timeout"); err != nil {
		t.Fatalf("the reach script needs timeout(1): %v", err)
	}
	const settle = "7"
	tests := []struct {
		name      string
		open      bool
		flipAfter time.Duration
		want      string
		opened    bool
	}{
		{"denied once programmed, denial expected", true, 4 * time.Second, "closed", false},
		{"allowed once programmed, connection expected", false, 4 * time.Second, "open", true},
		{"always open, denial expected (a wrong answer)", true, 0, "closed", true},
		{"always closed, connection expected (a wrong answer)", false, 0, "open", false},
		{"always open, connection expected", true, 0, "open", true},
		{"always closed, denial expected", false, 0, "closed", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			port := flippingPort(t, tt.open, tt.flipAfter)
			err := exec.Command("bash", "-c", reachScript, "127.0.0.1", port, tt.want, settle, "2").Run()
			var exit *exec.ExitError
			if err != nil && !errors.As(err, &exit) {
				t.Fatal(err)
			}
			if opened := err == nil; opened != tt.opened {
				t.Errorf("the script said opened=%v (%v), want %v", opened, err, tt.opened)
			}
		})
	}
}
