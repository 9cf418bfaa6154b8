package class

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/labctl/labctl/internal/homebound"
	"github.com/labctl/labctl/internal/textsafe"
)

// poll calls done every 300 ms until it says true, fails, or limit passes.
func (c *Class) poll(ctx context.Context, limit time.Duration, what string, done func() (bool, error)) error {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	for {
		ok, err := done()
		if err != nil {
			return err
		}
		if ok {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waited %s for %s: %w", limit, what, ctx.Err())
		case <-time.After(300 * time.Millisecond):
		}
	}
}

// waitControlPlane places the checker in each of the learner's Pods whose
// prepare container waits for it, and waits until the API server is ready
// and the sandbox and the warden of /root run. A problem that waiting will
// not mend ends it early.
func (c *Class) waitControlPlane(ctx context.Context, ns string) error {
	pods := c.cs.CoreV1().Pods(ns)
	placed := map[string]bool{}
	pending := ""
	err := c.poll(ctx, classWait, "the control plane and the sandbox of "+ns, func() (bool, error) {
		pending = ""
		ready := true
		for _, pn := range podNames {
			p, err := pods.Get(ctx, pn.name, metav1.GetOptions{})
			if apierrors.IsNotFound(err) && pn.name == sandboxPod {
				if why := c.homeStopped(ctx, ns); why != "" {
					return false, fmt.Errorf("pod %s/%s is gone: %s", ns, pn.name, why)
				}
			}
			if err != nil {
				return false, fmt.Errorf("reading pod %s/%s: %w", ns, pn.name, err)
			}
			if msg := podProblem(p); msg != "" {
				return false, errors.New(msg)
			}
			if !placed[p.Name] && initRunning(p, containerPrepare) {
				if err := c.placeChecker(ctx, ns, p.Name, pn.checker); err != nil {
					return false, err
				}
				placed[p.Name] = true
			}
			pending += podPending(p)
			ready = ready && podReady(p)
		}
		return ready, nil
	})
	if err != nil && pending != "" {
		if strings.Contains(pending, "PersistentVolumeClaim") {
			pending += " (the learner's volume claims are not bound: name a StorageClass of the cluster with --storage-class, or give it a default one)"
		}
		return fmt.Errorf("%w: %s", err, pending)
	}
	return err
}

// homeStopped is why the warden of the learner's /root last stopped their
// sandbox, escaped, or "" if it has not (within the Events the class
// cluster keeps, an hour unless its API server says otherwise).
func (c *Class) homeStopped(ctx context.Context, ns string) string {
	evs, err := c.cs.CoreV1().Events(ns).List(ctx, metav1.ListOptions{
		FieldSelector: "involvedObject.name=" + sandboxPod + ",reason=" + homebound.EventReason})
	if err != nil || len(evs.Items) == 0 {
		return ""
	}
	last := slices.MaxFunc(evs.Items, func(a, b corev1.Event) int { return a.LastTimestamp.Compare(b.LastTimestamp.Time) })
	return textsafe.EscapeLine(last.Message)
}

// initRunning says whether p's init container name runs.
func initRunning(p *corev1.Pod, name string) bool {
	for _, s := range p.Status.InitContainerStatuses {
		if s.Name == name {
			return s.State.Running != nil
		}
	}
	return false
}

// placeChecker streams the static checker into dir of pod's prepare
// container, which ends once it is there: the Pod's other containers have
// it read-only.
func (c *Class) placeChecker(ctx context.Context, ns, pod, dir string) error {
	if c.checkerErr != nil {
		return c.checkerErr
	}
	f, err := os.Open(c.checker)
	if err != nil {
		return err
	}
	defer f.Close()
	bin := dir + "/labctl"
	script := `set -e; cat > ` + bin + `.new; chmod 0555 ` + bin + `.new; mv ` + bin + `.new ` + bin + `; : > ` + dir + `/ready`
	code, out, err := c.pods(ns).run(ctx, podCommand{pod: pod, container: containerPrepare, cmd: []string{"sh", "-c", script}, stdin: f, wait: copyWait})
	if err != nil {
		return fmt.Errorf("placing the checker in %s: %w", ns, err)
	}
	if code != 0 {
		return fmt.Errorf("placing the checker in %s: exit %d: %s", ns, code, out.FirstLine("(it printed nothing)"))
	}
	return nil
}
