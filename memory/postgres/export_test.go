package postgres

// LockKey is the advisory lock key s.Lock(ctx, id) takes, for tests that
// look their own lock up in pg_locks.
func LockKey(s *Store, id string) int64 { return lockKey(s.q.conversations, id) }
