package provision

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"

	"github.com/labctl/labctl/internal/docker"
	"github.com/labctl/labctl/internal/msg"
	"github.com/labctl/labctl/internal/statusline"
	"github.com/labctl/labctl/lab"
	"github.com/labctl/labctl/sandbox"
)

const (
	// namespaceDeleteWait bounds the wait for the lab's namespaces, or what
	// they hold, to go away.
	namespaceDeleteWait = 2 * time.Minute
	// namespacePoll is how often a deleted namespace or object is looked
	// for.
	namespacePoll = 100 * time.Millisecond
	// workers is how many lists or deletes run at once when a namespace is
	// inspected or cleared.
	workers = 8
)

// StuckNamespacesError names namespaces that did not finish terminating.
type StuckNamespacesError struct {
	Namespaces []string
	Wait       time.Duration
}

func (e *StuckNamespacesError) Error() string {
	return fmt.Sprintf("namespaces still terminating after %s: %s (look for finalizers: `kubectl get ns %s -o yaml`)",
		e.Wait, strings.Join(e.Namespaces, ", "), e.Namespaces[0])
}

// resetNamespaces resets l's namespaces in the cluster admin reaches;
// cluster names it in messages.
func resetNamespaces(ctx context.Context, admin *rest.Config, l *lab.Lab, cluster string) error {
	cfg := rest.CopyConfig(admin)
	// A namespace is inspected with one list per resource type; the
	// client's default of 5 requests a second would make that the slowest
	// part of a reset.
	cfg.QPS, cfg.Burst = 200, 400
	// Listing every type lists deprecated ones too (v1 Endpoints); their
	// warnings say nothing to the learner.
	cfg.WarningHandler = rest.NoWarnings{}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("connecting to cluster %s: %w", cluster, err)
	}
	md, err := metadata.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("connecting to cluster %s: %w", cluster, err)
	}
	r := &nsReset{cs: cs, objs: metadataStore{md}, disc: cs.Discovery(), lab: l, wait: namespaceDeleteWait, poll: namespacePoll}
	return r.run(ctx)
}

// nsReset resets a lab's namespaces through these clients.
type nsReset struct {
	cs   kubernetes.Interface
	objs objectStore
	disc discovery.DiscoveryInterfaceWithContext
	lab  *lab.Lab
	wait time.Duration
	poll time.Duration
}

func (r *nsReset) run(ctx context.Context) error {
	nss := r.lab.Cluster.Namespaces
	grants, err := graderGrants(ctx, r.disc, r.lab.KubeReads())
	if err != nil {
		return err
	}
	gvrs, err := r.resourceTypes(ctx)
	if err != nil {
		return err
	}
	var gone []string
	for _, ns := range nss {
		n, err := r.cs.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			continue
		case err != nil:
			return fmt.Errorf("looking up namespace %s: %w", ns, err)
		case gvrs == nil || n.DeletionTimestamp != nil || n.Status.Phase == corev1.NamespaceTerminating:
			if err := r.deleteNamespace(ctx, ns); err != nil {
				return err
			}
			gone = append(gone, ns)
		default:
			if err := r.clear(ctx, ns, gvrs); err != nil {
				return err
			}
		}
	}
	if err := r.waitGone(ctx, gone); err != nil {
		return err
	}
	labels := r.labels()
	for _, ns := range nss {
		if err := ensureNamespace(ctx, r.cs, ns, namespaceLabels(r.lab)); err != nil {
			return err
		}
	}
	if err := grantLearner(ctx, r.cs, r.lab, labels); err != nil {
		return err
	}
	if err := grantGrader(ctx, r.cs, grants, labels); err != nil {
		return err
	}
	return ensureDefaultServiceAccounts(ctx, r.cs, nss)
}

func (r *nsReset) labels() map[string]string {
	return map[string]string{sandbox.LabelLab: r.lab.Metadata.Name}
}

