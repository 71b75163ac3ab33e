package swarm

// NewTaskLog returns the in-memory TaskLog a Swarm without Config.Tasks
// uses.
func NewTaskLog() TaskLog { return &taskLog{} }

// WaitRetention waits for the retention pass in the background, if any.
func (w *Swarm) WaitRetention() { w.passes.Wait() }
