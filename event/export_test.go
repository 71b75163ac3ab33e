package event

// AppendString is appendString, for the tests.
var AppendString = appendString

// WaitHandlers waits until b's handler goroutines have returned.
func WaitHandlers(b *MemoryBus) { b.wg.Wait() }
