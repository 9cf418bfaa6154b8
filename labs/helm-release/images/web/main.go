// Command web is the small web app the helm-release lab's chart deploys.
// It answers / with its greeting and /healthz with "ok" for probes. Its
// settings come from the environment:
//
//	GREETING  the greeting (required: without it the app exits at once and
//	          says why)
//	PORT      the TCP port to listen on (default 8080)
//
// It stops within a second of SIGTERM, so rollouts do not wait for it.
package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"
)

func main() {
	if err := run(os.Getenv); err != nil {
		fmt.Fprintln(os.Stderr, "web:", err)
		os.Exit(1)
	}
}

// run serves until SIGTERM or SIGINT.
func run(getenv func(string) string) error {
	h, err := handler(getenv("GREETING"))
	if err != nil {
		return err
	}
	port := getenv("PORT")
	if port == "" {
		port = "8080"
	}
	srv := &http.Server{Addr: ":" + port, Handler: h, ReadHeaderTimeout: 5 * time.Second}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown)
	}()
	fmt.Printf("web: serving %q on :%s\n", h.greeting, port)
	if err := srv.ListenAndServe(); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

type app struct {
	greeting string
	mux      *http.ServeMux
}

func (a *app) ServeHTTP(w http.ResponseWriter, r *http.Request) { a.mux.ServeHTTP(w, r) }

// handler answers / with greeting and /healthz with ok.
func handler(greeting string) (*app, error) {
	if greeting == "" {
		return nil, errors.New("GREETING is not set: the chart's ConfigMap gives it to the container (envFrom)")
	}
	a := &app{greeting: greeting, mux: http.NewServeMux()}
	a.mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "ok") })
	a.mux.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, a.greeting) })
	return a, nil
}
