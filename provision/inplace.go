package provision

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
)

// labctl test undoes a case (a mistake, an alternative) in place when it
// can: it keeps the world at the step's start (the sandbox and where the
// learner's audit log stands: KeepCaseStart, and every object of the lab's
// namespaces and of the cluster: World), writes back what the case changed
// (WriteObjects), and puts the sandbox back (RestoreCaseStart). Whether the
// world is then the step's start is labtest's to judge, from World; these
// are the means. The clients and the resource types are found once, on the
// first use, and kept: a case that makes a new type makes a cluster object
// (its CustomResourceDefinition), which sends the test to a full reset.

// world holds what World and WriteObjects reuse from one case to the next.
type world struct {
	mu         sync.Mutex
	dc         dynamic.Interface
	namespaced []schema.GroupVersionResource
	cluster    []schema.GroupVersionResource
	// kinds maps "apiVersion kind" to the type that serves it.
	kinds map[string]schema.GroupVersionResource
	// audit is where the learner's audit log stood at each kept start.
	audit map[string]auditMark
}

// auditMark is a place in the audit log: its file's identity and size.
type auditMark struct {
	id   string
	size int64
}

// worldOf makes, once, the clients and the lists of types.
func (e *Live) worldOf(ctx context.Context) (*world, error) {
	if e.world == nil {
		e.world = &world{}
	}
	w := e.world
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.dc != nil {
		return w, nil
	}
	admin, err := e.adminConfig(ctx)
	if err != nil {
		return nil, err
	}
	cfg := rest.CopyConfig(admin)
	cfg.QPS, cfg.Burst = 200, 400
	cfg.WarningHandler = rest.NoWarnings{}
	dc, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("connecting to cluster %s: %w", e.rt.Name(), err)
	}
	disc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("connecting to cluster %s: %w", e.rt.Name(), err)
	}
	lists, err := disc.ServerPreferredResources()
	if err != nil {
		// A part of discovery that failed would leave types unlooked at.
		return nil, fmt.Errorf("discovering the cluster's resource types: %w", err)
	}
	kinds := map[string]schema.GroupVersionResource{}
	var namespaced, cluster []schema.GroupVersionResource
	for _, l := range lists {
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		if err != nil {
			continue
		}
		for _, r := range l.APIResources {
			if strings.Contains(r.Name, "/") || !slices.Contains(r.Verbs, "list") || !slices.Contains(r.Verbs, "delete") {
				continue
			}
			gvr := gv.WithResource(r.Name)
			kinds[gv.String()+" "+r.Kind] = gvr
			// Events are Kubernetes' account of what happened, never a
			// state a case makes; events.k8s.io serves the core ones again.
			if r.Name == "events" {
				continue
			}
			if r.Namespaced {
				namespaced = append(namespaced, gvr)
			} else {
				cluster = append(cluster, gvr)
			}
		}
	}
	byName := func(a, b schema.GroupVersionResource) int { return strings.Compare(a.String(), b.String()) }
	slices.SortFunc(namespaced, byName)
	slices.SortFunc(cluster, byName)
	w.dc, w.namespaced, w.cluster, w.kinds = dc, namespaced, cluster, kinds
	return w, nil
}

