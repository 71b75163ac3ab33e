package operator

import (
	"strconv"

	"github.com/agentgraph/agentgraph/internal/utf8clip"
)

// quoteName returns the tool name a caller asked for, quoted for a text
// the model or a person reads: cut to [MaxToolNameLen] bytes, and saying
// from how many, when longer. No tool has a longer name, and the caller
// (a model) may have written any number of bytes.
func quoteName(name string) string {
	if len(name) <= MaxToolNameLen {
		return strconv.Quote(name)
	}
	return strconv.Quote(utf8clip.Clip(name, MaxToolNameLen)) + " (cut from " + strconv.Itoa(len(name)) + " bytes)"
}
