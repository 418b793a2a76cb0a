package providers

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/diag"
)

// HFTokenEnv is the variable and Secret key of the Hugging Face token.
const HFTokenEnv = "HF_TOKEN"

// ContainerEnv returns the user's `spec.env` (UserEnvVar: values literal)
// followed by HF_TOKEN from the Secret in `spec.secrets.huggingFaceToken`.
// With that Secret set, a plaintext HF_TOKEN from the user is dropped so
// the token comes only from the Secret.
func ContainerEnv(md *hub.ModelDeployment) []corev1.EnvVar {
	secret := ""
	if md.Spec.Secrets != nil {
		secret = md.Spec.Secrets.HuggingFaceToken
	}
	var env []corev1.EnvVar
	for _, e := range md.Spec.Env {
		if secret != "" && e.Name == HFTokenEnv {
			continue
		}
		env = append(env, UserEnvVar(e))
	}
	if secret != "" {
		env = append(env, corev1.EnvVar{Name: HFTokenEnv, ValueFrom: &corev1.EnvVarSource{
			SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: secret}, Key: HFTokenEnv},
		}})
	}
	return env
}

// WarnLiteralEnv warns about each `spec.env` value that Kubernetes would
// have rewritten (`$(VAR)` or `$$`) and the renderer passes on as written;
// a provider that renders `spec.env` calls it once.
func WarnLiteralEnv(md *hub.ModelDeployment, l *diag.List) {
	for i, e := range md.Spec.Env {
		if e.ValueFrom == nil && holdsExpansion(e.Value) {
			l.Warnf(diag.IgnoredField, fmt.Sprintf("spec.env[%d].value", i), "%q reaches the container as written: `spec.env` values are literal, so `$(VAR)` is not replaced by another variable's value and `$$` stays `$$`; to pass a Secret's or ConfigMap's value, use `valueFrom`", e.Value)
		}
	}
}
