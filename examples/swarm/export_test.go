package swarm

// NewTaskLog returns the in-memory TaskLog a Swarm without Config.Tasks
// uses.
func NewTaskLog() TaskLog { return &taskLog{} }