// deleteNamespace deletes ns and, so that the namespace controller need not
// wait out their grace periods, its pods at once.
func (r *nsReset) deleteNamespace(ctx context.Context, ns string) error {
	now := int64(0)
	background := metav1.DeletePropagationBackground
	err := r.cs.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{GracePeriodSeconds: &now, PropagationPolicy: &background})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("deleting namespace %s: %w", ns, err)
	}
	err = r.cs.CoreV1().Pods(ns).DeleteCollection(ctx, metav1.DeleteOptions{GracePeriodSeconds: &now}, metav1.ListOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting the pods of namespace %s: %w", ns, err)
	}
	return nil
}

// waitGone waits, at most r.wait, until none of nss exists.
func (r *nsReset) waitGone(ctx context.Context, nss []string) error {
	wctx, cancel := context.WithTimeout(ctx, r.wait)
	defer cancel()
	remaining := slices.Clone(nss)
	for len(remaining) > 0 {
		var still []string
		for _, ns := range remaining {
			_, err := r.cs.CoreV1().Namespaces().Get(wctx, ns, metav1.GetOptions{})
			switch {
			case apierrors.IsNotFound(err):
			case err != nil && wctx.Err() == nil:
				return fmt.Errorf("waiting for namespace %s to go: %w", ns, err)
			default:
				still = append(still, ns)
			}
		}
		if remaining = still; len(remaining) == 0 {
			break
		}
		select {
		case <-wctx.Done():
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return &StuckNamespacesError{Namespaces: remaining, Wait: r.wait}
		case <-time.After(r.poll):
		}
	}
	return nil
}

// RecreateSandbox replaces the sandbox container, its home volume and the
// grader container with new ones made with the same settings (the home
// empty).
func (k *kindRuntime) RecreateSandbox(ctx context.Context) error {
	name := k.lab.Metadata.Name
	spec, err := sandbox.BuildSpec(k.settings)
	if err != nil {
		return err
	}
	graderSpec, err := sandbox.BuildGraderSpec(k.settings)
	if err != nil {
		return err
	}
	// The grader mounts the home volume too: both go before the volume,
	// and both come back, at the same time.
	if err := both(ctx,
		func(ctx context.Context) error { return k.engine.Remove(ctx, k.container) },
		func(ctx context.Context) error { return k.engine.Remove(ctx, k.grader) }); err != nil {
		return err
	}
	vol := sandbox.VolumeName(name)
	if err := k.engine.RemoveVolume(ctx, vol); err != nil {
		return err
	}
	if _, err := k.engine.EnsureVolume(ctx, vol, sandbox.Labels(name, sandbox.RoleHome)); err != nil {
		return err
	}
	return both(ctx,
		func(ctx context.Context) error { _, err := k.engine.EnsureSandbox(ctx, spec); return err },
		func(ctx context.Context) error { _, err := k.engine.EnsureSandbox(ctx, graderSpec); return err })
}

// copyHome streams /root of container out as a tar (entries root/...).
func copyHome(ctx context.Context, engine *docker.Engine, container string, w io.Writer) error {
	rc, err := engine.CopyOut(ctx, container, "/root")
	if err != nil {
		return err
	}
	defer rc.Close()
	if _, err := io.Copy(w, rc); err != nil {
		return fmt.Errorf("copying /root out of %s: %w", container, err)
	}
	return nil
}

// RecreateCluster takes the whole lab down and brings it up fresh, with
// the options it was brought up with (Up's, or WithUpOptions) and the first
// step's setup. It prints its progress on those options' status lines.
func (k *kindRuntime) RecreateCluster(ctx context.Context) (*Live, error) {
	up := k.up
	up.Lab = k.lab
	up.CurrentStep = ""
	st := up.Status
	if st == nil {
		st = statusline.Discard()
	}
	st.Start(up.Catalog.Say(msg.StatusRemovingCluster))
	if err := Down(ctx, k.lab); err != nil {
		st.End(false)
		return nil, err
	}
	st.End(true)
	fresh, err := Up(ctx, up)
	if err != nil {
		return nil, err
	}
	k.engine.Close()
	return fresh, nil
}

// both runs f and g at the same time and returns their errors joined.
func both(ctx context.Context, f, g func(context.Context) error) error {
	errc := make(chan error, 1)
	go func() { errc <- g(ctx) }()
	err := f(ctx)
	return errors.Join(err, <-errc)
}
