package dynamo

import (
	"testing"

	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/airunway-render/airunway-render/api/hub"
)

// The storage pipeline upstream's controller runs before creating the
// DynamoGraphDeployment (controller/pkg/storage/pvc.go and download.go in
// kaito-project/airunway), rendered as manifests.

func pvc(t *testing.T, r *rendered, name string) *corev1.PersistentVolumeClaim {
	t.Helper()
	var p corev1.PersistentVolumeClaim
	require.NoError(t, runtime.DefaultUnstructuredConverter.FromUnstructured(r.other(t, "PersistentVolumeClaim", name), &p))
	return &p
}

func job(t *testing.T, r *rendered, name string) *batchv1.Job {
	t.Helper()
	var j batchv1.Job
	require.NoError(t, runtime.DefaultUnstructuredConverter.FromUnstructured(r.other(t, "Job", name), &j))
	return &j
}

func TestManagedPVC(t *testing.T) {
	cases := []struct {
		name, volume string
		mode         corev1.PersistentVolumeAccessMode
		class        *string
		classKey     bool
	}{
		{name: "defaults: ReadWriteMany, cluster default class (no storageClassName key)", volume: "{name: cache, purpose: modelCache, size: 100Gi}", mode: corev1.ReadWriteMany},
		{name: "explicit access mode and named class", volume: "{name: cache, purpose: modelCache, size: 100Gi, accessMode: ReadWriteOnce, storageClassName: fast}", mode: corev1.ReadWriteOnce, class: ptr("fast"), classKey: true},
		{name: "empty class is rendered as the empty string (no dynamic provisioning)", volume: "{name: cache, purpose: modelCache, size: 100Gi, storageClassName: \"\"}", mode: corev1.ReadWriteMany, class: ptr(""), classKey: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := renderSpec(t, base+"model: {id: m, storage: {volumes: ["+tc.volume+"]}}")
			p := pvc(t, r, "test-model-cache")
			require.Equal(t, "default", p.Namespace)
			require.Empty(t, p.OwnerReferences)
			require.Equal(t, "airunway", p.Labels["airunway.ai/managed-by"])
			require.Equal(t, "test-model", p.Labels["airunway.ai/model-deployment"])
			require.Equal(t, "test-model", p.Annotations[hub.AnnotationGeneratedFrom])
			require.Equal(t, []corev1.PersistentVolumeAccessMode{tc.mode}, p.Spec.AccessModes)
			require.Equal(t, resource.MustParse("100Gi"), p.Spec.Resources.Requests[corev1.ResourceStorage])
			require.Equal(t, tc.class, p.Spec.StorageClassName)
			_, has := dig(r.other(t, "PersistentVolumeClaim", "test-model-cache"), "spec").(map[string]any)["storageClassName"]
			require.Equal(t, tc.classKey, has)
			require.Equal(t, []pvcRef{{Name: "test-model-cache"}}, r.dgd.Spec.PVCs, "the graph references the PVC, never creates it")
		})
	}
}

func ptr[T any](v T) *T { return &v }

