package checks

import (
	"context"
	"errors"
	"sort"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/labctl/labctl/internal/msg"
	"github.com/labctl/labctl/lab"
)

// errNoCluster makes kube checks errors when the checker has no cluster
// credentials.
var errNoCluster = errors.New("no cluster credentials were given to the checker")

// getObject reads an object, normalized; a missing object, or a kind the
// cluster does not serve (a CRD not installed yet), gives nil and no error.
func getObject(ctx context.Context, env Env, apiVersion, kind, namespace, name string) (map[string]any, error) {
	if env.Kube == nil {
		return nil, errNoCluster
	}
	obj, err := env.Kube.Get(ctx, apiVersion, kind, namespace, name)
	if apierrors.IsNotFound(err) || meta.IsNoMatchError(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	m, _ := normalize(obj).(map[string]any)
	return m, nil
}

// checkKube reads one object with the grader's credentials, or the
// objects a selector selects (checkKubeSelected).
//
// pass: every set field holds. fail: the object (or its kind) is missing
// when required, present when it must be absent, a label differs, or a
// field does not meet its assertion. error: no credentials, the cluster
// unreachable or refusing the read.
func checkKube(ctx context.Context, env Env, kc *lab.KubeCheck) error {
	if kc.Wait {
		return waitKube(ctx, env, kc)
	}
	return checkKubeOnce(ctx, env, kc)
}

// waitEvery is how often a kube check with wait reads again.
const waitEvery = time.Second

// waitKube reads until kc holds (checkKube's pass), or an error, or until
// its deadline is near: it stops in time to fail with the last reading, so
// that a condition that never came is the learner's fail, not a timeout.
func waitKube(ctx context.Context, env Env, kc *lab.KubeCheck) error {
	for {
		err := checkKubeOnce(ctx, env, kc)
		var f *failure
		if err == nil || !errors.As(err, &f) {
			return err
		}
		deadline, ok := ctx.Deadline()
		if ok && time.Until(deadline) < 2*waitEvery {
			return err
		}
		t := time.NewTimer(waitEvery)
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
	}
}

func checkKubeOnce(ctx context.Context, env Env, kc *lab.KubeCheck) error {
	if kc.Selector != nil {
		return checkKubeSelected(ctx, env, kc)
	}
	want := kc.Exists == nil || *kc.Exists
	obj, err := getObject(ctx, env, kc.APIVersion, kc.Kind, kc.Namespace, kc.Name)
	if err != nil {
		return err
	}
	shown := describeObject(kc.APIVersion, kc.Kind, kc.Namespace, kc.Name)
	if obj == nil {
		if !want {
			return nil
		}
		return failf(msg.KubeExpectExist, shown)
	}
	if !want {
		return failf(msg.KubeExpectAbsent, shown)
	}
	if err := checkLabels(kc.Labels, obj, shown); err != nil {
		return err
	}
	if kc.Field != nil {
		return checkFieldAssert(ctx, env, kc.Field, []any{obj}, msg.T(msg.WhereIn, shown))
	}
	return nil
}

// checkLabels requires obj, named shown in messages, to carry want.
func checkLabels(want map[string]string, obj map[string]any, shown string) error {
	if len(want) == 0 {
		return nil
	}
	metadata, _ := obj["metadata"].(map[string]any)
	have, _ := metadata["labels"].(map[string]any)
	keys := make([]string, 0, len(want))
	for k := range want {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		got, ok := have[k]
		if !ok {
			return failf(msg.KubeLabelMissing, k, want[k], shown)
		}
		if got != want[k] {
			return failf(msg.KubeLabelWrong, k, want[k], shown, k, got)
		}
	}
	return nil
}
