package providers

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/airunway-render/airunway-render/api/hub"
)

// HFTokenEnv is the variable and Secret key of the Hugging Face token.
const HFTokenEnv = "HF_TOKEN"

// ContainerEnv returns the user's `spec.env` followed by HF_TOKEN from the
// Secret in `spec.secrets.huggingFaceToken`. With that Secret set, a
// plaintext HF_TOKEN from the user is dropped so the token comes only from
// the Secret; an entry with both `value` and `valueFrom` keeps `valueFrom`
// (the API server rejects both).
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
		e = *e.DeepCopy()
		if e.ValueFrom != nil {
			e.Value = ""
		}
		env = append(env, e)
	}
	if secret != "" {
		env = append(env, corev1.EnvVar{Name: HFTokenEnv, ValueFrom: &corev1.EnvVarSource{
			SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: secret}, Key: HFTokenEnv},
		}})
	}
	return env
}
