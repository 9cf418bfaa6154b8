package app

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/client-go/rest"

	"github.com/labctl/labctl/checks"
	"github.com/labctl/labctl/internal/msg"
	"github.com/labctl/labctl/internal/statedir"
	"github.com/labctl/labctl/lab"
	"github.com/labctl/labctl/provision"
	"github.com/labctl/labctl/usecase/labwatch"
	"github.com/labctl/labctl/usecase/web"
	"github.com/labctl/labctl/usecase/web/assets"
)

type uiOptions struct {
	addr      string
	noBrowser bool
	// watch reloads the lab's file into the page when it is edited.
	watch bool
	// invite is the invite file of `labctl ui --invite`.
	invite string
}

func newUICommand(g *globals) *cobra.Command {
	var o uiOptions
	cmd := &cobra.Command{
		Use:   "ui",
		Short: "Open the lab in your browser: its steps beside terminals into the sandbox",
		Long: "Serves the lab's page on 127.0.0.1 (a free port unless --addr says otherwise) and opens it in your\n" +
			"browser. The first line of output is the page's URL with its secret token. The page shows the lab's\n" +
			"steps, Check and Grade buttons, terminals into the sandbox (checked after every command, as in\n" +
			"`labctl shell`) and previews of the lab's Services. Ctrl-C stops it; your work in the sandbox stays.\n" +
			"Listening on anything but loopback needs --addr and prints a warning. docs/ui.md says more.\n" +
			"With --invite, the page is of your sandbox in a class, as `labctl shell --invite` opens it (no previews).",
		Example: "  labctl ui\n  labctl ui --no-browser\n  labctl ui --addr 127.0.0.1:8080\n  labctl ui --invite alice.kubeconfig",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.addr = g.cfg.GetString("addr")
			return runUI(cmd.Context(), g, o, cmd.Flags().Changed("addr"), nil)
		},
	}
	addUIFlags(cmd, &o)
	cmd.Flags().StringVar(&o.invite, "invite", "", "show your sandbox in a class with the invite `FILE` your instructor gave you")
	_ = cmd.MarkFlagFilename("invite")
	return cmd
}

func addUIFlags(cmd *cobra.Command, o *uiOptions) {
	cmd.Flags().StringVar(&o.addr, "addr", "", "listen on `HOST:PORT` (default 127.0.0.1 and a free port; anything but loopback prints a warning)")
	cmd.Flags().BoolVar(&o.noBrowser, "no-browser", false, "print the URL and open no browser")
	cmd.Flags().BoolVar(&o.watch, "watch", false, "reload the lab's file into the page and its terminals when you edit it (a lab you write, with --lab)")
}

// listenAddr is the address labctl ui listens on: addr, or loopback with
// a free port. Only the --addr flag (fromFlag) may name an address that
// is not loopback; the answer says whether it is.
func listenAddr(addr string, fromFlag bool) (listen string, loopback bool, err error) {
	if addr == "" {
		return "127.0.0.1:0", true, nil
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return "", false, fmt.Errorf("--addr %q is not HOST:PORT: %w", addr, err)
	}
	ip := net.ParseIP(host)
	loopback = strings.EqualFold(host, "localhost") || (ip != nil && ip.IsLoopback())
	if !loopback && !fromFlag {
		return "", false, fmt.Errorf("the configuration asks labctl ui to listen on %s, which is not loopback: only the --addr flag may do that (remove addr from LABCTL_ADDR or the config file, or pass --addr %s)", addr, addr)
	}
	return addr, loopback, nil
}

// newOpener writes the file the browser is given, which leads to url:
// under $XDG_RUNTIME_DIR/labctl, else labctl's state directory.
func newOpener(url string) (*web.Opener, error) {
	base := os.Getenv("XDG_RUNTIME_DIR")
	if base != "" && filepath.IsAbs(base) {
		base = filepath.Join(base, "labctl")
	} else {
		d, err := statedir.Dir(os.Getenv, ".ui")
		if err != nil {
			return nil, err
		}
		base = d
	}
	return web.NewOpener(base, url)
}

// startBrowser opens url in the user's browser: $BROWSER, else the
// system's opener. Tests replace it.
var startBrowser = func(url string) error {
	var name string
	var args []string
	if b := os.Getenv("BROWSER"); b != "" {
		name = strings.Split(b, string(os.PathListSeparator))[0]
	} else if runtime.GOOS == "darwin" {
		name = "open"
	} else {
		name = "xdg-open"
	}
	path, err := exec.LookPath(name)
	if err != nil {
		return fmt.Errorf("no browser opener (%s) found", name)
	}
	args = append(args, url)
	cmd := exec.Command(path, args...)
	cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
	if err := cmd.Start(); err != nil {
		return err
	}
	go cmd.Wait() // the opener may outlive nothing of ours; reap it
	return nil
}

