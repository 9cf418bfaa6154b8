// Package docker is labctl's facade over the Docker engine API: volumes,
// containers made from sandbox's specs, exec, file copies, running the
// checker in the grader container (it knows nothing of what the checker
// says: provision.RunChecker reads that), liveness probes and the PTY
// attach. With
// sandbox (the container specs) it is the only package that imports the
// Docker client.
package docker

import (
	"context"
	"fmt"
	"time"

	"github.com/docker/docker/client"
)

// Engine is one connection to the Docker engine, shared by every call.
type Engine struct {
	cli *client.Client
}

// NewEngine connects to the Docker engine named by the environment
// (DOCKER_HOST, or the default socket) and checks that it answers.
func NewEngine(ctx context.Context) (*Engine, error) {
	cli, err := client.NewClientWithOpts(client.FromEnv, client.WithAPIVersionNegotiation())
	if err != nil {
		return nil, fmt.Errorf("connecting to Docker: %w", err)
	}
	pingCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	ping, err := cli.Ping(pingCtx)
	if err != nil {
		cli.Close()
		return nil, fmt.Errorf("the Docker engine does not answer (%v): start Docker (e.g. `sudo systemctl start docker`) and make sure your user may use it", err)
	}
	// The API version comes from this ping: the client's first request
	// then asks for no second one.
	cli.NegotiateAPIVersionPing(ping)
	return &Engine{cli: cli}, nil
}

// Close releases the connection.
func (e *Engine) Close() error { return e.cli.Close() }
