package fit

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/airunway-render/airunway-render/internal/safefile"
)

// maxFileBytes bounds each file ReadDir reads: a config.json is a few
// KiB, a safetensors index of a 1T-parameter model under 2 MiB.
const maxFileBytes = 8 << 20

// ReadDir reads a model's facts from a local directory holding its
// config.json and, when present, model.safetensors.index.json and
// hf_quant_config.json (NVIDIA ModelOpt's precision): offline, those
// files only, each a regular file of at most 8 MiB. id names the model
// in messages.
func ReadDir(id, dir string) (Model, error) {
	cfg, err := readBounded(filepath.Join(dir, "config.json"))
	if err != nil {
		return Model{}, err
	}
	idx, err := readBounded(filepath.Join(dir, "model.safetensors.index.json"))
	if errors.Is(err, fs.ErrNotExist) {
		idx, err = nil, nil
	}
	if err != nil {
		return Model{}, err
	}
	m, err := FromConfig(id, cfg, idx)
	if err != nil {
		return Model{}, fmt.Errorf("%s: %v", dir, err)
	}
	if m.Quantization == nil {
		// vLLM reads hf_quant_config.json only when config.json names no
		// quantization_config.
		quant, err := readBounded(filepath.Join(dir, "hf_quant_config.json"))
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			return Model{}, err
		default:
			if err := WithQuantConfig(&m, quant); err != nil {
				return Model{}, fmt.Errorf("%s: %v", dir, err)
			}
		}
	}
	m.Source = "the model directory " + dir
	return m, nil
}

func readBounded(path string) ([]byte, error) {
	// Only a regular file: a named pipe or a device would block the run.
	data, err := safefile.ReadFileAtMost(path, maxFileBytes)
	if tooLarge := (*safefile.TooLarge)(nil); errors.As(err, &tooLarge) {
		return nil, fmt.Errorf("%s: larger than %d MiB, not a model's configuration", path, maxFileBytes>>20)
	}
	return data, err
}
