package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestDerive builds a small KAITO-like repository with release tags and
// derives from it: only releases 0.6.0 to before 0.9.0, no pre-releases,
// Hugging Face presets only (not the base image), sorted, with each tag's
// commit and the list's checksum.
func TestDerive(t *testing.T) {
	repo := t.TempDir()
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", repo, "-c", "user.name=t", "-c", "user.email=t@example.com"}, args...)...)
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "git %v: %s", args, out)
	}
	write := func(content string) {
		p := filepath.Join(repo, modelList)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	}
	git("init", "-q")
	write("models:\n- name: base\n  tag: 0.0.1\n- name: phi-4\n  version: https://huggingface.co/microsoft/phi-4/commit/187ef0342fff0eb3333be9f00389385e95ef0b61\n")
	git("add", "-A")
	git("commit", "-qm", "one")
	for _, tag := range []string{"v0.5.9", "v0.6.0", "v0.8.0-rc.0"} {
		git("tag", tag)
	}
	write("models:\n- name: zeta-1b\n  version: https://huggingface.co/z/Zeta-1B/commit/0123456789abcdef\n- name: phi-4\n  version: https://huggingface.co/microsoft/phi-4/commit/187ef0342fff0eb3333be9f00389385e95ef0b61\n- name: local-only\n  version: none\n")
	git("commit", "-qam", "two")
	git("tag", "v0.8.1")
	git("tag", "v0.9.0")

	p, err := derive(repo)
	require.NoError(t, err)
	got, err := json.Marshal(p.Releases)
	require.NoError(t, err)
	var releases []map[string]any
	require.NoError(t, json.Unmarshal(got, &releases))
	require.Len(t, releases, 2)
	require.Equal(t, "0.6.0", releases[0]["release"])
	require.Equal(t, "0.8.1", releases[1]["release"])
	require.Equal(t, []any{map[string]any{"name": "phi-4", "huggingFace": "microsoft/phi-4"}}, releases[0]["presets"])
	require.Equal(t, []any{
		map[string]any{"name": "phi-4", "huggingFace": "microsoft/phi-4"},
		map[string]any{"name": "zeta-1b", "huggingFace": "z/Zeta-1B"},
	}, releases[1]["presets"])
	require.Len(t, releases[0]["commit"], 40)
	require.Len(t, releases[0]["sha256"], 64)
}
