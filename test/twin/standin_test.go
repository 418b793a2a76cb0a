package twin_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// standIn is what an operator that cannot be built here does, as far as
// the twin needs it: the objects it makes of each new custom resource,
// once, and the status it writes, from the objects it made, on every pass.
type standIn struct {
	apiVersion, listKind string
	objects              func(*unstructured.Unstructured) ([]client.Object, error)
	// status returns the resource's status as the operator would write it
	// now; nil leaves the status alone.
	status func(context.Context, *unstructured.Unstructured) (map[string]any, error)
}

// runStandIn runs s over the custom resources in namespace ns until the
// test ends. The real controllers take the objects from there
// (Deployments and StatefulSets into pods, KWOK making them Ready).
func runStandIn(t *testing.T, ns string, s standIn) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		done := map[string]bool{}
		for ctx.Err() == nil {
			list := &unstructured.UnstructuredList{}
			list.SetAPIVersion(s.apiVersion)
			list.SetKind(s.listKind)
			if err := cluster.Client.List(ctx, list, client.InNamespace(ns)); err == nil {
				for i := range list.Items {
					o := &list.Items[i]
					if !done[o.GetName()] {
						done[o.GetName()] = true
						s.create(ctx, t, o)
					}
					s.writeStatus(ctx, t, o)
				}
			}
			select {
			case <-ctx.Done():
			case <-time.After(200 * time.Millisecond):
			}
		}
	}()
	t.Cleanup(func() { cancel(); wg.Wait() })
}

func (s standIn) create(ctx context.Context, t *testing.T, o *unstructured.Unstructured) {
	objs, err := s.objects(o)
	if err != nil {
		t.Errorf("stand-in: %s %s: %v", o.GetKind(), o.GetName(), err)
	}
	for _, obj := range objs {
		if err := cluster.Client.Create(ctx, obj); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Errorf("stand-in: creating %s: %v", obj.GetName(), err)
		}
	}
}

// writeStatus writes the status when it differs from the object's, as an
// operator that compares before it updates.
func (s standIn) writeStatus(ctx context.Context, t *testing.T, o *unstructured.Unstructured) {
	if s.status == nil {
		return
	}
	status, err := s.status(ctx, o)
	if err != nil || status == nil {
		if err != nil && ctx.Err() == nil {
			t.Logf("stand-in: status of %s %s: %v", o.GetKind(), o.GetName(), err)
		}
		return
	}
	if old, _, _ := unstructured.NestedMap(o.Object, "status"); equality.Semantic.DeepEqual(old, status) {
		return
	}
	o.Object["status"] = status
	// A conflict or a vanished object is the next pass's business.
	if err := cluster.Client.Status().Update(ctx, o); err != nil && !apierrors.IsConflict(err) && !apierrors.IsNotFound(err) && ctx.Err() == nil {
		t.Errorf("stand-in: writing the status of %s %s: %v", o.GetKind(), o.GetName(), err)
	}
}

// withConditions returns the object's status conditions with conds set as
// meta.SetStatusCondition sets them (the transition time moves only when
// the status flips), in the unstructured form a status carries.
func withConditions(o *unstructured.Unstructured, conds ...metav1.Condition) ([]any, error) {
	var current []metav1.Condition
	if raw, found, _ := unstructured.NestedSlice(o.Object, "status", "conditions"); found {
		for _, r := range raw {
			var c metav1.Condition
			m, _ := r.(map[string]any)
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, &c); err != nil {
				return nil, err
			}
			current = append(current, c)
		}
	}
	for _, c := range conds {
		c.ObservedGeneration = o.GetGeneration()
		meta.SetStatusCondition(&current, c)
	}
	out := make([]any, 0, len(current))
	for i := range current {
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&current[i])
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, nil
}
