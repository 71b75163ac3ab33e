// Package cmdflag holds what the commands of the examples do the same way
// with their flags.
package cmdflag

import "strings"

// List splits a comma-separated flag value into its fields, trimmed of
// spaces, leaving out empty ones; it is nil when there are none.
func List(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}
