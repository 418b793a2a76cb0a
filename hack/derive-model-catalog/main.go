// Command derive-model-catalog derives fit/catalog.json, the model facts
// the memory-fit check reads (parameters, dtype, layers, KV heads, head
// size, default context), from public copies of the models' Hugging Face
// config.json files. pins.json names each copy's repository, commit, path
// and sha256, and the ids the row answers to; sources/ holds the copies,
// so that deriving and checking run offline. A copy whose sha256 is not
// the pinned one is an error. Each catalog row carries its pin: where its
// figures came from.
//
//	go run ./hack/derive-model-catalog          # rewrite fit/catalog.json
//	go run ./hack/derive-model-catalog -check   # exit 1 when it has drifted
//
// To add a model: copy its config.json from a public repository at a
// commit into sources/, add a pin (the test checks the sha256), run the
// command and review the row.
package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/airunway-render/airunway-render/fit"
)

const (
	pinsFile = "hack/derive-model-catalog/pins.json"
	output   = "fit/catalog.json"
)

// Pins is the shape of pins.json.
type Pins struct {
	About string `json:"about"`
	Pins  []Pin  `json:"pins"`
}

// Pin is one pinned configuration and the catalog row it makes.
type Pin struct {
	ID      string     `json:"id"`
	Aliases []string   `json:"aliases,omitempty"`
	Note    string     `json:"note,omitempty"`
	Source  fit.Origin `json:"source"`
	// File is the local copy, relative to pins.json.
	File string `json:"file"`
}

func main() {
	pins := flag.String("pins", pinsFile, "the pins")
	out := flag.String("o", output, "the catalog to write")
	check := flag.Bool("check", false, "write nothing; exit 1 when the catalog differs from what the pins derive")
	flag.Parse()
	data, err := derive(*pins)
	if err != nil {
		fmt.Fprintln(os.Stderr, "derive-model-catalog:", err)
		os.Exit(1)
	}
	if *check {
		have, err := os.ReadFile(*out)
		if err != nil || !bytes.Equal(have, data) {
			fmt.Fprintf(os.Stderr, "derive-model-catalog: %s is not what %s derives; run without -check to rewrite it\n", *out, *pins)
			os.Exit(1)
		}
		fmt.Printf("derive-model-catalog: %s is current\n", *out)
		return
	}
	if err := os.WriteFile(*out, data, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "derive-model-catalog:", err)
		os.Exit(1)
	}
	fmt.Printf("derive-model-catalog: wrote %s\n", *out)
}

// derive reads the pins and their copies and returns the catalog's bytes.
func derive(pinsPath string) ([]byte, error) {
	raw, err := os.ReadFile(pinsPath)
	if err != nil {
		return nil, err
	}
	var p Pins
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return nil, fmt.Errorf("%s: %v", pinsPath, err)
	}
	c := fit.Catalog{Source: "derived by go run ./hack/derive-model-catalog from the configurations pinned in " + pinsFile + "; each row names its source file, repository, commit and sha256"}
	seen := map[string]bool{}
	for _, pin := range p.Pins {
		for _, id := range append([]string{pin.ID}, pin.Aliases...) {
			if seen[id] {
				return nil, fmt.Errorf("%s: %s is pinned twice", pinsPath, id)
			}
			seen[id] = true
		}
		cfg, err := os.ReadFile(filepath.Join(filepath.Dir(pinsPath), pin.File))
		if err != nil {
			return nil, err
		}
		sum := sha256.Sum256(cfg)
		if got := hex.EncodeToString(sum[:]); got != pin.Source.SHA256 {
			return nil, fmt.Errorf("%s: sha256 %s, but the pin says %s (%s)", pin.File, got, pin.Source.SHA256, pin.Source)
		}
		m, err := fit.FromConfig(pin.ID, cfg, nil)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", pin.File, err)
		}
		c.Models = append(c.Models, fit.Entry{Model: m, Aliases: pin.Aliases, Note: pin.Note, From: pin.Source})
	}
	data, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(data, '\n'), nil
}
