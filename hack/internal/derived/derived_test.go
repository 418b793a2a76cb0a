package derived

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

func TestOutputWritesThenChecks(t *testing.T) {
	out := filepath.Join(t.TempDir(), "table.json")
	var stdout, stderr bytes.Buffer
	if code := Output("derive-x", out, "pins", []byte("a\n"), true, &stdout, &stderr); code != 1 {
		t.Fatalf("check of a missing file: exit %d, want 1", code)
	}
	if code := Output("derive-x", out, "pins", []byte("a\n"), false, &stdout, &stderr); code != 0 {
		t.Fatalf("write: exit %d: %s", code, stderr.String())
	}
	if got, _ := os.ReadFile(out); string(got) != "a\n" {
		t.Fatalf("wrote %q", got)
	}
	if code := Output("derive-x", out, "pins", []byte("a\n"), true, &stdout, &stderr); code != 0 {
		t.Fatalf("check of the same bytes: exit %d", code)
	}
	stderr.Reset()
	if code := Output("derive-x", out, "pins", []byte("b\n"), true, &stdout, &stderr); code != 1 || !bytes.Contains(stderr.Bytes(), []byte("is not what pins derives")) {
		t.Fatalf("check of other bytes: exit %d, stderr %q", code, stderr.String())
	}
}
