package images

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/labctl/labctl/internal/textsafe"
)

// CommandError is a failed external command with the tail of its output.
type CommandError struct {
	Args   []string
	Output string
	Err    error
}

func (e *CommandError) Error() string {
	// The output may be a lab author's (a Dockerfile's RUN, a compiler's
	// quote of a recipe): escaped, so it cannot steer the terminal.
	out := textsafe.Escape(strings.TrimSpace(e.Output))
	if lines := strings.Split(out, "\n"); len(lines) > 25 {
		out = "...\n" + strings.Join(lines[len(lines)-25:], "\n")
	}
	if out == "" {
		return fmt.Sprintf("%s: %v", strings.Join(e.Args, " "), e.Err)
	}
	return fmt.Sprintf("%s: %v:\n%s", strings.Join(e.Args, " "), e.Err, out)
}

func (e *CommandError) Unwrap() error { return e.Err }

// command is one external program run with a deadline.
type command struct {
	args    []string
	dir     string
	env     []string // added to the environment
	stdin   io.Reader
	stdout  io.Writer // when set, stdout goes here instead of the result
	timeout time.Duration
	log     io.Writer
	lines   func(string) // when set, called with each line of output
}

// run executes c and returns its standard output (combined with standard
// error unless stdout is redirected). The error carries the output.
func (c command) run(ctx context.Context) (string, error) {
	if c.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.timeout)
		defer cancel()
	}
	cmd := exec.CommandContext(ctx, c.args[0], c.args[1:]...)
	cmd.Dir = c.dir
	cmd.Env = append(os.Environ(), c.env...)
	cmd.Stdin = c.stdin
	cmd.WaitDelay = 10 * time.Second
	var out bytes.Buffer
	var sink io.Writer = &out
	if c.log != nil {
		sink = io.MultiWriter(sink, c.log)
	}
	if c.lines != nil {
		sink = io.MultiWriter(sink, &lineWriter{fn: c.lines})
	}
	cmd.Stderr = sink
	cmd.Stdout = sink
	if c.stdout != nil {
		cmd.Stdout = c.stdout
	}
	err := cmd.Run()
	if ctx.Err() != nil && err != nil {
		err = fmt.Errorf("%w (%v)", ctx.Err(), err)
	}
	if err != nil {
		return out.String(), &CommandError{Args: c.args, Output: out.String(), Err: err}
	}
	return out.String(), nil
}

// docker runs the docker CLI with a deadline.
func (b *builder) docker(ctx context.Context, timeout time.Duration, args ...string) (string, error) {
	return command{args: append([]string{"docker"}, args...), timeout: timeout, log: b.opts.Log}.run(ctx)
}

// dockerBuild runs `docker build` with args, showing the layer it is on.
func (b *builder) dockerBuild(ctx context.Context, timeout time.Duration, args ...string) (string, error) {
	return command{
		args: append([]string{"docker", "build"}, args...), timeout: timeout, log: b.opts.Log,
		lines: func(line string) {
			if layer, ok := buildLayer(line); ok {
				b.progress.step("%s", layer)
			}
		},
	}.run(ctx)
}

// imageExists reports whether the local engine has ref.
func (b *builder) imageExists(ctx context.Context, ref string) (bool, error) {
	_, ok, err := b.inspectImage(ctx, ref, "{{.Id}}")
	return ok, err
}

// inspectImage returns what format says of the image ref in the local
// engine, and whether the engine has it.
func (b *builder) inspectImage(ctx context.Context, ref, format string) (string, bool, error) {
	out, err := b.docker(ctx, time.Minute, "image", "inspect", "--format", format, ref)
	if err == nil {
		return out, true, nil
	}
	if strings.Contains(strings.ToLower(out), "no such image") {
		return "", false, nil
	}
	return "", false, fmt.Errorf("asking Docker for image %s: %w", ref, err)
}

// tryPull pulls ref when a registry answers; it reports whether ref is now
// present. Offline it gives up within a few seconds.
func (b *builder) tryPull(ctx context.Context, ref string) (bool, error) {
	if !b.registry(ctx) {
		b.progress.note("no container registry answers: building locally")
		return false, nil
	}
	var pulled bool
	err := b.progress.phase(ctx, "Pulling "+ref, func(ctx context.Context) error {
		if _, err := b.docker(ctx, pullTimeout, "pull", ref); err != nil {
			return err
		}
		pulled = true
		return nil
	})
	if err != nil {
		b.progress.note("pull failed: building locally")
		return false, nil
	}
	return pulled, nil
}

// dockerHubAnswers reports whether Docker Hub's registry answers HTTP
// within a few seconds.
func dockerHubAnswers(ctx context.Context) bool {
	return registryAnswers(ctx, "https://registry-1.docker.io/v2/")
}

// registryAnswers reports whether url answers HTTP (any status) within a
// few seconds.
func registryAnswers(ctx context.Context, url string) bool {
	ctx, cancel := context.WithTimeout(ctx, 4*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return false
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return true
}
