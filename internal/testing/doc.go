// Package testing holds, in one sub-package each, the harnesses the tests
// share and no binary links: the real control plane and cluster twin
// (twin), API-server schema validation of rendered objects (schemacheck),
// provider and function fixtures (providertest, fntest), the conversion
// webhook the twin's API server calls (conversiontest), fuzz-input
// checks (fuzzcheck), the ports a process listens on (procnet), Argo CD's Lua setup for the shipped health check
// (argolua) and this repository's own CI switch (ownci). Product
// packages never import them; the layout keeps that visible.
package testing
