package reporter

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/airunway-render/airunway-render/api/hub"
	v1 "github.com/airunway-render/airunway-render/api/v1alpha1"
	"github.com/airunway-render/airunway-render/api/v1alpha2"
)

// ConversionPath is where the API server sends ModelDeployment conversion
// reviews (the CRD's `spec.conversion.webhook.clientConfig`).
const ConversionPath = "/convert"

// maxReviewBytes bounds a ConversionReview body: the API server sends at
// most a list's worth of objects of at most 1.5 MiB each in one review,
// and a list of ModelDeployments is far below this.
const maxReviewBytes = 64 << 20

// ConversionHandler serves the ModelDeployment conversion webhook: each
// object goes through the hub to the desired version, v1alpha1's
// conversion carrying v1alpha2's fields in its annotation. It converts
// only: no defaults, no validation (the API server validates against the
// desired version's schema afterwards), and status passes through as it
// is. A review the handler cannot read gets HTTP 400; an object it cannot
// convert fails the whole review, naming it, and the API server refuses
// the request that needed it.
func ConversionHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(io.LimitReader(r.Body, maxReviewBytes+1))
		if err != nil || len(body) > maxReviewBytes {
			http.Error(w, "cannot read the ConversionReview", http.StatusBadRequest)
			return
		}
		var review apiextensionsv1.ConversionReview
		if err := json.Unmarshal(body, &review); err != nil || review.Request == nil {
			http.Error(w, "the body must be an apiextensions.k8s.io/v1 ConversionReview with a request", http.StatusBadRequest)
			return
		}
		review.Response = convertReview(review.Request)
		review.Request = nil
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(&review)
	})
}

func convertReview(req *apiextensionsv1.ConversionRequest) *apiextensionsv1.ConversionResponse {
	resp := &apiextensionsv1.ConversionResponse{UID: req.UID, Result: metav1.Status{Status: metav1.StatusSuccess}}
	for _, obj := range req.Objects {
		out, err := ConvertModelDeployment(obj.Raw, req.DesiredAPIVersion)
		if err != nil {
			resp.ConvertedObjects = nil
			resp.Result = metav1.Status{Status: metav1.StatusFailure, Message: err.Error()}
			return resp
		}
		resp.ConvertedObjects = append(resp.ConvertedObjects, runtime.RawExtension{Raw: out})
	}
	return resp
}

// ConvertModelDeployment converts one ModelDeployment, as JSON, to the
// served apiVersion to.
func ConvertModelDeployment(data []byte, to string) ([]byte, error) {
	var meta metav1.TypeMeta
	if err := json.Unmarshal(data, &meta); err != nil {
		return nil, fmt.Errorf("cannot read the object: %w", err)
	}
	var h *hub.ModelDeployment
	var status json.RawMessage
	switch meta.APIVersion {
	case v1.APIVersion:
		var in v1.ModelDeployment
		if err := json.Unmarshal(data, &in); err != nil {
			return nil, fmt.Errorf("%s %q: %w", v1.APIVersion, objectName(data), err)
		}
		h, _ = in.ConvertToHub() // its problems are the renderer's to report
		status = in.Status
	case v1alpha2.APIVersion:
		var in v1alpha2.ModelDeployment
		if err := json.Unmarshal(data, &in); err != nil {
			return nil, fmt.Errorf("%s %q: %w", v1alpha2.APIVersion, objectName(data), err)
		}
		h, _ = in.ConvertToHub()
		status = in.Status
	default:
		return nil, fmt.Errorf("cannot convert from %q: the webhook converts %s and %s", meta.APIVersion, v1.APIVersion, v1alpha2.APIVersion)
	}
	switch to {
	case v1.APIVersion:
		out := v1.ConvertFromHub(h)
		out.Kind, out.Status = hub.KindModelDeployment, status
		return json.Marshal(out)
	case v1alpha2.APIVersion:
		out := v1alpha2.ConvertFromHub(h)
		out.Kind, out.Status = hub.KindModelDeployment, status
		return json.Marshal(out)
	}
	return nil, fmt.Errorf("cannot convert to %q: the webhook converts to %s and %s", to, v1.APIVersion, v1alpha2.APIVersion)
}

// objectName names an object in errors, "" when it has none.
func objectName(data []byte) string {
	var o struct {
		Metadata struct{ Namespace, Name string } `json:"metadata"`
	}
	_ = json.Unmarshal(data, &o)
	if o.Metadata.Namespace == "" {
		return o.Metadata.Name
	}
	return o.Metadata.Namespace + "/" + o.Metadata.Name
}
