// Package podexec runs processes in a Pod's containers through the
// Kubernetes exec API, and forwards a local port to a Pod through the
// port-forward API: a WebSocket first, SPDY when the cluster's API server
// does not take one (as kubectl does). It knows nothing of what the Pods
// run.
package podexec

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"

	"github.com/go-logr/logr"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/httpstream"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/portforward"
	"k8s.io/client-go/tools/remotecommand"
	"k8s.io/client-go/transport/spdy"
	utilexec "k8s.io/client-go/util/exec"
	"k8s.io/klog/v2"
)

// quietClientGo sends client-go's own log lines (klog) nowhere: a stream
// that ends while its stdin is copied is not the user's business, and
// labctl reports every error it acts on itself.
var quietClientGo = sync.OnceFunc(func() { klog.SetLogger(logr.Discard()) })

// Exec is one process started in a container through the exec API.
type Exec struct {
	Namespace, Pod, Container string
	Cmd                       []string
	Stdin                     io.Reader
	Stdout, Stderr            io.Writer
	// TTY gives the process a terminal; Sizes then sets its size.
	TTY   bool
	Sizes remotecommand.TerminalSizeQueue
}

// Run starts the process and waits for it; it returns its exit code. An
// error is a failure to run it, never the process's own exit status.
func (x Exec) Run(ctx context.Context, cfg *rest.Config, cs kubernetes.Interface) (int, error) {
	quietClientGo()
	req := cs.CoreV1().RESTClient().Post().Resource("pods").Namespace(x.Namespace).Name(x.Pod).SubResource("exec").
		VersionedParams(&corev1.PodExecOptions{
			Container: x.Container,
			Command:   x.Cmd,
			Stdin:     x.Stdin != nil,
			Stdout:    x.Stdout != nil,
			Stderr:    x.Stderr != nil && !x.TTY,
			TTY:       x.TTY,
		}, scheme.ParameterCodec)
	ws, err := remotecommand.NewWebSocketExecutor(cfg, http.MethodGet, req.URL().String())
	if err != nil {
		return -1, fmt.Errorf("exec in pod %s/%s: %w", x.Namespace, x.Pod, err)
	}
	sp, err := remotecommand.NewSPDYExecutor(cfg, http.MethodPost, req.URL())
	if err != nil {
		return -1, fmt.Errorf("exec in pod %s/%s: %w", x.Namespace, x.Pod, err)
	}
	exec, err := remotecommand.NewFallbackExecutor(ws, sp, func(err error) bool {
		return httpstream.IsUpgradeFailure(err) || httpstream.IsHTTPSProxyError(err)
	})
	if err != nil {
		return -1, err
	}
	opts := remotecommand.StreamOptions{Stdin: x.Stdin, Tty: x.TTY, TerminalSizeQueue: x.Sizes}
	if x.TTY {
		opts.Stdout = x.Stdout
	} else {
		opts.Stdout, opts.Stderr = outputs(x.Stdout, x.Stderr)
	}
	err = exec.StreamWithContext(ctx, opts)
	var exit utilexec.ExitError
	if errors.As(err, &exit) && exit.Exited() {
		return exit.ExitStatus(), nil
	}
	if err != nil {
		if ctx.Err() != nil {
			return -1, ctx.Err()
		}
		return -1, fmt.Errorf("exec in pod %s/%s, container %s: %w", x.Namespace, x.Pod, x.Container, err)
	}
	return 0, nil
}

// outputs returns the writers for an exec's stdout and stderr. client-go
// copies the two streams at once, each in its own goroutine, and a caller
// often passes one writer for both (a bytes.Buffer: its ReadFrom, which
// io.Copy prefers, sets the buffer's length back when its read ends,
// dropping what the other stream wrote meanwhile). The writers returned
// take turns and offer only Write.
func outputs(stdout, stderr io.Writer) (io.Writer, io.Writer) {
	mu := new(sync.Mutex)
	wrap := func(w io.Writer) io.Writer {
		if w == nil {
			return nil
		}
		return &turnWriter{mu: mu, w: w}
	}
	return wrap(stdout), wrap(stderr)
}

// turnWriter is a writer that shares a lock with another.
type turnWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (t *turnWriter) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.w.Write(p)
}

// Forward is a port-forward from a loopback port on this machine to a
// port of a Pod; Close ends it.
type Forward struct {
	// Port is the local port.
	Port   uint16
	cancel context.CancelFunc
	done   chan struct{}
}

