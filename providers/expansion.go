package providers

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// The kubelet rewrites a container's `command`, `args` and every `env[].value`
// before the container starts (Kubernetes' third_party/forked/golang/expansion,
// documented on the Container and EnvVar API fields):
//
//	$(NAME)  becomes the value of the variable NAME when the container's
//	         environment defines it, and stays as written when it does not;
//	$$       becomes $;
//	any other $ stays as written.
//
// The Hugging Face token sits in the model server's environment, so a user
// string placed there unescaped (`servedName: "$(HF_TOKEN)"`) would reach
// the container with the Secret's value in it, for vLLM to show every
// client on /v1/models.

// EscapeExpansion returns s as a container command, arg or env value that
// the kubelet hands to the container exactly as s: every '$' is doubled, so
// that every `$$` the kubelet reads is one of ours and no `$(` is left to
// expand. Apply it where a string from the ModelDeployment is placed in a
// container, never to a whole rendered object: the renderer's own values
// may use `$(VAR)` on purpose (the endpoint picker's `$(NAMESPACE)`).
// Doubling works character by character, so escaping the pieces of a value
// and escaping the joined value give the same result.
func EscapeExpansion(s string) string {
	return strings.ReplaceAll(s, "$", "$$")
}

// EscapeExpansionAll applies EscapeExpansion to each token, into a new slice.
func EscapeExpansionAll(tokens []string) []string {
	if tokens == nil {
		return nil
	}
	out := make([]string, len(tokens))
	for i, t := range tokens {
		out[i] = EscapeExpansion(t)
	}
	return out
}

// holdsExpansion reports whether s holds what the kubelet rewrites: a
// `$(` reference or a `$$` escape.
func holdsExpansion(s string) bool {
	return strings.Contains(s, "$(") || strings.Contains(s, "$$")
}

// UserEnvVar is one `spec.env` entry as a container gets it: a copy, with
// `value` dropped when `valueFrom` is set (the API server refuses both),
// and `value` escaped, so `spec.env` values are literal. Kubernetes would
// otherwise expand `$(VAR)` in a value from the variables before it and
// from an `envFrom` Secret, the Hugging Face token's included.
func UserEnvVar(e corev1.EnvVar) corev1.EnvVar {
	e = *e.DeepCopy()
	if e.ValueFrom != nil {
		e.Value = ""
	}
	e.Value = EscapeExpansion(e.Value)
	return e
}
