package main

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	"sigs.k8s.io/yaml"
)

func isAlreadyExists(err error) bool { return apierrors.IsAlreadyExists(err) }

// writeStatus writes every status that res changes, and clears the
// address of an Ingress this controller no longer serves.
func (c *controller) writeStatus(ctx context.Context, w *world, res *result) {
	addr := []networkingv1.IngressLoadBalancerIngress{{IP: w.nodeIP}}
	for _, ing := range w.ingresses {
		served := res.ingresses[key(ing.Namespace, ing.Name)]
		has := equality.Semantic.DeepEqual(ing.Status.LoadBalancer.Ingress, addr)
		if served == has || !served && len(ing.Status.LoadBalancer.Ingress) == 0 || !served && !has {
			continue
		}
		cp := ing.DeepCopy()
		cp.Status.LoadBalancer.Ingress = nil
		if served {
			cp.Status.LoadBalancer.Ingress = addr
		}
		_, err := c.cs.NetworkingV1().Ingresses(cp.Namespace).UpdateStatus(ctx, cp, metav1.UpdateOptions{})
		report("Ingress", key(cp.Namespace, cp.Name), err)
	}
	for _, gc := range w.gatewayClasses {
		conds, ok := res.gatewayClasses[gc.Name]
		if !ok {
			continue
		}
		conds = keepTimes(gc.Status.Conditions, conds)
		if equality.Semantic.DeepEqual(gc.Status.Conditions, conds) {
			continue
		}
		cp := gc.DeepCopy()
		cp.Status.Conditions = conds
		_, err := c.gw.GatewayV1().GatewayClasses().UpdateStatus(ctx, cp, metav1.UpdateOptions{})
		report("GatewayClass", cp.Name, err)
	}
	for _, gw := range w.gateways {
		st, ok := res.gateways[key(gw.Namespace, gw.Name)]
		if !ok {
			continue
		}
		st.Conditions = keepTimes(gw.Status.Conditions, st.Conditions)
		for i := range st.Listeners {
			for _, old := range gw.Status.Listeners {
				if old.Name == st.Listeners[i].Name {
					st.Listeners[i].Conditions = keepTimes(old.Conditions, st.Listeners[i].Conditions)
				}
			}
		}
		if equality.Semantic.DeepEqual(gw.Status, st) {
			continue
		}
		cp := gw.DeepCopy()
		cp.Status = st
		_, err := c.gw.GatewayV1().Gateways(cp.Namespace).UpdateStatus(ctx, cp, metav1.UpdateOptions{})
		report("Gateway", key(cp.Namespace, cp.Name), err)
	}
	for _, hr := range w.routes {
		mine := res.routeParents[key(hr.Namespace, hr.Name)]
		// Other controllers' entries stay; this one's are replaced.
		var parents []gatewayv1.RouteParentStatus
		for _, p := range hr.Status.Parents {
			if string(p.ControllerName) != c.o.controller {
				parents = append(parents, p)
			}
		}
		for _, p := range mine {
			for _, old := range hr.Status.Parents {
				if string(old.ControllerName) == c.o.controller && equality.Semantic.DeepEqual(old.ParentRef, p.ParentRef) {
					p.Conditions = keepTimes(old.Conditions, p.Conditions)
				}
			}
			parents = append(parents, p)
		}
		if equality.Semantic.DeepEqual(hr.Status.Parents, parents) || len(hr.Status.Parents) == 0 && len(parents) == 0 {
			continue
		}
		cp := hr.DeepCopy()
		cp.Status.Parents = parents
		_, err := c.gw.GatewayV1().HTTPRoutes(cp.Namespace).UpdateStatus(ctx, cp, metav1.UpdateOptions{})
		report("HTTPRoute", key(cp.Namespace, cp.Name), err)
	}
}

// keepTimes gives each new condition whose type and status are unchanged
// its old transition time, so that an unchanged status compares equal.
func keepTimes(old, cur []metav1.Condition) []metav1.Condition {
	out := slices.Clone(cur)
	for i := range out {
		for _, o := range old {
			if o.Type == out[i].Type && o.Status == out[i].Status {
				out[i].LastTransitionTime = o.LastTransitionTime
			}
		}
	}
	return out
}

func report(kind, name string, err error) {
	if err != nil && !apierrors.IsConflict(err) && !apierrors.IsNotFound(err) {
		log.Printf("writing the status of %s %s: %v", kind, name, err)
	}
}

var crdResource = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// installCRDs applies every CRD file in dir (server-side, so a restart
// changes nothing) and waits until the API server serves them.
func installCRDs(ctx context.Context, dyn dynamic.Interface, dir string) error {
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil || len(files) == 0 {
		return fmt.Errorf("no Gateway API CRDs in %s", dir)
	}
	var names []string
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		var obj map[string]any
		if err := yaml.Unmarshal(data, &obj); err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
		u := &unstructured.Unstructured{Object: obj}
		if u.GetKind() != "CustomResourceDefinition" {
			continue
		}
		_, err = dyn.Resource(crdResource).Apply(ctx, u.GetName(), u, metav1.ApplyOptions{FieldManager: "labctl-ingress", Force: true})
		if err != nil {
			return fmt.Errorf("installing CRD %s: %w", u.GetName(), err)
		}
		names = append(names, u.GetName())
	}
	deadline := time.Now().Add(2 * time.Minute)
	for _, name := range names {
		for {
			u, err := dyn.Resource(crdResource).Get(ctx, name, metav1.GetOptions{})
			if err == nil && established(u) {
				break
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("CRD %s was not established in 2 minutes (%v)", name, err)
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(250 * time.Millisecond):
			}
		}
	}
	log.Printf("Gateway API CRDs installed: %s", strings.Join(names, ", "))
	return nil
}

func established(u *unstructured.Unstructured) bool {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == "Established" && m["status"] == "True" {
			return true
		}
	}
	return false
}
