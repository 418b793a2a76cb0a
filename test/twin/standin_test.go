package twin_test

import (
	"context"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// runStandIn does, until the test ends, what an operator that cannot be
// built here does with each new object of listKind (apiVersion's) in
// namespace ns: create the objects makeObjects returns for it, once. The
// real controllers take it from there (Deployments and StatefulSets into
// pods).
func runStandIn(t *testing.T, ns, apiVersion, listKind string, makeObjects func(*unstructured.Unstructured) ([]client.Object, error)) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		done := map[string]bool{}
		for ctx.Err() == nil {
			list := &unstructured.UnstructuredList{}
			list.SetAPIVersion(apiVersion)
			list.SetKind(listKind)
			if err := cluster.Client.List(ctx, list, client.InNamespace(ns)); err == nil {
				for i := range list.Items {
					o := &list.Items[i]
					if done[o.GetName()] {
						continue
					}
					done[o.GetName()] = true
					objs, err := makeObjects(o)
					if err != nil {
						t.Errorf("stand-in: %s %s: %v", o.GetKind(), o.GetName(), err)
					}
					for _, obj := range objs {
						if err := cluster.Client.Create(ctx, obj); err != nil && !apierrors.IsAlreadyExists(err) {
							t.Errorf("stand-in: creating %s: %v", obj.GetName(), err)
						}
					}
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
