package yamlerr

import (
	"fmt"
	"regexp"
	"strings"
)

// MaxParserDepth is the YAML parser's own nesting limit.
const MaxParserDepth = 10000

var (
	depthRe = regexp.MustCompile(`(?:line (\d+): )?exceeded max depth of (\d+)`)
	dupRe   = regexp.MustCompile(`line (\d+): mapping key (".*") already defined at line (\d+)`)
	utf8Re  = regexp.MustCompile(`(?:invalid leading|invalid trailing|incomplete) UTF-8 octet|invalid Unicode character`)
)

// Describe returns a readable message for an error from parsing or
// converting YAML.
func Describe(err error) string {
	msg := err.Error()
	switch {
	case strings.Contains(msg, "excessive aliasing"):
		return "its YAML aliases expand to far more data than the document holds (an alias bomb); YAML anchors and aliases must not multiply the document, so write the values out"
	case depthRe.MatchString(msg):
		m := depthRe.FindStringSubmatch(msg)
		return fmt.Sprintf("%snests more than %s levels deep; YAML input must nest at most %s levels", at(m[1]), m[2], m[2])
	case dupRe.MatchString(msg):
		m := dupRe.FindStringSubmatch(msg)
		return fmt.Sprintf("line %s: key %s is already defined at line %s; a key must appear only once in a mapping", m[1], m[2], m[3])
	case utf8Re.MatchString(msg):
		return "is not valid UTF-8; YAML input must be UTF-8 text"
	}
	for _, prefix := range []string{"MalformedYAMLError: ", "yaml: "} {
		msg = strings.ReplaceAll(msg, prefix, "")
	}
	return msg
}

func at(line string) string {
	if line == "" {
		return ""
	}
	return "line " + line + ": "
}
