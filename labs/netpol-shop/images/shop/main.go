// Command app is the netpol-shop lab's shop: one binary for every tier,
// which takes its role from the environment variable ROLE.
//
//	web    HTTP on :8080; / asks api (API_URL, default http://api/) and shows its answer
//	api    HTTP on :8080; / asks db (DB_ADDR, default db:5432) for the orders
//	db     TCP on :5432; answers the line "orders" with the orders, one line
//	admin  HTTP on :8080; the back office, which nobody should reach
//	idle   nothing: a Pod to kubectl exec into (the image has no shell)
//
// PORT overrides the port. /healthz answers "ok" in the HTTP roles whatever
// the tiers behind them do. A broken path shows in web's answer and in the
// logs, e.g. 502 "api unreachable: ... i/o timeout". Two client commands
// try a path from inside a Pod, and exit 1 when it is closed:
//
//	/app get [-timeout 3s] URL         print the HTTP status and body
//	/app dial [-timeout 3s] HOST:PORT  open a TCP connection, send "orders", print the first line back
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"
	"unicode"
)

// Orders is what db answers: the data the lab's incident is about.
const Orders = "3 orders: #1001 tea for A. Ito, #1002 mugs for B. Kaur, #1003 scarf for C. Diaz"

// dialTimeout bounds every connection a tier opens, so that a path a
// policy drops fails in seconds with "i/o timeout".
const dialTimeout = 2 * time.Second

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	code := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run is the whole program: a client command when args name one, else the
// role ROLE names. It returns the exit status.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		return client(ctx, args, stdout, stderr)
	}
	if err := serve(ctx, getenv, stderr); err != nil {
		fmt.Fprintln(stderr, "shop:", err)
		return 1
	}
	return 0
}

func client(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet(args[0], flag.ContinueOnError)
	fs.SetOutput(stderr)
	timeout := fs.Duration("timeout", 3*time.Second, "how long to wait for an answer")
	if err := fs.Parse(args[1:]); err != nil || fs.NArg() != 1 || (args[0] != "get" && args[0] != "dial") {
		fmt.Fprintln(stderr, "usage: /app get [-timeout 3s] URL | /app dial [-timeout 3s] HOST:PORT")
		return 2
	}
	target := fs.Arg(0)
	var out string
	var err error
	if args[0] == "get" {
		var code int
		code, out, err = get(ctx, &http.Client{Timeout: *timeout}, target)
		if code != 0 {
			out = fmt.Sprintf("HTTP %d\n%s", code, out)
		}
	} else {
		out, err = dial(ctx, target, *timeout)
	}
	fmt.Fprint(stdout, out)
	if err != nil {
		fmt.Fprintf(stderr, "%s %s: %v\n", args[0], target, err)
		return 1
	}
	return 0
}

// get asks url and returns its status and body; an error unless 200.
func get(ctx context.Context, c *http.Client, url string) (int, string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, "", err
	}
	resp, err := c.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("answered %s", resp.Status)
	}
	return resp.StatusCode, string(body), err
}

// dial opens a TCP connection to addr, sends "orders" and returns what
// came back on the first line, if anything did within the timeout.
func dial(ctx context.Context, addr string, timeout time.Duration) (string, error) {
	d := net.Dialer{Timeout: timeout}
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return "", err
	}
	defer conn.Close()
	out := fmt.Sprintf("connected to %s (%s)\n", addr, conn.RemoteAddr())
	conn.SetDeadline(time.Now().Add(timeout))
	if _, err := io.WriteString(conn, "orders\n"); err == nil {
		line, _ := bufio.NewReader(conn).ReadString('\n')
		line = strings.TrimRight(line, "\r\n")
		if strings.ContainsFunc(line, func(r rune) bool { return !unicode.IsPrint(r) }) {
			line = fmt.Sprintf("(an answer of %d bytes that is not text)", len(line))
		}
		if line != "" {
			out += line + "\n"
		}
	}
	return out, nil
}

