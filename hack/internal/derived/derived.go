// Package derived writes a file a hack/derive-* command derives from
// upstream sources, or, with -check, only says whether the file on disk
// is still what the sources derive. The commands share it so that every
// derived data file is checked and rewritten the same way.
package derived

import (
	"bytes"
	"fmt"
	"io"
	"os"
)

// Output writes data to out, or with check compares it to out's content,
// and returns the command's exit status: 0, or 1 after saying on stderr
// what is wrong. command names the command in its messages, from names
// the sources, and done is what a successful write prints after "wrote".
func Output(command, out, from string, data []byte, check bool, stdout, stderr io.Writer) int {
	if check {
		have, err := os.ReadFile(out)
		if err != nil || !bytes.Equal(have, data) {
			fmt.Fprintf(stderr, "%s: %s is not what %s derives; run without -check to rewrite it\n", command, out, from)
			return 1
		}
		fmt.Fprintf(stdout, "%s: %s is current\n", command, out)
		return 0
	}
	if err := os.WriteFile(out, data, 0o644); err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", command, err)
		return 1
	}
	fmt.Fprintf(stdout, "%s: wrote %s\n", command, out)
	return 0
}