// World lists, as the admin reads them, every object of the lab's
// namespaces of every type the cluster can list and delete, and every
// object of the cluster's own types (the lab's namespaces themselves, its
// nodes, cluster roles…); events aside, and labctl's grants to the learner
// and to a probe, which come and go with labctl's own work. The objects are
// whole, status and all; sorted by kind, namespace and name.
func (e *Live) World(ctx context.Context) ([]map[string]any, error) {
	if !e.Lab.HasCluster() {
		return nil, nil
	}
	w, err := e.worldOf(ctx)
	if err != nil {
		return nil, err
	}
	type job struct {
		gvr schema.GroupVersionResource
		ns  string
	}
	var jobs []job
	for _, ns := range e.Lab.Cluster.Namespaces {
		for _, gvr := range w.namespaced {
			jobs = append(jobs, job{gvr, ns})
		}
	}
	for _, gvr := range w.cluster {
		jobs = append(jobs, job{gvr, ""})
	}
	var (
		mu  sync.Mutex
		out []map[string]any
	)
	err = parallel(ctx, jobs, func(ctx context.Context, j job) error {
		l, err := w.dc.Resource(j.gvr).Namespace(j.ns).List(ctx, metav1.ListOptions{})
		if apierrors.IsNotFound(err) || apierrors.IsMethodNotSupported(err) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("listing %s: %w", j.gvr.GroupResource(), err)
		}
		mu.Lock()
		defer mu.Unlock()
		for _, item := range l.Items {
			if j.ns != "" && labctlOwn(j.gvr, item.Object) {
				continue
			}
			out = append(out, item.Object)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("listing the lab's objects in cluster %s: %w", e.rt.Name(), err)
	}
	key := func(o map[string]any) string {
		u := unstructured.Unstructured{Object: o}
		return u.GetAPIVersion() + " " + u.GetKind() + " " + u.GetNamespace() + " " + u.GetName()
	}
	sort.Slice(out, func(i, j int) bool { return key(out[i]) < key(out[j]) })
	return out, nil
}

// WriteObjects, as the admin, deletes the objects of deletes' identities
// (pods without a grace period, dependents in the background), creates
// creates, and makes each of replaces the object of its identity, whatever
// its resource version; in that order, stopping at the first write that
// fails. Deleting what is already gone is no failure.
func (e *Live) WriteObjects(ctx context.Context, deletes, creates, replaces []map[string]any) error {
	w, err := e.worldOf(ctx)
	if err != nil {
		return err
	}
	type write struct {
		obj  map[string]any
		verb string
	}
	var writes []write
	for _, o := range deletes {
		writes = append(writes, write{o, "delete"})
	}
	for _, o := range creates {
		writes = append(writes, write{o, "create"})
	}
	for _, o := range replaces {
		writes = append(writes, write{o, "replace"})
	}
	for _, wr := range writes {
		u := &unstructured.Unstructured{Object: wr.obj}
		gvr, ok := w.kinds[u.GetAPIVersion()+" "+u.GetKind()]
		if !ok {
			return fmt.Errorf("the cluster serves no type %s %s to write %s back", u.GetAPIVersion(), u.GetKind(), u.GetName())
		}
		rc := w.dc.Resource(gvr).Namespace(u.GetNamespace())
		switch {
		case wr.verb == "delete":
			now := int64(0)
			background := metav1.DeletePropagationBackground
			err = rc.Delete(ctx, u.GetName(), metav1.DeleteOptions{GracePeriodSeconds: &now, PropagationPolicy: &background})
			if apierrors.IsNotFound(err) {
				err = nil
			}
		case wr.verb == "replace":
			// A controller's write in between (a Deployment's status,
			// often while it scales) conflicts: read the version again
			// and try again, a moment later.
			for try := 0; try < replaceTries; try++ {
				if try > 0 {
					if err = sleepCtx(ctx, replacePause); err != nil {
						break
					}
				}
				var cur *unstructured.Unstructured
				if cur, err = rc.Get(ctx, u.GetName(), metav1.GetOptions{}); err != nil {
					break
				}
				c := u.DeepCopy()
				c.SetResourceVersion(cur.GetResourceVersion())
				if _, err = rc.Update(ctx, c, metav1.UpdateOptions{}); !apierrors.IsConflict(err) {
					break
				}
			}
		default:
			_, err = rc.Create(ctx, u, metav1.CreateOptions{})
		}
		if err != nil {
			return fmt.Errorf("writing %s %s/%s back: %w", u.GetKind(), u.GetNamespace(), u.GetName(), err)
		}
	}
	return nil
}

// A replace that conflicts with a controller's write is tried replaceTries
// times, replacePause apart.
const (
	replaceTries = 10
	replacePause = 100 * time.Millisecond
)

// caseKey is the key of a case's start among the runtime's kept sandboxes,
// apart from the checkpoints'.
func caseKey(key string) string { return "case " + key }

// caseKeeper is a runtime that can keep the sandbox under a key and put it
// back on its conditions alone (kind's).
type caseKeeper interface {
	KeepSandbox(ctx context.Context, key string)
	HasKept(key string) bool
	RestoreKept(ctx context.Context, key string) bool
}

// KeepCaseStart keeps the step's start under key for RestoreCaseStart: the
// sandbox (/root, /tmp, its state) and where the learner's audit log
// stands; false when it cannot (a runtime that keeps no sandbox, one with a
// process left running, no audit log to read).
func (e *Live) KeepCaseStart(ctx context.Context, key string) bool {
	k, ok := e.rt.(caseKeeper)
	if !ok {
		return false
	}
	mark := auditMark{id: "none"}
	if e.Lab.HasCluster() {
		// A lab with no cluster has no namespaces to write in.
		m, err := e.auditMark()
		if err != nil {
			return false
		}
		mark = m
	}
	k.KeepSandbox(ctx, caseKey(key))
	if !k.HasKept(caseKey(key)) {
		return false
	}
	if e.world == nil {
		e.world = &world{}
	}
	e.world.mu.Lock()
	defer e.world.mu.Unlock()
	if e.world.audit == nil {
		e.world.audit = map[string]auditMark{}
	}
	e.world.audit[key] = mark
	return true
}

// RestoreCaseStart puts the sandbox back as KeepCaseStart kept it under
// key, on the runtime's conditions (no process of its own left, nothing
// changed outside /root and /tmp), and reports whether it did.
func (e *Live) RestoreCaseStart(ctx context.Context, key string) bool {
	k, ok := e.rt.(caseKeeper)
	return ok && k.RestoreKept(ctx, caseKey(key))
}

// auditMark says where the audit log of the learner's writes stands.
func (e *Live) auditMark() (auditMark, error) {
	dir := e.rt.AuditDir()
	if dir == "" {
		return auditMark{}, errors.New("no audit log")
	}
	fi, err := os.Stat(filepath.Join(dir, AuditLogFile))
	if errors.Is(err, os.ErrNotExist) {
		return auditMark{id: "none"}, nil
	}
	if err != nil {
		return auditMark{}, err
	}
	id := "?"
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		id = fmt.Sprintf("%d:%d", st.Dev, st.Ino)
	}
	return auditMark{id: id, size: fi.Size()}, nil
}

