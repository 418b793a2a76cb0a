package dynamo

import (
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/providers"
)

// Upstream's storage pipeline (controller/pkg/storage): its controller
// creates these objects before the DynamoGraphDeployment and waits for them;
// here they are plain manifests ordered for GitOps tools.
const (
	// DownloaderImage is upstream's default model-download image, where
	// upstream main publishes it since the project moved to the ai-runway
	// organisation (ai-runway/airunway#348, controller/pkg/storage). Its
	// tag is `latest` upstream too; pin it with a kustomize `images:` entry.
	DownloaderImage   = "ghcr.io/ai-runway/airunway/model-downloader:latest"
	downloadJobSuffix = "-model-download"
	downloadContainer = "model-download"
	downloadVolume    = "model-cache"
	labelJobType      = "airunway.ai/job-type"
	jobTypeDownload   = "model-download"

	// AnnotationSyncWave orders Argo CD syncs: a wave is applied only when
	// every object of the earlier waves is healthy (a Job when complete).
	AnnotationSyncWave = "argocd.argoproj.io/sync-wave"
	// storageWave precedes the DynamoGraphDeployment's default wave 0.
	storageWave = "-1"
	// AnnotationFluxForce makes Flux delete and recreate the Job when an
	// immutable field of it changes, instead of failing every reconcile.
	AnnotationFluxForce = "kustomize.toolkit.fluxcd.io/force"
)

// DownloadJobName is the deterministic name of the model-download Job,
// shortened with a hash past 63 characters (providers.DerivedName).
func DownloadJobName(mdName string) string {
	return providers.DerivedName(mdName, downloadJobSuffix)
}

// needsDownload is upstream's NeedsDownloadJob: Hugging Face source and a
// modelCache volume (managed or pre-existing) that is not read-only.
func needsDownload(md *hub.ModelDeployment) *hub.StorageVolume {
	v := modelCacheVolume(md)
	if md.Spec.Model.Source != hub.SourceHuggingFace || v == nil || hub.Bool(v.ReadOnly) {
		return nil
	}
	return v
}

// storageObjects renders the managed PVCs and the download Job.
//
// Waves: the Job runs in wave -1, before the DynamoGraphDeployment (wave 0),
// so Argo CD starts the model server only once the weights are in the cache,
// as upstream's controller does. Each managed PVC goes in the wave of its
// first consumer (the Job's PVC in -1, the others in 0): Argo CD leaves a
// wave only when its PVCs are Bound, and a WaitForFirstConsumer PVC binds
// only once a pod uses it, so an earlier PVC wave would never finish
// (argoproj/argo-cd#12840).
func storageObjects(md *hub.ModelDeployment, engine string, placed *providers.PoolPlacement) ([]providers.Object, error) {
	if md.Spec.Model.Storage == nil {
		return nil, nil
	}
	dl := needsDownload(md)
	var out []providers.Object
	for i := range md.Spec.Model.Storage.Volumes {
		v := &md.Spec.Model.Storage.Volumes[i]
		if !v.IsManaged() {
			continue
		}
		var extra map[string]string
		if v == dl {
			extra = map[string]string{AnnotationSyncWave: storageWave}
		}
		obj, err := providers.FromTyped(managedPVC(md, engine, v, extra))
		if err != nil {
			return nil, err
		}
		out = append(out, obj)
	}
	if dl != nil {
		obj, err := providers.FromTyped(downloadJob(md, engine, dl, placed))
		if err != nil {
			return nil, err
		}
		out = append(out, obj)
	}
	return out, nil
}

func managedPVC(md *hub.ModelDeployment, engine string, v *hub.StorageVolume, annotations map[string]string) *corev1.PersistentVolumeClaim {
	mode := v.AccessMode
	if mode == "" {
		mode = hub.DefaultAccessMode
	}
	return &corev1.PersistentVolumeClaim{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "PersistentVolumeClaim"},
		ObjectMeta: metav1.ObjectMeta{
			Name:        v.ResolvedClaimName(md.Name),
			Namespace:   md.Namespace,
			Labels:      providers.BaseLabels(md, engine),
			Annotations: providers.GeneratedAnnotations(md, annotations),
		},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.PersistentVolumeAccessMode(mode)},
			Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{
				corev1.ResourceStorage: hub.MustParseQuantity(v.SizeString()),
			}},
			// nil: the cluster's default class; "": no class (static PVs).
			StorageClassName: v.StorageClassName,
		},
	}
}

// The Job is a CPU-only helper: it runs on the cluster's CPU pool when one
// is declared (placed), like the other helper pods.
func downloadJob(md *hub.ModelDeployment, engine string, v *hub.StorageVolume, placed *providers.PoolPlacement) *batchv1.Job {
	backoffLimit, one := int32(6), int32(1)
	c := corev1.Container{
		Name:  downloadContainer,
		Image: DownloaderImage,
		// The token Secret is the Job's envFrom, so the kubelet would
		// expand a `$(HF_TOKEN)` in the model id or the mount path.
		Args: []string{"download", providers.EscapeExpansion(md.Spec.Model.ID)},
		Env:  []corev1.EnvVar{{Name: envHFHome, Value: providers.EscapeExpansion(v.MountPath)}},
		Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceMemory: resource.MustParse("2Gi")},
			Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("16Gi")},
		},
		VolumeMounts: []corev1.VolumeMount{{Name: downloadVolume, MountPath: v.MountPath}},
	}
	if md.Spec.Secrets != nil && md.Spec.Secrets.HuggingFaceToken != "" {
		c.EnvFrom = []corev1.EnvFromSource{{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: md.Spec.Secrets.HuggingFaceToken}}}}
	}
	labels := providers.BaseLabels(md, engine)
	labels[labelJobType] = jobTypeDownload
	return &batchv1.Job{
		TypeMeta: metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
		ObjectMeta: metav1.ObjectMeta{
			Name:      DownloadJobName(md.Name),
			Namespace: md.Namespace,
			Labels:    labels,
			Annotations: providers.GeneratedAnnotations(md, map[string]string{
				AnnotationSyncWave:  storageWave,
				AnnotationFluxForce: "enabled",
			}),
		},
		Spec: batchv1.JobSpec{
			BackoffLimit: &backoffLimit,
			Completions:  &one,
			Parallelism:  &one,
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever,
				Containers:    []corev1.Container{c},
				NodeSelector:  placed.NodeSelector,
				Tolerations:   placed.Tolerations,
				Volumes: []corev1.Volume{{Name: downloadVolume, VolumeSource: corev1.VolumeSource{
					PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: v.ResolvedClaimName(md.Name)},
				}}},
			}},
		},
	}
}