// serve runs the role ROLE names until ctx ends.
func serve(ctx context.Context, getenv func(string) string, log io.Writer) error {
	role := getenv("ROLE")
	pod := getenv("POD_NAME")
	if pod == "" {
		pod, _ = os.Hostname()
	}
	port := getenv("PORT")
	var h http.Handler
	switch role {
	case "idle":
		fmt.Fprintf(log, "idle: pod %s waits; try /app get URL or /app dial HOST:PORT with kubectl exec\n", pod)
		<-ctx.Done()
		return nil
	case "db":
		ln, err := net.Listen("tcp", ":"+or(port, "5432"))
		if err != nil {
			return err
		}
		fmt.Fprintf(log, "db: pod %s serving on %s\n", pod, ln.Addr())
		return serveDB(ctx, ln, log)
	case "web":
		h = newWeb(or(getenv("API_URL"), "http://api/"), pod, log)
	case "api":
		h = newAPI(or(getenv("DB_ADDR"), "db:5432"), pod, log)
	case "admin":
		h = page(fmt.Sprintf("shop back office (pod %s): refunds, customer addresses, card tokens\n", pod))
	default:
		return fmt.Errorf("ROLE is %q; set it to web, api, db, admin or idle", role)
	}
	ln, err := net.Listen("tcp", ":"+or(port, "8080"))
	if err != nil {
		return err
	}
	fmt.Fprintf(log, "%s: pod %s serving on %s\n", role, pod, ln.Addr())
	srv := &http.Server{Handler: withHealth(h), ReadHeaderTimeout: 5 * time.Second}
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		srv.Shutdown(sctx)
	}()
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

func or(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

// newWeb answers / with api's answer, or 502 and why api could not give one.
func newWeb(apiURL, pod string, log io.Writer) http.Handler {
	c := &http.Client{Timeout: 3 * dialTimeout, Transport: &http.Transport{DialContext: (&net.Dialer{Timeout: dialTimeout}).DialContext}}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		code, body, err := get(r.Context(), c, apiURL)
		switch {
		case code == 0:
			fail(w, log, "web", fmt.Sprintf("api unreachable: %v", err))
		case err != nil:
			fail(w, log, "web", fmt.Sprintf("api %v: %s", err, strings.TrimSpace(body)))
		default:
			text(w, http.StatusOK, fmt.Sprintf("shop (web pod %s)\n%s", pod, body))
		}
	})
}

// newAPI answers / with db's orders, or 502 and why db could not give them.
func newAPI(dbAddr, pod string, log io.Writer) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		out, err := dial(r.Context(), dbAddr, dialTimeout)
		if _, line, _ := strings.Cut(out, "\n"); err == nil && strings.TrimSpace(line) == Orders {
			text(w, http.StatusOK, fmt.Sprintf("api pod %s: %s", pod, line))
			return
		}
		if err != nil {
			fail(w, log, "api", fmt.Sprintf("db unreachable: %v", err))
			return
		}
		fail(w, log, "api", "db answered no orders")
	})
}

// serveDB answers each connection's first line until ctx ends.
func serveDB(ctx context.Context, ln net.Listener, log io.Writer) error {
	go func() { <-ctx.Done(); ln.Close() }()
	for {
		conn, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		go func() {
			defer conn.Close()
			conn.SetDeadline(time.Now().Add(5 * time.Second))
			line, _ := bufio.NewReader(conn).ReadString('\n')
			if strings.TrimSpace(line) != "orders" {
				io.WriteString(conn, "db: unknown query; ask \"orders\"\n")
				return
			}
			fmt.Fprintf(log, "db: %s read the orders\n", conn.RemoteAddr())
			io.WriteString(conn, Orders+"\n")
		}()
	}
}

func withHealth(h http.Handler) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/healthz", page("ok\n"))
	mux.Handle("/", h)
	return mux
}

func page(body string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { text(w, http.StatusOK, body) })
}

func fail(w http.ResponseWriter, log io.Writer, role, msg string) {
	fmt.Fprintf(log, "%s: answered 502: %s\n", role, msg)
	text(w, http.StatusBadGateway, msg+"\n")
}

func text(w http.ResponseWriter, code int, body string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	io.WriteString(w, body)
}
