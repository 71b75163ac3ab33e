package postgres

// LockTable is the lease table of s's conversation locks, for tests that
// look rows up.
func LockTable(s *Store) string { return s.q.locks }

// Migrations is the number of migration steps.
var Migrations = len(migrations)
