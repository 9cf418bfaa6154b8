package app

import (
	"context"
	"errors"
	"io"
	"os"
	"time"

	"k8s.io/client-go/rest"

	"github.com/labctl/labctl/grading"
	"github.com/labctl/labctl/images"
	"github.com/labctl/labctl/internal/preflight"
	"github.com/labctl/labctl/lab"
	"github.com/labctl/labctl/provision"
	"github.com/labctl/labctl/provision/class"
	"github.com/labctl/labctl/provision/kind"
	"github.com/labctl/labctl/usecase/labtest"
	"github.com/labctl/labctl/usecase/reset"
)

// environment is the command layer's one seam to the machine: Docker, kind
// and the images. Commands reach them only through it (globals.env), so
// each command's output and exit codes are unit-tested with a fake one;
// provisioned is the real one.
type environment interface {
	// Up creates or repairs the lab's cluster and sandbox.
	Up(ctx context.Context, o kind.Options) (liveLab, error)
	// Connect reaches the lab's running environment; up says how to bring
	// it up again (a hard reset) and which checker binary runs the checks.
	Connect(ctx context.Context, up kind.Options) (liveLab, error)
	// Inspect reports what exists of the lab's environment, changing nothing.
	Inspect(ctx context.Context, l *lab.Lab) (kind.State, error)
	// Down removes the lab's cluster, sandbox and network, and its home
	// volume unless keepHome.
	Down(ctx context.Context, l *lab.Lab, keepHome bool) error
	// Stop stops the lab's containers, keeping them; Start starts them
	// again and returns the lab live as it was.
	Stop(ctx context.Context, l *lab.Lab, o kind.Options) error
	Start(ctx context.Context, o kind.Options) (liveLab, error)
	// SaveHome writes the lab's /root as a tar into dir and returns its
	// path, or "" when the lab has no home volume.
	SaveHome(ctx context.Context, l *lab.Lab, dir string) (string, error)
	// Preflight probes the machine for what a lab needs.
	Preflight(ctx context.Context) []preflight.Finding

	EnsureImages(ctx context.Context, o images.Options) (images.Refs, error)
	// EnsureWorkloads makes the lab's workload images present (building
	// the lab's own from labDir) and returns those present.
	EnsureWorkloads(ctx context.Context, o images.Options, l *lab.Lab, labDir string) ([]string, error)
	// Workloads lists the lab's workload images and which are present.
	Workloads(ctx context.Context, o images.Options, l *lab.Lab) ([]images.Workload, error)
	ListImages(ctx context.Context, o images.Options) ([]images.Image, error)
	SaveImages(ctx context.Context, o images.Options, file string, refs images.Refs) error
	LoadImages(ctx context.Context, o images.Options, file string) ([]string, error)
	// SaveImagesTo streams refs as one `docker save` tar to w (a bundle's
	// images entry); LoadImagesFrom loads such a stream; ImagesPresent
	// returns the ID of each of refs the engine has.
	SaveImagesTo(ctx context.Context, o images.Options, w io.Writer, refs []string) error
	LoadImagesFrom(ctx context.Context, o images.Options, r io.Reader, what string) ([]string, error)
	ImagesPresent(ctx context.Context, o images.Options, refs []string) (map[string]string, error)
	// OpenClass connects to a class on an existing Kubernetes cluster
	// (the class commands).
	OpenClass(ctx context.Context, cfg class.Config) (classCluster, error)
	// CreateClassCluster makes (or completes) a kind class cluster on this
	// machine; DeleteClassCluster removes one and says whether there was.
	CreateClassCluster(ctx context.Context, o kind.ClassClusterOptions) (*kind.ClassCluster, error)
	DeleteClassCluster(ctx context.Context, name string) (bool, error)
	// OpenInvite reads the invite `labctl class invite` wrote: a learner's
	// own sandbox on the class cluster.
	OpenInvite(ctx context.Context, kubeconfig []byte) (invitedLab, error)
}

