package reporter

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/airunway-render/airunway-render/api/hub"
	v1 "github.com/airunway-render/airunway-render/api/v1alpha1"
	"github.com/airunway-render/airunway-render/api/v1alpha2"
)

// ConversionPath is where the API server sends ModelDeployment conversion
// reviews (the CRD's `spec.conversion.webhook.clientConfig`).
const ConversionPath = "/convert"

// Bounds of one ConversionReview. The API server's webhook converter
// (apiextensions-apiserver, pkg/apiserver/conversion/webhook_converter.go)
// sends one object, or every item of a list that is not already in the
// desired version, in one review, with no limit on their number; each
// served version's storage decodes objects from etcd one at a time, so a
// review from the API server carries one object in practice. What the
// webhook reads is bounded anyway, since anything in the cluster that can
// reach its Service can send it a review.
const (
	// maxReviewBytes bounds a review's body: more than twice the largest
	// object the API server converts (maxReviewObjectBytes), five of the
	// most etcd stores (1.5 MiB), or thousands of ordinary ones (2 KiB). A
	// larger body gets HTTP 413. webhookLimits bounds how many are read at
	// once.
	maxReviewBytes = 8 << 20
	// maxReviewObjectBytes bounds one object in a review: the API server
	// converts objects read from etcd (at most 1.5 MiB) or from a request
	// body (at most 3 MiB, its default MaxRequestBodyBytes), so a larger
	// one is not from it. Decoding an object takes several times its size
	// in Go values; this bounds that.
	maxReviewObjectBytes = 3 << 20
)

// ConversionHandler serves the ModelDeployment conversion webhook: each
// object goes through the hub to the desired version, v1alpha1's
// conversion carrying v1alpha2's fields in its annotation. It converts
// only: no defaults, no validation (the API server validates against the
// desired version's schema afterwards), and status passes through as it
// is. A review larger than 8 MiB gets HTTP 413, one the handler cannot
// read HTTP 400; an object it cannot convert fails the whole review,
// naming it, and the API server refuses the request that needed it.
func ConversionHandler() http.Handler { return conversionHandler(maxReviewBytes) }

// conversionHandler is ConversionHandler reading at most maxBytes. It
// holds the objects as read, one object's Go values at a time, and the
// objects converted, which it writes out without copying the answer whole.
func conversionHandler(maxBytes int64) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		review, status, err := readReview(w, r, maxBytes)
		if err != nil {
			http.Error(w, err.Error(), status)
			return
		}
		converted, err := convertObjects(review.Request.Objects, review.Request.DesiredAPIVersion)
		review.Request.Objects = nil // read; let it go while the answer is written
		w.Header().Set("Content-Type", "application/json")
		if err != nil {
			writeFailure(w, review.Request.UID, err)
			return
		}
		writeSuccess(w, review.Request.UID, converted)
	})
}

// conversionReview is an apiextensions.k8s.io/v1 ConversionReview as the
// handler reads it: its objects are kept as one JSON array, read an object
// at a time, since decoding them all at once into RawExtensions costs
// dozens of times the bytes of a list of tiny objects.
type conversionReview struct {
	Request *struct {
		UID               types.UID       `json:"uid"`
		DesiredAPIVersion string          `json:"desiredAPIVersion"`
		Objects           json.RawMessage `json:"objects"`
	} `json:"request"`
}

// readReview reads the body, at most maxBytes of it, answering the HTTP
// status to refuse it with.
func readReview(w http.ResponseWriter, r *http.Request, maxBytes int64) (*conversionReview, int, error) {
	if r.ContentLength > maxBytes {
		return nil, http.StatusRequestEntityTooLarge, fmt.Errorf("the ConversionReview is %d bytes: the webhook reads at most %s (%d bytes)", r.ContentLength, hub.FormatBytes(int(maxBytes)), maxBytes)
	}
	// A body of known length is read into a buffer of that size, so
	// reading it makes no garbage; the length is at most maxBytes, and the
	// concurrency bound counts every review as that large.
	body := bytes.NewBuffer(make([]byte, 0, max(r.ContentLength, 0)+bytes.MinRead))
	_, err := body.ReadFrom(http.MaxBytesReader(w, r.Body, maxBytes))
	if tooLarge := (*http.MaxBytesError)(nil); errors.As(err, &tooLarge) {
		return nil, http.StatusRequestEntityTooLarge, fmt.Errorf("the ConversionReview is larger than %s (%d bytes), the most the webhook reads", hub.FormatBytes(int(maxBytes)), maxBytes)
	}
	if err != nil {
		return nil, http.StatusBadRequest, fmt.Errorf("cannot read the ConversionReview: %w", err)
	}
	var review conversionReview
	if err := json.Unmarshal(body.Bytes(), &review); err != nil || review.Request == nil {
		return nil, http.StatusBadRequest, errors.New("the body must be an apiextensions.k8s.io/v1 ConversionReview with a request")
	}
	return &review, 0, nil
}

// convertObjects converts a review's objects, a JSON array (or null), one
// at a time, to the apiVersion to.
func convertObjects(objects json.RawMessage, to string) ([][]byte, error) {
	if len(objects) == 0 || string(objects) == "null" {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(objects))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('[') {
		return nil, errors.New("`request.objects` must be a list")
	}
	var converted [][]byte
	for i := 0; dec.More(); i++ {
		var obj json.RawMessage
		if err := dec.Decode(&obj); err != nil {
			return nil, fmt.Errorf("`request.objects[%d]` cannot be read: %w", i, err)
		}
		if len(obj) > maxReviewObjectBytes {
			return nil, fmt.Errorf("`request.objects[%d]` is %d bytes: an object the API server converts is at most %s (%d bytes)", i, len(obj), hub.FormatBytes(maxReviewObjectBytes), maxReviewObjectBytes)
		}
		out, err := ConvertModelDeployment(obj, to)
		if err != nil {
			return nil, err
		}
		converted = append(converted, out)
	}
	return converted, nil
}

// writeSuccess writes a successful ConversionResponse, each converted
// object as it is (compact JSON from json.Marshal), so the answer is never
// copied whole into one more buffer.
func writeSuccess(w io.Writer, uid types.UID, converted [][]byte) {
	quotedUID, _ := json.Marshal(uid)
	_, _ = fmt.Fprintf(w, `{"apiVersion":"apiextensions.k8s.io/v1","kind":"ConversionReview","response":{"uid":%s,"result":{"status":%q},"convertedObjects":[`, quotedUID, metav1.StatusSuccess)
	for i, obj := range converted {
		if i > 0 {
			_, _ = io.WriteString(w, ",")
		}
		if _, err := w.Write(obj); err != nil {
			return // the client is gone, or the write timed out
		}
	}
	_, _ = io.WriteString(w, "]}}\n")
}

// writeFailure writes a ConversionResponse that fails the whole review.
func writeFailure(w io.Writer, uid types.UID, err error) {
	_ = json.NewEncoder(w).Encode(&apiextensionsv1.ConversionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "apiextensions.k8s.io/v1", Kind: "ConversionReview"},
		Response: &apiextensionsv1.ConversionResponse{UID: uid, Result: metav1.Status{Status: metav1.StatusFailure, Message: err.Error()}},
	})
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
