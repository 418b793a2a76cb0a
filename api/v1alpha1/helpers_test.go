package v1alpha1

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"

	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/diag"
)

// want is one expected problem: its severity, exact field path and phrases
// its message must contain.
type want struct {
	sev   diag.Severity
	field string
	msg   []string
}

func e(field string, msg ...string) want { return want{diag.Error, field, msg} }
func w(field string, msg ...string) want { return want{diag.Warning, field, msg} }

func (x want) String() string {
	return fmt.Sprintf("[%s] %s: %q", x.sev, x.field, x.msg)
}

func (x want) matches(p diag.Problem) bool {
	if p.Severity != x.sev || p.Field != x.field {
		return false
	}
	for _, m := range x.msg {
		if !strings.Contains(p.Message, m) {
			return false
		}
	}
	return true
}

// requireProblems asserts that got holds exactly the wanted problems, in any
// order: every expectation matches a distinct problem and nothing is left.
func requireProblems(t *testing.T, got diag.List, wants ...want) {
	t.Helper()
	used := make([]bool, len(got))
	var missing []string
	for _, x := range wants {
		found := false
		for i, p := range got {
			if !used[i] && x.matches(p) {
				used[i], found = true, true
				break
			}
		}
		if !found {
			missing = append(missing, x.String())
		}
	}
	var extra []string
	for i, p := range got {
		if !used[i] {
			extra = append(extra, p.String())
		}
	}
	require.Truef(t, len(missing) == 0 && len(extra) == 0,
		"problems differ\nmissing:\n  %s\nunexpected:\n  %s\nall problems:\n  %s",
		strings.Join(missing, "\n  "), strings.Join(extra, "\n  "), problemLines(got))
}

func problemLines(l diag.List) string {
	lines := make([]string, len(l))
	for i, p := range l {
		lines[i] = p.String()
	}
	return strings.Join(lines, "\n  ")
}

const defaultMeta = "{name: test-model, namespace: default}"

// mdDoc assembles a ModelDeployment document from flow-style YAML for its
// metadata (defaultMeta when empty) and spec.
func mdDoc(meta, spec string) string {
	if meta == "" {
		meta = defaultMeta
	}
	return fmt.Sprintf("apiVersion: airunway.ai/v1alpha1\nkind: ModelDeployment\nmetadata: %s\nspec: %s\n", meta, spec)
}

// decodeYAML runs YAML -> JSON -> DecodeModelDeployment and requires that
// decoding reports no problem.
func decodeYAML(t *testing.T, doc string) *ModelDeployment {
	t.Helper()
	md, problems := decodeYAMLProblems(t, doc)
	require.Emptyf(t, problems, "decode problems:\n  %s", problemLines(problems))
	return md
}

func decodeYAMLProblems(t *testing.T, doc string) (*ModelDeployment, diag.List) {
	t.Helper()
	js, err := yaml.YAMLToJSON([]byte(doc))
	require.NoError(t, err)
	return DecodeModelDeployment(js)
}

// validate converts a defaulted ModelDeployment to the hub and validates
// it there, as the renderer does: the problems of both steps.
func validate(md *ModelDeployment) diag.List {
	h, l := md.ConvertToHub()
	return append(l, hub.ValidateModelDeployment(h)...)
}
