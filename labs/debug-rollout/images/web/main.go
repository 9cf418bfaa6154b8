// Command web is the small web app of the debug-rollout lab. It answers /
// with three lines of text (its greeting, its Pod's name and an id that
// changes every time the process starts) and /healthz with "ok" for
// probes. Its settings come from the environment:
//
//	GREETING  the greeting (required: without it the app exits at once and
//	          says why, in its log and in its termination message)
//	PORT      the TCP port to listen on (default 8080)
//	POD_NAME  the Pod's name, from the downward API (default: the host name)
//	STATUS    the HTTP status / answers with (default 200); any other status
//	          plays a broken release: / answers that status with its name as
//	          the body, while /healthz still says ok
//
// It stops within a second of SIGTERM, so rollouts do not wait for it.
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// terminationLog is where Kubernetes reads a container's last words from;
// kubectl describe pod shows them as the last state's message.
const terminationLog = "/dev/termination-log"

// shutdownGrace bounds how long requests in flight may take after SIGTERM.
const shutdownGrace = time.Second

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	if err := run(ctx, os.Getenv, os.Stderr); err != nil {
		msg := "web: " + err.Error()
		fmt.Fprintln(os.Stderr, msg)
		// Best effort: outside Kubernetes the file does not exist.
		_ = os.WriteFile(terminationLog, []byte(msg+"\n"), 0o644)
		stop()
		os.Exit(1)
	}
}

// config is the app's settings.
type config struct {
	greeting string
	port     int
	pod      string
	// status is what / answers with.
	status int
}

// loadConfig reads the settings from getenv.
func loadConfig(getenv func(string) string) (config, error) {
	c := config{greeting: strings.TrimSpace(getenv("GREETING")), port: 8080, pod: getenv("POD_NAME"), status: http.StatusOK}
	if c.greeting == "" {
		return config{}, errors.New("GREETING is not set, so there is nothing to answer: " +
			"give the container the environment variable GREETING " +
			"(for example from a ConfigMap key named GREETING, with envFrom or env valueFrom configMapKeyRef); exiting")
	}
	if strings.ContainsAny(c.greeting, "\r\n") {
		return config{}, errors.New("GREETING holds a line break; it must be one line; exiting")
	}
	if p := getenv("PORT"); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 || n > 65535 {
			return config{}, fmt.Errorf("PORT is %q, not a TCP port number (0-65535); exiting", p)
		}
		c.port = n
	}
	if st := getenv("STATUS"); st != "" {
		n, err := strconv.Atoi(st)
		if err != nil || n < 200 || n > 599 {
			return config{}, fmt.Errorf("STATUS is %q, not an HTTP status to answer with (200-599); exiting", st)
		}
		c.status = n
	}
	if c.pod == "" {
		c.pod, _ = os.Hostname()
	}
	return c, nil
}

// newInstance returns an id for this run of the process: "i-" and 16
// hexadecimal digits (the prefix keeps it a string for YAML readers).
func newInstance() string {
	b := make([]byte, 8)
	rand.Read(b)
	return "i-" + hex.EncodeToString(b)
}

// newHandler serves / (the answer) and /healthz (for probes).
func newHandler(c config, instance string) http.Handler {
	answer := fmt.Sprintf("greeting: %s\npod: %s\ninstance: %s\n", c.greeting, c.pod, instance)
	mux := http.NewServeMux()
	status := c.status
	if status == 0 {
		status = http.StatusOK
	}
	if status != http.StatusOK {
		answer = fmt.Sprintf("%d %s\n", status, http.StatusText(status))
	}
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		text(w, status, answer)
	})
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		text(w, http.StatusOK, "ok\n")
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		text(w, http.StatusNotFound, fmt.Sprintf("404 not found: %s (this app serves / and /healthz)\n", r.URL.Path))
	})
	return mux
}

func text(w http.ResponseWriter, code int, body string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	io.WriteString(w, body)
}

// run loads the settings, listens and serves until ctx ends.
func run(ctx context.Context, getenv func(string) string, log io.Writer) error {
	c, err := loadConfig(getenv)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", fmt.Sprintf(":%d", c.port))
	if err != nil {
		return fmt.Errorf("listening on port %d: %w; exiting", c.port, err)
	}
	fmt.Fprintf(log, "web: pod %s serving on %s\n", c.pod, ln.Addr())
	err = serve(ctx, ln, newHandler(c, newInstance()))
	fmt.Fprintln(log, "web: stopped")
	return err
}

// serve answers on ln until ctx ends, then lets requests in flight finish
// for at most shutdownGrace.
func serve(ctx context.Context, ln net.Listener, h http.Handler) error {
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return fmt.Errorf("serving: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		srv.Close()
	}
	if err := <-done; !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serving: %w", err)
	}
	return nil
}