// runUI serves the lab's page until ctx ends. page, when set, is the path
// to print and open instead of the page itself (labctl open).
func runUI(ctx context.Context, g *globals, o uiOptions, fromFlag bool, page func(context.Context, *web.Server) (string, error)) error {
	addr, loopback, err := listenAddr(o.addr, fromFlag)
	if err != nil {
		return &ExitError{Code: exitError, Err: err}
	}
	if o.watch && o.invite != "" {
		return &ExitError{Code: exitError, Err: errWatchBuiltIn}
	}
	if o.watch {
		if _, err := g.watchedFile(); err != nil {
			return &ExitError{Code: exitError, Err: err}
		}
	}
	st, env, kube, err := g.uiLab(ctx, o)
	if err != nil {
		return &ExitError{Code: exitError, Err: err}
	}
	defer env.Close()
	srv, err := web.New(web.Config{
		Lab:       st.lab,
		Digest:    st.digest,
		Store:     st.store,
		Sandbox:   uiSandbox{env, st.lab},
		Catalog:   st.catalog,
		Situation: st.situation,
		Assets:    assets.FS,
		Fixtures:  st.fixtures,
		Kube:      kube,
		Log:       g.detailOrDiscard(),
	})
	if err != nil {
		return &ExitError{Code: exitError, Err: err}
	}
	defer srv.Close()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return &ExitError{Code: exitError, Err: fmt.Errorf("labctl ui cannot listen on %s: %w", addr, err)}
	}
	if err := srv.Start(ln); err != nil {
		ln.Close()
		return &ExitError{Code: exitError, Err: err}
	}
	url := srv.URL()
	if page != nil {
		path, err := page(ctx, srv)
		if err != nil {
			return &ExitError{Code: exitError, Err: err}
		}
		url = srv.PathURL(path)
	}
	fmt.Fprintln(g.streams.Out, url)
	if !loopback {
		fmt.Fprintf(g.streams.Err, "warning: labctl ui listens on %s, beyond this machine: anyone who can reach it and learns the URL's token has your lab's terminals\n", addr)
	}
	if !o.noBrowser {
		// The browser is given a file that leads to the URL, not the
		// URL: every local user can read a process's arguments.
		opener, err := newOpener(url)
		if err == nil {
			defer opener.Remove()
			err = startBrowser(opener.URL)
		}
		if err != nil {
			fmt.Fprintf(g.streams.Err, "Open the URL above in your browser (%v).\n", err)
		} else if !g.quiet() {
			fmt.Fprintf(g.streams.Err, "Opened your browser with %s, which only you can read; it is removed when this stops.\n", opener.Path)
		}
	}
	if o.watch {
		wctx, stop := context.WithCancel(ctx)
		defer stop()
		err := g.watchLab(wctx, st, g.streams.Err, func(name string, c labwatch.Change) {
			srv.SetLab(name, c.Lab, c.Digest, warningLines(c.Warnings))
		}, srv.SetLabProblem)
		if err != nil {
			return &ExitError{Code: exitError, Err: err}
		}
		fmt.Fprintln(g.streams.Err, "Watching the lab's file: an edit shows in the page and its terminals.")
	}
	fmt.Fprintln(g.streams.Err, "Serving the lab's page; press Ctrl-C to stop (your work in the sandbox stays).")
	select {
	case <-ctx.Done():
	case <-srv.Done():
	}
	return srv.Close()
}

// uiLab is the lab the page shows, its live environment and the
// learner's identity for the previews: the local lab's, or with --invite
// the invite's sandbox on the practice lab, without previews (the lab's
// API server is reached from the sandbox only).
func (g *globals) uiLab(ctx context.Context, o uiOptions) (*labState, liveLab, func(context.Context) (*rest.Config, error), error) {
	if o.invite != "" {
		st, inv, err := g.openInvite(ctx, o.invite)
		if err != nil {
			return nil, nil, nil, err
		}
		g.invitedLine(st, inv)
		if !g.quiet() {
			fmt.Fprintln(g.streams.Err, "The page shows no previews of the lab's Services: your lab's API server is reached from your sandbox only.")
		}
		return st, inv, nil, nil
	}
	st, err := g.loadLabState()
	if err != nil {
		return nil, nil, nil, err
	}
	env, err := g.connectLab(ctx, st)
	if err != nil {
		return nil, nil, nil, err
	}
	if !st.lab.HasCluster() {
		// No cluster, no Services: the page has no previews.
		return st, env, nil, nil
	}
	return st, env, env.LearnerConfig, nil
}

// detailOrDiscard is detail, never nil.
func (g *globals) detailOrDiscard() io.Writer {
	if w := g.detail(); w != nil {
		return w
	}
	return io.Discard
}

// uiSandbox is the live lab as the page uses it: its shells are the ones
// `labctl shell` opens.
type uiSandbox struct {
	liveLab
	lab *lab.Lab
}

// MarkStep marks a step's start where the live lab marks them (an invite:
// checks.StepMarker), as `labctl shell` does.
func (u uiSandbox) MarkStep(ctx context.Context, step string) error {
	if m, ok := u.liveLab.(checks.StepMarker); ok {
		return m.MarkStep(ctx, step)
	}
	return nil
}

func (u uiSandbox) OpenShell(ctx context.Context, term string, lang msg.Lang, rows, cols uint) (web.Shell, error) {
	sh, err := u.AttachShell(ctx, shellOptions(u.lab, term, lang, rows, cols))
	if err != nil {
		return nil, err
	}
	return sh, nil
}

// shellOptions are the learner's login shell as `labctl shell` and the
// page's terminals start it. LABCTL_LANG tells the in-sandbox lab function
// the language labctl speaks to the learner, lang.
func shellOptions(l *lab.Lab, term string, lang msg.Lang, rows, cols uint) provision.ShellOptions {
	return provision.ShellOptions{
		Env:     []string{"LABCTL_SHELL=1", "TERM=" + term, "HOME=/root", msg.EnvLang + "=" + string(lang)},
		WorkDir: l.Sandbox.WorkDir,
		Rows:    rows,
		Cols:    cols,
	}
}
