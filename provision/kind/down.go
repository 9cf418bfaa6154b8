package kind

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/labctl/labctl/provision/docker"

	"github.com/labctl/labctl/lab"
	"github.com/labctl/labctl/sandbox"
)

// Down removes everything of the lab: its kind cluster and every
// container, volume and network labelled with it, the learner's home
// volume included, and nothing else. The lab's progress is kept. It is safe
// to repeat. Callers that destroy a learner's home save it first.
func Down(ctx context.Context, l *lab.Lab) error {
	return down(ctx, l, false)
}

// DownKeepingHome is Down that keeps the learner's home volume (labelled
// role=home), so that a later Up resumes the learner's work.
func DownKeepingHome(ctx context.Context, l *lab.Lab) error {
	return down(ctx, l, true)
}

func down(ctx context.Context, l *lab.Lab, keepHome bool) error {
	if l == nil || l.Metadata.Name == "" {
		return errors.New("provision: no lab given")
	}
	name := l.Metadata.Name
	engine, err := docker.NewEngine(ctx)
	if err != nil {
		return err
	}
	defer engine.Close()
	dir, err := stateDir(name)
	if err != nil {
		return err
	}
	kubeconfig := filepath.Join(dir, adminKubeconfigFile)
	var errs []error
	objs, err := engine.ListByLabel(ctx, map[string]string{sandbox.LabelLab: name})
	if err != nil {
		return err
	}
	// Containers first: volumes and networks in use cannot be removed.
	for _, kindOrder := range []string{"container", "volume", "network"} {
		for _, o := range objs {
			if o.Kind != kindOrder || (keepHome && o.Kind == "volume" && o.Labels[sandbox.LabelRole] == sandbox.RoleHome) {
				continue
			}
			switch o.Kind {
			case "container":
				err = engine.Remove(ctx, o.ID)
			case "volume":
				err = engine.RemoveVolume(ctx, o.Name)
			case "network":
				err = engine.RemoveNetwork(ctx, o.ID)
			}
			errs = append(errs, err)
		}
	}
	k := newKind(name, kubeconfig, nil)
	exists, err := k.exists(ctx)
	errs = append(errs, err)
	if err == nil && exists {
		errs = append(errs, k.delete(ctx))
	}
	if err := os.Remove(kubeconfig); err != nil && !errors.Is(err, os.ErrNotExist) {
		errs = append(errs, fmt.Errorf("removing %s: %w", kubeconfig, err))
	}
	errs = append(errs, forgetCredentials(dir), clearSetupPending(dir), clearStopped(dir))
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("taking lab %s down: %w", name, err)
	}
	return nil
}