func TestDownloadJob(t *testing.T) {
	r := renderSpec(t, base+"secrets: {huggingFaceToken: hf-token}\nmodel: {id: Qwen/Qwen3-0.6B, storage: {volumes: [{name: cache, purpose: modelCache, size: 100Gi, mountPath: /models}]}}")
	j := job(t, r, "test-model-model-download")
	require.Equal(t, "default", j.Namespace)
	require.Empty(t, j.OwnerReferences)
	require.Equal(t, "model-download", j.Labels["airunway.ai/job-type"])
	require.Equal(t, "test-model", j.Labels["airunway.ai/model-deployment"])
	require.Equal(t, int32(6), *j.Spec.BackoffLimit)
	require.Equal(t, int32(1), *j.Spec.Completions)
	require.Equal(t, int32(1), *j.Spec.Parallelism)
	spec := j.Spec.Template.Spec
	require.Equal(t, corev1.RestartPolicyNever, spec.RestartPolicy)
	require.Len(t, spec.Containers, 1)
	c := spec.Containers[0]
	require.Equal(t, "model-download", c.Name)
	require.Equal(t, "ghcr.io/ai-runway/airunway/model-downloader:latest", c.Image)
	require.Equal(t, []string{"download", "Qwen/Qwen3-0.6B"}, c.Args)
	require.Equal(t, []corev1.EnvVar{{Name: "HF_HOME", Value: "/models"}}, c.Env)
	require.Equal(t, "hf-token", c.EnvFrom[0].SecretRef.Name)
	require.Equal(t, "500m", c.Resources.Requests.Cpu().String())
	require.Equal(t, "2Gi", c.Resources.Requests.Memory().String())
	require.Equal(t, "16Gi", c.Resources.Limits.Memory().String())
	require.True(t, c.Resources.Limits.Cpu().IsZero())
	require.Equal(t, []corev1.VolumeMount{{Name: "model-cache", MountPath: "/models"}}, c.VolumeMounts)
	require.Equal(t, "test-model-cache", spec.Volumes[0].PersistentVolumeClaim.ClaimName)
	require.Equal(t, "enabled", j.Annotations[AnnotationFluxForce], "Flux recreates the Job when its immutable template changes")
}

func TestStorageObjects(t *testing.T) {
	cases := []struct {
		name, spec string
		pvcs       map[string]string // PVC name -> sync wave ("" = none)
		job        bool
	}{
		{name: "managed modelCache: PVC and Job in wave -1", spec: "model: {id: m, storage: {volumes: [{name: cache, purpose: modelCache, size: 10Gi}]}}",
			pvcs: map[string]string{"test-model-cache": "-1"}, job: true},
		{name: "pre-existing modelCache: Job only, mounting that claim", spec: "model: {id: m, storage: {volumes: [{name: cache, purpose: modelCache, claimName: shared}]}}", job: true},
		{name: "read-only modelCache: no download", spec: "model: {id: m, storage: {volumes: [{name: cache, purpose: modelCache, claimName: shared, readOnly: true}]}}"},
		{name: "custom source: no download, the PVC joins the graph's wave", spec: "model: {id: m, source: custom, storage: {volumes: [{name: cache, purpose: modelCache, size: 10Gi}]}}",
			pvcs: map[string]string{"test-model-cache": ""}},
		{name: "a PVC the Job does not mount is in the graph's wave", spec: "model: {id: m, storage: {volumes: [{name: cache, purpose: modelCache, size: 10Gi}, {name: comp, purpose: compilationCache, size: 5Gi}, {name: data, claimName: data-pvc, mountPath: /data}]}}",
			pvcs: map[string]string{"test-model-cache": "-1", "test-model-comp": ""}, job: true},
		{name: "no storage: nothing", spec: "model: {id: m}"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := renderSpec(t, base+tc.spec)
			got := map[string]string{}
			jobs := 0
			for _, o := range r.others {
				name := dig(o, "metadata", "name").(string)
				wave, _ := dig(o, "metadata", "annotations", AnnotationSyncWave).(string)
				switch o["kind"] {
				case "PersistentVolumeClaim":
					got[name] = wave
				case "Job":
					jobs++
					require.Equal(t, "test-model-model-download", name)
					require.Equal(t, "-1", wave, "the Job runs before the DynamoGraphDeployment")
				default:
					t.Fatalf("unexpected %v", o["kind"])
				}
			}
			if tc.pvcs == nil {
				tc.pvcs = map[string]string{}
			}
			require.Equal(t, tc.pvcs, got)
			require.Equal(t, tc.job, jobs == 1)
			require.Nil(t, dig(r.obj, "metadata", "annotations", AnnotationSyncWave), "the graph stays in the default wave 0")
		})
	}
	t.Run("the Job mounts the pre-existing claim", func(t *testing.T) {
		r := renderSpec(t, base+"model: {id: m, storage: {volumes: [{name: cache, purpose: modelCache, claimName: shared}]}}")
		require.Equal(t, "shared", job(t, r, "test-model-model-download").Spec.Template.Spec.Volumes[0].PersistentVolumeClaim.ClaimName)
	})
}