// LearnerWrites lists the learner's writes in the lab's namespaces since
// KeepCaseStart kept key, as the API server's audit log has them, each as
// "verb resource[/subresource] namespace/name"; an error when the log
// cannot say (it was rotated, or cannot be read).
func (e *Live) LearnerWrites(key string) ([]string, error) {
	var (
		mark auditMark
		ok   bool
	)
	if e.world != nil {
		e.world.mu.Lock()
		mark, ok = e.world.audit[key]
		e.world.mu.Unlock()
	}
	if !ok {
		return nil, errors.New("no start was kept")
	}
	if !e.Lab.HasCluster() {
		return nil, nil
	}
	now, err := e.auditMark()
	if err != nil {
		return nil, err
	}
	switch {
	case now.id == "none" && mark.id == "none":
		return nil, nil
	case mark.id != "none" && (now.id != mark.id || now.size < mark.size):
		return nil, errors.New("the API server's audit log was rotated since, so it no longer says all the case did")
	}
	f, err := os.Open(filepath.Join(e.rt.AuditDir(), AuditLogFile))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if mark.id != "none" {
		if _, err := f.Seek(mark.size, 0); err != nil {
			return nil, err
		}
	}
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for sc.Scan() {
		var ev struct {
			Verb      string `json:"verb"`
			ObjectRef struct {
				Resource    string `json:"resource"`
				Subresource string `json:"subresource"`
				Namespace   string `json:"namespace"`
				Name        string `json:"name"`
			} `json:"objectRef"`
		}
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			return nil, fmt.Errorf("reading the API server's audit log: %w", err)
		}
		r := ev.ObjectRef.Resource
		if ev.ObjectRef.Subresource != "" {
			r += "/" + ev.ObjectRef.Subresource
		}
		out = append(out, fmt.Sprintf("%s %s %s/%s", ev.Verb, r, ev.ObjectRef.Namespace, ev.ObjectRef.Name))
	}
	return out, sc.Err()
}
