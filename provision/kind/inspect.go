package kind

import (
	"context"
	"errors"
	"path/filepath"

	"github.com/labctl/labctl/provision/docker"

	"github.com/labctl/labctl/lab"
	"github.com/labctl/labctl/sandbox"
)

// State is what exists of a lab's environment.
type State struct {
	// NoCluster is set for a lab with no cluster (cluster.provider:
	// none): it is up when its sandbox and grader run.
	NoCluster     bool
	ClusterExists bool
	// APIReady is set when the API server answered the admin credentials.
	APIReady bool
	Sandbox  docker.ContainerState
	// Grader is the container the checks run in.
	Grader docker.ContainerState
	// Objects are the Docker objects labelled with the lab.
	Objects []docker.Object
	// Stopped is set for a lab `labctl stop` stopped: its containers are
	// kept, not running, until `labctl start`.
	Stopped bool
}

// Up reports whether the lab is fully up.
func (s State) Up() bool {
	if s.NoCluster {
		return s.Sandbox.Running && s.Grader.Running
	}
	return s.ClusterExists && s.APIReady && s.Sandbox.Running && s.Grader.Running
}

// Inspect reports what exists of the lab's environment, changing nothing.
func Inspect(ctx context.Context, l *lab.Lab) (State, error) {
	if l == nil || l.Metadata.Name == "" {
		return State{}, errors.New("provision: no lab given")
	}
	engine, err := docker.NewEngine(ctx)
	if err != nil {
		return State{}, err
	}
	defer engine.Close()
	name := l.Metadata.Name
	var st State
	if st.Sandbox, err = engine.State(ctx, sandbox.ContainerName(name)); err != nil {
		return st, err
	}
	if st.Grader, err = engine.State(ctx, sandbox.GraderName(name)); err != nil {
		return st, err
	}
	if st.Objects, err = engine.ListByLabel(ctx, map[string]string{sandbox.LabelLab: name}); err != nil {
		return st, err
	}
	st.Stopped = Stopped(name) && st.Sandbox.Exists && !st.Sandbox.Running
	if !l.HasCluster() {
		st.NoCluster = true
		return st, nil
	}
	kubeconfig := ""
	if dir, err := stateDir(name); err == nil {
		kubeconfig = filepath.Join(dir, adminKubeconfigFile)
	}
	k := newKind(name, kubeconfig, nil)
	if st.Stopped {
		// Its API server is not running: nothing to ask.
		st.ClusterExists, err = k.exists(ctx)
		return st, err
	}
	if _, ok := k.savedAdmin(ctx); ok {
		st.ClusterExists, st.APIReady = true, true
		return st, nil
	}
	if st.ClusterExists, err = k.exists(ctx); err != nil || !st.ClusterExists {
		return st, err
	}
	if cfg, err := k.adminConfig(ctx); err == nil {
		st.APIReady = apiReady(ctx, cfg) == nil
	}
	return st, nil
}