// liveLab is a lab whose cluster and sandbox run, as check, grade, reset,
// test, exec and the shell use it.
type liveLab interface {
	labtest.Environment // reset's methods and RunChecks
	grading.Prober
	// ExecLogin runs cmd in the sandbox's login environment with the given
	// streams and returns its exit code.
	ExecLogin(ctx context.Context, cmd []string, in io.Reader, out, errOut io.Writer) (int, error)
	// ExecInTerminal is ExecLogin on the user's terminal.
	ExecInTerminal(ctx context.Context, cmd []string, in, out *os.File, term string) (int, error)
	// AttachShell starts the learner's login shell on a PTY.
	AttachShell(ctx context.Context, o provision.ShellOptions) (attachedShell, error)
	// LearnerConfig is the learner's identity for a client on the host
	// (the previews of `labctl ui` and `labctl open`).
	LearnerConfig(ctx context.Context) (*rest.Config, error)
	Close() error
}

// attachedShell is the learner's shell as `labctl shell` drives it: its
// output, its keystrokes, its size and its exit code.
type attachedShell = provision.Shell

// provisioned is the real environment: provision, images and preflight on
// the local Docker engine.
type provisioned struct{}

func (provisioned) Up(ctx context.Context, o kind.Options) (liveLab, error) {
	env, err := kind.Up(ctx, o)
	if err != nil {
		return nil, err
	}
	return env, nil
}

func (provisioned) Connect(ctx context.Context, up kind.Options) (liveLab, error) {
	env, err := kind.Connect(ctx, up.Lab, kind.WithUpOptions(up))
	if err != nil {
		return nil, err
	}
	return env, nil
}

func (provisioned) CreateClassCluster(ctx context.Context, o kind.ClassClusterOptions) (*kind.ClassCluster, error) {
	return kind.CreateClassCluster(ctx, o)
}

func (provisioned) DeleteClassCluster(ctx context.Context, name string) (bool, error) {
	return kind.DeleteClassCluster(ctx, name, "")
}

func (provisioned) Inspect(ctx context.Context, l *lab.Lab) (kind.State, error) {
	return kind.Inspect(ctx, l)
}

func (provisioned) Down(ctx context.Context, l *lab.Lab, keepHome bool) error {
	if keepHome {
		return kind.DownKeepingHome(ctx, l)
	}
	return kind.Down(ctx, l)
}

func (provisioned) Stop(ctx context.Context, l *lab.Lab, o kind.Options) error {
	return kind.Stop(ctx, l, o.Status, o.Catalog)
}

func (provisioned) Start(ctx context.Context, o kind.Options) (liveLab, error) {
	env, err := kind.Start(ctx, o)
	if err != nil {
		return nil, err
	}
	return env, nil
}

func (provisioned) SaveHome(ctx context.Context, l *lab.Lab, dir string) (string, error) {
	home, err := kind.OpenHome(ctx, l, "")
	if errors.Is(err, kind.ErrNoHome) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	defer home.Close()
	return reset.Backup(ctx, home, dir, time.Now())
}

func (provisioned) Preflight(ctx context.Context) []preflight.Finding { return preflight.Run(ctx) }

func (provisioned) EnsureImages(ctx context.Context, o images.Options) (images.Refs, error) {
	return images.Ensure(ctx, o)
}

func (provisioned) EnsureWorkloads(ctx context.Context, o images.Options, l *lab.Lab, labDir string) ([]string, error) {
	return images.EnsureWorkloads(ctx, o, l, labDir)
}

func (provisioned) Workloads(ctx context.Context, o images.Options, l *lab.Lab) ([]images.Workload, error) {
	return images.Workloads(ctx, o, l)
}

func (provisioned) ListImages(ctx context.Context, o images.Options) ([]images.Image, error) {
	return images.List(ctx, o)
}

func (provisioned) SaveImages(ctx context.Context, o images.Options, file string, refs images.Refs) error {
	return images.Save(ctx, o, file, refs)
}

func (provisioned) LoadImages(ctx context.Context, o images.Options, file string) ([]string, error) {
	return images.Load(ctx, o, file)
}

func (provisioned) SaveImagesTo(ctx context.Context, o images.Options, w io.Writer, refs []string) error {
	return images.SaveTo(ctx, o, w, refs)
}

func (provisioned) LoadImagesFrom(ctx context.Context, o images.Options, r io.Reader, what string) ([]string, error) {
	return images.LoadFrom(ctx, o, r, what)
}

func (provisioned) ImagesPresent(ctx context.Context, o images.Options, refs []string) (map[string]string, error) {
	return images.Present(ctx, o, refs)
}
