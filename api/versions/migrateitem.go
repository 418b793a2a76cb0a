package versions

import (
	"errors"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/api/migrations"
	"github.com/airunway-render/airunway-render/diag"
	"github.com/airunway-render/airunway-render/internal/manifest"
)

// MigrateItem migrates one item in place, if it is a ModelDeployment of a
// served version, and converts it to the served version to unless to is
// empty; it says what changed. The CLI migrates files with it.
func MigrateItem(n *yaml.RNode, to string) ([]string, error) {
	if _, bad := CheckShape(n); bad {
		return nil, nil // kyaml's accessors cannot read it; rendering reports it
	}
	// A model under a misspelled group, kind or version would be skipped
	// as no ModelDeployment, and one the renderer cannot decode (an
	// unknown field, a wrong type) rewritten on its structure alone:
	// refused here as render refuses them, or a run that left them as
	// they were would look like a success.
	if p, bad := CheckAPIVersion(n); bad {
		return nil, &Refusal{Problems: diag.List{p}}
	}
	changes, err := Migrate(n) // first: its refusals speak of the move
	if err != nil {
		return nil, err
	}
	if l := decodeErrors(n); len(l) > 0 {
		return nil, &Refusal{Problems: l}
	}
	if to == "" || n.GetKind() != hub.KindModelDeployment || !Serves(n.GetApiVersion(), hub.KindModelDeployment) {
		return changes, nil
	}
	converted, err := migrations.Convert(n, to)
	return append(changes, converted...), err
}

// Refusal is MigrateItem's error for an item the renderer would refuse
// to read: its problems, each at its field.
type Refusal struct{ Problems diag.List }

func (r *Refusal) Error() string {
	msgs := make([]string, len(r.Problems))
	for i, p := range r.Problems {
		msgs[i] = "`" + p.Field + "` " + p.Message
	}
	return strings.Join(msgs, "; ")
}

// MigrateProblems are the problems of MigrateItem's error for item n of
// file ("" when not known): a Refusal's own, else the error as one.
func MigrateProblems(n *yaml.RNode, file string, err error) diag.List {
	var r *Refusal
	switch {
	case err == nil:
		return nil
	case errors.As(err, &r):
		l := make(diag.List, len(r.Problems))
		for i, p := range r.Problems {
			p.Resource, p.File = ItemRef(n), file
			l[i] = p
		}
		return l
	}
	return diag.List{{Severity: diag.Error, Resource: ItemRef(n), File: file, Message: err.Error()}}
}

// decodeErrors are the errors of decoding a ModelDeployment of a served
// version as render decodes it: unknown fields, wrong types, conflicts.
// Its values are render's to check (migrate rewrites form, not values).
func decodeErrors(n *yaml.RNode) diag.List {
	if n.GetKind() != hub.KindModelDeployment || !Serves(n.GetApiVersion(), hub.KindModelDeployment) {
		return nil
	}
	js, l := manifest.ObjectJSON(n)
	if !l.HasErrors() {
		_, l = DecodeModelDeployment(n.GetApiVersion(), js)
	}
	return l.Errors()
}

// ItemRef names an item in problems; nothing when its shape is not one
// kyaml's accessors can read.
func ItemRef(n *yaml.RNode) diag.Resource {
	if _, bad := CheckShape(n); bad {
		return diag.Resource{}
	}
	return diag.Resource{APIVersion: n.GetApiVersion(), Kind: n.GetKind(), Namespace: n.GetNamespace(), Name: n.GetName()}
}
