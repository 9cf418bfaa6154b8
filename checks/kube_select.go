package checks

import (
	"context"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/labctl/labctl/internal/msg"
	"github.com/labctl/labctl/lab"
)

// ObjectLister lists the objects of a kind whose labels match a selector
// (kubectl's -l syntax; "" matches every object), in namespace, or in every
// namespace when it is empty. A kind the cluster does not serve gives an
// error satisfying meta.IsNoMatchError.
type ObjectLister interface {
	List(ctx context.Context, apiVersion, kind, namespace, selector string) ([]map[string]any, error)
}

// maxSelected bounds how many objects one selector check reads: a lab's
// checks select the handful of objects a learner made, and a selector that
// matches more is the author's to narrow.
const maxSelected = 1000

// checkKubeSelected lists the objects kc's selector selects with the
// grader's credentials and judges them together.
//
// pass: their number is in kc.Count (default at least one), every one of
// them has kc.Labels, and the values kc.Field's path selects in all of them
// together meet its assertion. fail: otherwise; a kind the cluster does not
// serve selects nothing. error: no credentials, the cluster unreachable or
// refusing the list, more than maxSelected objects.
func checkKubeSelected(ctx context.Context, env Env, kc *lab.KubeCheck) error {
	lister, ok := env.Kube.(ObjectLister)
	if env.Kube == nil || !ok {
		return errNoCluster
	}
	objs, err := lister.List(ctx, kc.APIVersion, kc.Kind, kc.Namespace, *kc.Selector)
	if meta.IsNoMatchError(err) || apierrors.IsNotFound(err) {
		objs, err = nil, nil
	}
	if err != nil {
		return err
	}
	shown := describeSelection(kc)
	count := kc.Count
	if count == nil {
		one := 1
		count = &lab.Range{Min: &one}
	}
	if !inRange(len(objs), count) {
		return failf(msg.KubeCount, shown, rangeText(count), len(objs), namesOf(objs))
	}
	for _, obj := range objs {
		if err := checkLabels(kc.Labels, obj, describeFound(kc, obj)); err != nil {
			return err
		}
	}
	if kc.MatchesFile != "" {
		if err := checkKubeMatchesFile(env, kc, objs); err != nil {
			return err
		}
	}
	if kc.Field == nil {
		return nil
	}
	p, err := lab.ParsePath(kc.Field.Path)
	if err != nil {
		return err
	}
	// The path's values in all of the objects together meet the
	// assertion; a failure names the object it was found in.
	found := false
	for _, obj := range objs {
		sel := selectValues(p, obj)
		if len(sel) == 0 {
			continue
		}
		found = true
		if err := checkAssert(ctx, env, &kc.Field.Assert, kc.Field.Path, sel, msg.T(msg.WhereIn, describeFound(kc, obj))); err != nil {
			return err
		}
	}
	if !found {
		return checkAssert(ctx, env, &kc.Field.Assert, kc.Field.Path, nil, msg.T(msg.WhereIn, shown))
	}
	return nil
}

// describeSelection names a selector's objects for messages:
// `apps/v1 Deployment in gitops-lab matching "app=web"`.
func describeSelection(kc *lab.KubeCheck) msg.Text {
	kind := kc.APIVersion + " " + kc.Kind
	switch {
	case *kc.Selector == "" && kc.Namespace == "":
		return msg.T(msg.KubeEvery, kind)
	case *kc.Selector == "":
		return msg.T(msg.KubeEveryIn, kind, kc.Namespace)
	case kc.Namespace == "":
		return msg.T(msg.KubeMatching, kind, *kc.Selector)
	}
	return msg.T(msg.KubeMatchingIn, kind, kc.Namespace, *kc.Selector)
}

// describeFound names one selected object as describeObject does.
func describeFound(kc *lab.KubeCheck, obj map[string]any) string {
	md, _ := obj["metadata"].(map[string]any)
	name, _ := md["name"].(string)
	ns, _ := md["namespace"].(string)
	return describeObject(kc.APIVersion, kc.Kind, ns, name)
}

// maxNamesShown bounds the object names a count failure lists.
const maxNamesShown = 5

// namesOf lists the selected objects' names for a count failure:
// " (web, api)", "" for none, the first few and "…" for many.
func namesOf(objs []map[string]any) string {
	if len(objs) == 0 {
		return ""
	}
	var names []string
	for i, obj := range objs {
		if i == maxNamesShown {
			names = append(names, "…")
			break
		}
		md, _ := obj["metadata"].(map[string]any)
		name, _ := md["name"].(string)
		if ns, _ := md["namespace"].(string); ns != "" {
			name = ns + "/" + name
		}
		names = append(names, name)
	}
	return fmt.Sprintf(" (%s)", strings.Join(names, ", "))
}
