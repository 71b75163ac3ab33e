package pdf

import "time"

// Timeout returns the extractor's timeout, 0 for none.
func Timeout(e *Extractor) time.Duration { return e.timeout }
