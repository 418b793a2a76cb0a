package reporter

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	v1 "github.com/airunway-render/airunway-render/api/v1alpha1"
	"github.com/airunway-render/airunway-render/api/v1alpha2"
)

// The handler as the API server calls it: a review with several objects
// converts each, status and metadata passing through; an object of an
// unknown version fails the whole review, naming it; a body that is no
// review is a 400. (deploy/conversion_test.go runs it behind a real API
// server.)
func TestConversionHandler(t *testing.T) {
	t.Parallel()
	review := func(to string, objects ...string) (*http.Response, *apiextensionsv1.ConversionResponse) {
		t.Helper()
		req := apiextensionsv1.ConversionReview{TypeMeta: metav1.TypeMeta{APIVersion: "apiextensions.k8s.io/v1", Kind: "ConversionReview"},
			Request: &apiextensionsv1.ConversionRequest{UID: "42", DesiredAPIVersion: to}}
		for _, o := range objects {
			req.Request.Objects = append(req.Request.Objects, runtime.RawExtension{Raw: []byte(o)})
		}
		body, err := json.Marshal(req)
		require.NoError(t, err)
		rec := httptest.NewRecorder()
		ConversionHandler().ServeHTTP(rec, httptest.NewRequest(http.MethodPost, ConversionPath, bytes.NewReader(body)))
		var out apiextensionsv1.ConversionReview
		if rec.Code == http.StatusOK {
			require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &out))
			require.Nil(t, out.Request)
			require.Equal(t, "42", string(out.Response.UID))
		}
		return rec.Result(), out.Response
	}
	a := `{"apiVersion":"airunway.ai/v1alpha2","kind":"ModelDeployment","metadata":{"name":"a","namespace":"n","uid":"u1","resourceVersion":"7"},
		"spec":{"model":{"id":"x"},"adapters":[{"name":"s","source":"hf://o/r"}]},"status":{"phase":"Running"}}`
	b := `{"apiVersion":"airunway.ai/v1alpha1","kind":"ModelDeployment","metadata":{"name":"b"},"spec":{"model":{"id":"y"}}}`

	_, resp := review(v1.APIVersion, a, b)
	require.Equal(t, metav1.StatusSuccess, resp.Result.Status)
	require.Len(t, resp.ConvertedObjects, 2)
	var got map[string]any
	require.NoError(t, json.Unmarshal(resp.ConvertedObjects[0].Raw, &got))
	require.Equal(t, v1.APIVersion, got["apiVersion"])
	require.Equal(t, map[string]any{"phase": "Running"}, got["status"])
	meta := got["metadata"].(map[string]any)
	require.Equal(t, "7", meta["resourceVersion"])
	require.Equal(t, `{"adapters":[{"name":"s","source":"hf://o/r"}]}`, meta["annotations"].(map[string]any)[v1.AnnotationV1alpha2Fields])
	require.JSONEq(t, `{"apiVersion":"airunway.ai/v1alpha1","kind":"ModelDeployment","metadata":{"name":"b"},"spec":{"model":{"id":"y"}}}`, string(resp.ConvertedObjects[1].Raw), "already in the desired version")

	_, resp = review(v1alpha2.APIVersion, b, `{"apiVersion":"airunway.ai/v1beta1","kind":"ModelDeployment","metadata":{"name":"c"}}`)
	require.Equal(t, metav1.StatusFailure, resp.Result.Status)
	require.Contains(t, resp.Result.Message, `cannot convert from "airunway.ai/v1beta1"`)
	require.Empty(t, resp.ConvertedObjects)

	_, resp = review("airunway.ai/v2", b)
	require.Contains(t, resp.Result.Message, `cannot convert to "airunway.ai/v2"`)

	res, _ := review(v1.APIVersion)
	require.Equal(t, http.StatusOK, res.StatusCode, "an empty review converts nothing")
	rec := httptest.NewRecorder()
	ConversionHandler().ServeHTTP(rec, httptest.NewRequest(http.MethodPost, ConversionPath, bytes.NewReader([]byte(`{"kind":"Pod"}`))))
	require.Equal(t, http.StatusBadRequest, rec.Code)
}
