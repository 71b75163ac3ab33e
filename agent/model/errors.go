package model

import "errors"

// ErrIncompleteStream reports a stream that ended without its final
// ChunkDone chunk, so the reply is incomplete.
var ErrIncompleteStream = errors.New("model: stream ended without a final response")
