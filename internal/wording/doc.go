// Package wording holds the few helpers that turn numbers into the words
// of a message: 176555 as "176,555", "1 node" and "2 nodes". Every
// message of the renderer, the plan and the CLI writes numbers the same
// way, so a reader comparing a render's error with a plan's table sees the
// same figure.
package wording
