package manifest

import (
	"errors"
	"io"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// parseDocument parses the first document of text with kyaml's decoder,
// as kio.ByteReader parses each document it cuts; nil when text holds
// none.
func parseDocument(text string) (*yaml.Node, error) {
	doc := &yaml.Node{}
	err := yaml.NewDecoder(strings.NewReader(text)).Decode(doc)
	if errors.Is(err, io.EOF) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return doc, nil
}
