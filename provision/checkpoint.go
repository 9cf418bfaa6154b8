package provision

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// A checkpoint is the lab at the start of a step, kept so that labctl test
// can go back there after each of the step's mistakes and alternatives
// without replaying every solve before it: the sandbox as the runtime keeps
// it (KeepSandbox, which also notes the audit log of the learner's writes)
// and a record of the lab's namespaces. Going back restores the sandbox
// only when the namespaces are as recorded, object for object, and the
// learner's identity wrote nothing since, which holds after a mistake that
// changed only files; after any other the reset runs in full.

// Checkpoint keeps the lab as it is now, at the start of step, for
// RestoreCheckpoint. On a runtime that cannot keep its sandbox, or when the
// namespaces cannot be read, it forgets step's checkpoint instead.
func (e *Live) Checkpoint(ctx context.Context, step string) {
	k := e.feat.Sandbox
	if k == nil {
		return
	}
	delete(e.checkpoints, step)
	if e.misses[step] >= checkpointMisses {
		return
	}
	rec, err := settled(ctx, func(ctx context.Context) ([sha256.Size]byte, error) { return recordOf(e, ctx) }, settlePause, checkpointLooks)
	if err != nil {
		return
	}
	k.KeepSandbox(ctx, step)
	if e.checkpoints == nil {
		e.checkpoints = map[string][sha256.Size]byte{}
	}
	e.checkpoints[step] = rec
}

// checkpointMisses is how many times in a row going back to a step's start
// may fail before Checkpoint stops keeping it: in a lab whose every answer
// of a step changes the cluster (or makes its controllers change it),
// keeping the start again after each full reset only costs time.
const checkpointMisses = 2

// A step's start is kept once the lab's namespaces have settled: right
// after a solve's apply, the controllers are still making what it asked for
// (a Deployment's ReplicaSet and Pods), and a record taken then would never
// match again. Looks are settlePause apart, checkpointLooks at most.
const (
	settlePause     = time.Second
	checkpointLooks = 6
)

// settled returns record's sum once two looks in a row, pause apart, agree;
// an error when they never do in looks looks, or record fails.
func settled(ctx context.Context, record func(context.Context) ([sha256.Size]byte, error), pause time.Duration, looks int) ([sha256.Size]byte, error) {
	last, err := record(ctx)
	if err != nil {
		return last, err
	}
	for range looks - 1 {
		if err := sleepCtx(ctx, pause); err != nil {
			return last, err
		}
		now, err := record(ctx)
		if err != nil || now == last {
			return now, err
		}
		last = now
	}
	return last, fmt.Errorf("the lab's namespaces did not settle in %d looks", looks)
}

// RestoreCheckpoint puts the lab back at the start of step as Checkpoint
// kept it, and reports whether it did: only when every object of the lab's
// namespaces, and the namespaces, are still the versions recorded then, and
// the sandbox can be restored in place (RestoreSandbox's conditions). When
// it did not, nothing was changed and a full reset must follow. The
// runtime looks at the learner's audit log before the namespaces are
// recorded: it costs no request.
func (e *Live) RestoreCheckpoint(ctx context.Context, step string) bool {
	k := e.feat.Sandbox
	if k == nil {
		return false
	}
	kept, ok := e.checkpoints[step]
	if !ok {
		return false
	}
	back := k.RestoreKeptSandbox(ctx, step, func() bool {
		now, err := recordOf(e, ctx)
		return err == nil && now == kept
	})
	if e.misses == nil {
		e.misses = map[string]int{}
	}
	if back {
		e.misses[step] = 0
	} else {
		e.misses[step]++
	}
	return back
}

// recordOf is namespacesRecord, which unit tests replace.
var recordOf = (*Live).namespacesRecord

// namespacesRecord sums up the lab's namespaces: each namespace's and each
// object's identity and version (version), for every type the cluster can
// list and delete (resourceTypes) but events. Any object made, removed or
// made anew, and any change of its spec or metadata (but a Service's
// endpoints), changes it.
func (e *Live) namespacesRecord(ctx context.Context) ([sha256.Size]byte, error) {
	if !e.Lab.HasCluster() {
		// No namespaces: the sandbox alone says whether a step's start
		// still holds.
		return sha256.Sum256(nil), nil
	}
	admin, err := e.adminConfig(ctx)
	if err != nil {
		return [sha256.Size]byte{}, err
	}
	r, err := newNSReset(admin, e.Lab, e.rt.Name())
	if err != nil {
		return [sha256.Size]byte{}, err
	}
	return r.record(ctx)
}

// version is what of o, of type gvr, a change must change: for a type
// whose spec changes Kubernetes counts in the generation, the generation and
// o's labels, annotations, owners, finalizers and deletion; for Endpoints
// and EndpointSlices, nothing but that o is there; for any other, its
// resource version. What a status says is the controllers' and kubelets'
// to change (a Deployment's ready replicas, a Pod waiting for its image),
// and changes with time alone; so do the endpoints of a Service, which its
// controllers derive from its Pods' statuses. A write of the learner's
// own, to a status or endpoints too, shows in the audit log, which the
// runtime's kept sandbox checks (KeepSandbox).
func version(gvr schema.GroupVersionResource, o *metav1.PartialObjectMetadata) string {
	switch {
	case gvr.Resource == "endpoints" || gvr.Resource == "endpointslices":
		return "derived"
	case o.Generation == 0:
		return "rv " + o.ResourceVersion
	}
	b, _ := json.Marshal(struct {
		G int64
		L map[string]string
		A map[string]string
		O []metav1.OwnerReference
		F []string
		D *metav1.Time
	}{o.Generation, o.Labels, o.Annotations, o.OwnerReferences, o.Finalizers, o.DeletionTimestamp})
	return "gen " + string(b)
}

// record sums up r's namespaces as namespacesRecord says.
func (r *nsReset) record(ctx context.Context) ([sha256.Size]byte, error) {
	gvrs, err := r.resourceTypes(ctx)
	if err != nil {
		return [sha256.Size]byte{}, err
	}
	if gvrs == nil {
		return [sha256.Size]byte{}, errors.New("part of the cluster's discovery failed")
	}
	// Events are Kubernetes' account of what happened, written by its
	// components as things happen (a Pod's image pull retried), never
	// state a lab's scripts make.
	kept := slices.DeleteFunc(slices.Clone(gvrs), func(gvr schema.GroupVersionResource) bool { return gvr.Resource == "events" })
	var (
		mu    sync.Mutex
		lines []string
	)
	for _, ns := range r.lab.Cluster.Namespaces {
		n, err := r.cs.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			lines = append(lines, "namespace "+ns+" absent")
			continue
		case err != nil:
			return [sha256.Size]byte{}, err
		}
		lines = append(lines, fmt.Sprintf("namespace %s %s %s", ns, n.UID, n.ResourceVersion))
		err = r.listEach(ctx, ns, kept, func(_ context.Context, gvr schema.GroupVersionResource, items []metav1.PartialObjectMetadata) error {
			mu.Lock()
			defer mu.Unlock()
			for _, o := range items {
				lines = append(lines, fmt.Sprintf("%s %s %s %s %s", gvr, ns, o.Name, o.UID, version(gvr, &o)))
			}
			return nil
		})
		if err != nil {
			return [sha256.Size]byte{}, err
		}
	}
	slices.Sort(lines)
	return sha256.Sum256([]byte(strings.Join(lines, "\n"))), nil
}
