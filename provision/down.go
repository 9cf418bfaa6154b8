package provision

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/labctl/labctl/lab"
	"github.com/labctl/labctl/sandbox"
)

// Down removes everything of the lab: its kind cluster and every
// container, volume and network labelled with it, and nothing else. The
// lab's progress is kept. It is safe to repeat.
func Down(ctx context.Context, l *lab.Lab) error {
	if l == nil || l.Metadata.Name == "" {
		return errors.New("provision: no lab given")
	}
	name := l.Metadata.Name
	engine, err := sandbox.NewEngine(ctx)
	if err != nil {
		return err
	}
	defer engine.Close()
	dir, err := stateDir(name)
	if err != nil {
		return err
	}
	kubeconfig := filepath.Join(dir, "admin.kubeconfig")
	var errs []error
	objs, err := engine.ListByLabel(ctx, map[string]string{sandbox.LabelLab: name})
	if err != nil {
		return err
	}
	// Containers first: volumes and networks in use cannot be removed.
	for _, kindOrder := range []string{"container", "volume", "network"} {
		for _, o := range objs {
			if o.Kind != kindOrder {
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
	errs = append(errs, forgetCredentials(dir), clearSetupPending(dir))
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("taking lab %s down: %w", name, err)
	}
	return nil
}
