package main

import (
	"io"
	"os"
	"os/exec"
	"syscall"
	"testing"
)

func TestMain(m *testing.M) {
	if os.Getenv("LABCTL_PAUSE_RUN") == "1" {
		run(func() { os.Stdout.WriteString("ready\n") })
		return
	}
	os.Exit(m.Run())
}

// The process keeps running until SIGTERM, then exits 0; SIGCHLD does not
// stop it.
func TestExitsOnSIGTERMOnly(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "LABCTL_PAUSE_RUN=1")
	ready, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout = w
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	line := make([]byte, 6)
	if _, err := io.ReadFull(ready, line); err != nil || string(line) != "ready\n" {
		t.Fatalf("pause did not report ready: %q, %v", line, err)
	}
	ready.Close()
	if err := cmd.Process.Signal(syscall.SIGCHLD); err != nil {
		t.Fatalf("pause exited before SIGCHLD: %v", err)
	}
	if err := cmd.Process.Signal(syscall.Signal(0)); err != nil {
		t.Fatalf("pause is not running after SIGCHLD: %v", err)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Errorf("pause after SIGTERM: %v, want exit 0", err)
	}
}
