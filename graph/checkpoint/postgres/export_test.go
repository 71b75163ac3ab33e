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

// GroupWaiting returns how many Puts (with the flush wait, or without
// when lazy) wait to be sent together, and how many Puts or groups of
// that kind are being sent.
func GroupWaiting(s *Saver, lazy bool) (waiting, inFlight int) {
	k := 0
	if lazy {
		k = 1
	}
	s.group.mu.Lock()
	defer s.group.mu.Unlock()
	if b := s.group.next[k]; b != nil {
		for _, p := range b.puts {
			if !p.withdrawn {
				waiting++
			}
		}
	}
	return waiting, s.group.inFlight[k]
}

// GroupLeft returns how many callers' contexts ended while their Put was
// being sent with others.
func GroupLeft(s *Saver) int {
	s.group.mu.Lock()
	defer s.group.mu.Unlock()
	return s.group.left
}

// GroupSlots is how many Puts or groups of one kind are sent at once.
const GroupSlots = maxInFlight

// GroupSQL returns a statement of a group of Puts; they all start with
// the same six words, which postgrestest.Counts.SQL counts them under.
func GroupSQL(s *Saver) string { return s.q.putGroup[groupMixed] }
