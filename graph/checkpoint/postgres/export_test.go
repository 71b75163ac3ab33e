package postgres

// PutWritesSQL returns the statements of a PutWrites after the touch of
// the thread: the deletion of the tasks' earlier writes, whose parameters
// are the thread, the checkpoint ID and the task IDs, and the insertion of
// the writes, with the thread, the checkpoint ID and the four columns of
// the writes.
func PutWritesSQL(s *Saver) (deleteTaskWrites, addWrites string) {
	return s.q.deleteTaskWrites, s.q.addWrites
}

// GetLatestSQL returns the statement of a Get of a thread's latest
// checkpoint; its parameters are the thread and the empty string.
func GetLatestSQL(s *Saver) string {
	return s.q.getOne[0]
}

// UsageSQL returns the statement of a Usage; its parameter is the thread.
func UsageSQL(s *Saver) string {
	return s.q.usage
}

// Migrations returns the schema changes; "{schema}" stands for the quoted
// schema name.
func Migrations() []string { return migrations }