// PortForward forwards a free loopback port to the Pod's port.
func PortForward(ctx context.Context, cfg *rest.Config, cs kubernetes.Interface, ns, pod string, port int) (*Forward, error) {
	quietClientGo()
	u := cs.CoreV1().RESTClient().Post().Resource("pods").Namespace(ns).Name(pod).SubResource("portforward").URL()
	transport, upgrader, err := spdy.RoundTripperFor(cfg)
	if err != nil {
		return nil, err
	}
	sp := spdy.NewDialer(upgrader, &http.Client{Transport: transport}, http.MethodPost, u)
	ws, err := portforward.NewSPDYOverWebsocketDialer(u, cfg)
	if err != nil {
		return nil, err
	}
	dialer := portforward.NewFallbackDialer(ws, sp, func(err error) bool {
		return httpstream.IsUpgradeFailure(err) || httpstream.IsHTTPSProxyError(err)
	})
	fctx, cancel := context.WithCancel(context.Background())
	ready := make(chan struct{})
	pf, err := portforward.NewOnAddressesWithContext(fctx, dialer, []string{"127.0.0.1"}, []string{fmt.Sprintf("0:%d", port)}, ready, io.Discard, io.Discard)
	if err != nil {
		cancel()
		return nil, fmt.Errorf("port-forward to pod %s/%s: %w", ns, pod, err)
	}
	f := &Forward{cancel: cancel, done: make(chan struct{})}
	errc := make(chan error, 1)
	go func() {
		defer close(f.done)
		errc <- pf.ForwardPorts()
	}()
	select {
	case <-ready:
	case err := <-errc:
		cancel()
		return nil, fmt.Errorf("port-forward to pod %s/%s: %w", ns, pod, err)
	case <-ctx.Done():
		cancel()
		return nil, ctx.Err()
	}
	ports, err := pf.GetPorts()
	if err != nil || len(ports) != 1 {
		cancel()
		return nil, fmt.Errorf("port-forward to pod %s/%s: no local port (%v)", ns, pod, err)
	}
	f.Port = ports[0].Local
	return f, nil
}

// Close ends the forward and waits for it.
func (f *Forward) Close() {
	f.cancel()
	<-f.done
}

// Shell is a process on a PTY in a Pod's container, through the exec API:
// reading gives its output, writing types into it.
type Shell struct {
	out    *io.PipeReader
	in     *io.PipeWriter
	sizes  *sizeQueue
	cancel context.CancelFunc
	done   chan struct{}
	code   int
	err    error
	close  sync.Once
}

// Attach starts cmd on a PTY of rows and cols (none when zero) in the
// container of Pod ns/pod. The process outlives ctx's cancellation, not
// Close.
func Attach(ctx context.Context, cfg *rest.Config, cs kubernetes.Interface, ns, pod, container string, cmd []string, rows, cols uint) *Shell {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	sctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	s := &Shell{out: outR, in: inW, sizes: newSizeQueue(rows, cols), cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(s.done)
		s.code, s.err = Exec{Namespace: ns, Pod: pod, Container: container, Cmd: cmd,
			Stdin: inR, Stdout: outW, TTY: true, Sizes: s.sizes}.Run(sctx, cfg, cs)
		s.sizes.close()
		outW.CloseWithError(io.EOF)
	}()
	return s
}

func (s *Shell) Read(p []byte) (int, error)  { return s.out.Read(p) }
func (s *Shell) Write(p []byte) (int, error) { return s.in.Write(p) }

// Resize sets the PTY's size.
func (s *Shell) Resize(_ context.Context, rows, cols uint) error {
	s.sizes.set(rows, cols)
	return nil
}

// Close detaches: the stream ends and the output with it.
func (s *Shell) Close() error {
	s.close.Do(func() {
		s.in.Close()
		s.cancel()
		s.out.Close()
	})
	return nil
}

// ExitCode waits for the shell to end and returns its exit code.
func (s *Shell) ExitCode(ctx context.Context) (int, error) {
	select {
	case <-s.done:
		if s.err != nil && !errors.Is(s.err, context.Canceled) {
			return -1, s.err
		}
		return s.code, nil
	case <-ctx.Done():
		return -1, ctx.Err()
	}
}

// sizeQueue hands the exec API a terminal's sizes, the latest first.
type sizeQueue struct {
	ch     chan remotecommand.TerminalSize
	mu     sync.Mutex
	closed bool
}

func newSizeQueue(rows, cols uint) *sizeQueue {
	q := &sizeQueue{ch: make(chan remotecommand.TerminalSize, 1)}
	if rows > 0 && cols > 0 {
		q.ch <- remotecommand.TerminalSize{Width: uint16(cols), Height: uint16(rows)}
	}
	return q
}

// Next blocks for the next size; nil ends the queue.
func (q *sizeQueue) Next() *remotecommand.TerminalSize {
	s, ok := <-q.ch
	if !ok {
		return nil
	}
	return &s
}

// set replaces a size not yet sent by this one.
func (q *sizeQueue) set(rows, cols uint) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return
	}
	s := remotecommand.TerminalSize{Width: uint16(cols), Height: uint16(rows)}
	for {
		select {
		case q.ch <- s:
			return
		default:
			select {
			case <-q.ch:
			default:
			}
		}
	}
}

func (q *sizeQueue) close() {
	q.mu.Lock()
	defer q.mu.Unlock()
	if !q.closed {
		q.closed = true
		close(q.ch)
	}
}
