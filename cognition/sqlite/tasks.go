package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/agentgraph/agentgraph/cognition"
)

// The Store is also a durable [cognition.TaskQueue], in table
// cognition_tasks. A claim is one immediate transaction (SQLite's write
// lock) that updates the oldest ready row, so two workers, in one process
// or several, never claim one task.
var _ cognition.TaskQueue = (*Store)(nil)

// Enqueue implements [cognition.TaskQueue].
func (s *Store) Enqueue(ctx context.Context, t cognition.TaskRecord) (int64, error) {
	if t.MaxAttempts <= 0 {
		t.MaxAttempts = cognition.DefaultTaskAttempts
	}
	var id int64
	err := s.db.QueryRowContext(ctx, `INSERT INTO cognition_tasks (kind, user_id, payload, max_attempts, created)
		VALUES (?, ?, ?, ?, ?) RETURNING id`, t.Kind, t.UserID, append([]byte{}, t.Payload...), t.MaxAttempts, time.Now().UnixMilli()).Scan(&id)
	if err != nil {
		return 0, fmt.Errorf("cognition/sqlite: enqueue %q for %q: %w", t.Kind, t.UserID, err)
	}
	return id, nil
}

// Claim implements [cognition.TaskQueue].
func (s *Store) Claim(ctx context.Context, lease time.Duration) (cognition.TaskRecord, bool, error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return cognition.TaskRecord{}, false, fmt.Errorf("cognition/sqlite: claim: %w", err)
	}
	defer tx.Rollback()
	now := time.Now()
	if _, err := tx.ExecContext(ctx, `UPDATE cognition_tasks SET state = 'dead', token = '',
		last_error = 'lease expired on the last attempt'
		WHERE state = 'claimed' AND lease_until <= ? AND attempts >= max_attempts`, now.UnixMilli()); err != nil {
		return cognition.TaskRecord{}, false, fmt.Errorf("cognition/sqlite: claim: %w", err)
	}
	t := cognition.TaskRecord{State: cognition.TaskClaimed, Token: cognition.NewTaskToken()}
	err = tx.QueryRowContext(ctx, `UPDATE cognition_tasks SET state = 'claimed', token = ?, lease_until = ?,
		attempts = attempts + 1
		WHERE id = (SELECT id FROM cognition_tasks WHERE state = 'pending' OR (state = 'claimed' AND lease_until <= ?)
			ORDER BY id LIMIT 1)
		RETURNING id, kind, user_id, payload, attempts, max_attempts, last_error`,
		t.Token, now.Add(lease).UnixMilli(), now.UnixMilli()).Scan(&t.ID, &t.Kind, &t.UserID, &t.Payload, &t.Attempts, &t.MaxAttempts, &t.LastError)
	if errors.Is(err, sql.ErrNoRows) {
		return cognition.TaskRecord{}, false, tx.Commit()
	}
	if err != nil {
		return cognition.TaskRecord{}, false, fmt.Errorf("cognition/sqlite: claim: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return cognition.TaskRecord{}, false, fmt.Errorf("cognition/sqlite: claim: %w", err)
	}
	return t, true, nil
}

// Complete implements [cognition.TaskQueue].
func (s *Store) Complete(ctx context.Context, id int64, token string) error {
	res, err := s.db.ExecContext(ctx, `DELETE FROM cognition_tasks WHERE id = ? AND state = 'claimed' AND token = ?`, id, token)
	if err != nil {
		return fmt.Errorf("cognition/sqlite: complete task %d: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("%w (task %d)", cognition.ErrLeaseLost, id)
	}
	return nil
}

// Fail implements [cognition.TaskQueue].
func (s *Store) Fail(ctx context.Context, id int64, token, cause string, permanent bool) (bool, error) {
	var state string
	err := s.db.QueryRowContext(ctx, `UPDATE cognition_tasks SET last_error = ?, token = '',
		state = CASE WHEN ? OR attempts >= max_attempts THEN 'dead' ELSE 'pending' END
		WHERE id = ? AND state = 'claimed' AND token = ? RETURNING state`, cause, permanent, id, token).Scan(&state)
	if errors.Is(err, sql.ErrNoRows) {
		return false, fmt.Errorf("%w (task %d)", cognition.ErrLeaseLost, id)
	}
	if err != nil {
		return false, fmt.Errorf("cognition/sqlite: fail task %d: %w", id, err)
	}
	return state == string(cognition.TaskDead), nil
}

// Counts implements [cognition.TaskQueue].
func (s *Store) Counts(ctx context.Context) (cognition.TaskCounts, error) {
	var c cognition.TaskCounts
	err := s.db.QueryRowContext(ctx, `SELECT
		COALESCE(SUM(state = 'pending'), 0), COALESCE(SUM(state = 'claimed'), 0), COALESCE(SUM(state = 'dead'), 0)
		FROM cognition_tasks`).Scan(&c.Pending, &c.Claimed, &c.Dead)
	if err != nil {
		return c, fmt.Errorf("cognition/sqlite: count tasks: %w", err)
	}
	return c, nil
}

// Dead implements [cognition.TaskQueue].
func (s *Store) Dead(ctx context.Context, limit int) ([]cognition.TaskRecord, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT id, kind, user_id, payload, attempts, max_attempts, last_error
		FROM cognition_tasks WHERE state = 'dead' ORDER BY id LIMIT ?`, limit)
	if err != nil {
		return nil, fmt.Errorf("cognition/sqlite: dead tasks: %w", err)
	}
	defer rows.Close()
	var out []cognition.TaskRecord
	for rows.Next() {
		t := cognition.TaskRecord{State: cognition.TaskDead}
		if err := rows.Scan(&t.ID, &t.Kind, &t.UserID, &t.Payload, &t.Attempts, &t.MaxAttempts, &t.LastError); err != nil {
			return nil, fmt.Errorf("cognition/sqlite: dead tasks: %w", err)
		}
		out = append(out, t)
	}
	return out, rows.Err()
}
