package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/agentgraph/agentgraph/cognition"
	"github.com/jackc/pgx/v5"
)

// The Store is also a durable [cognition.TaskQueue], in table
// cognition_tasks. A claim locks the oldest ready row with FOR UPDATE SKIP
// LOCKED, so any number of workers in any number of processes share the
// work and never take one task twice; leases run on the server's clock.
var _ cognition.TaskQueue = (*Store)(nil)

func (s *Store) tq(sql string) string { return s.q.replace.Replace(sql) }

// Enqueue implements [cognition.TaskQueue].
func (s *Store) Enqueue(ctx context.Context, t cognition.TaskRecord) (int64, error) {
	if t.MaxAttempts <= 0 {
		t.MaxAttempts = cognition.DefaultTaskAttempts
	}
	var id int64
	err := s.pool.QueryRow(ctx, s.tq(`INSERT INTO {tasks} (kind, user_id, payload, max_attempts)
		VALUES ($1, $2, $3, $4) RETURNING id`), t.Kind, t.UserID, append([]byte{}, t.Payload...), t.MaxAttempts).Scan(&id)
	if err != nil {
		return 0, fmt.Errorf("cognition/postgres: enqueue %q for %q: %w", t.Kind, t.UserID, err)
	}
	return id, nil
}

// Claim implements [cognition.TaskQueue].
func (s *Store) Claim(ctx context.Context, lease time.Duration) (cognition.TaskRecord, bool, error) {
	if _, err := s.pool.Exec(ctx, s.tq(`UPDATE {tasks} SET state = 'dead', token = '',
		last_error = 'lease expired on the last attempt'
		WHERE state = 'claimed' AND lease_until <= now() AND attempts >= max_attempts`)); err != nil {
		return cognition.TaskRecord{}, false, fmt.Errorf("cognition/postgres: claim: %w", err)
	}
	t := cognition.TaskRecord{State: cognition.TaskClaimed, Token: cognition.NewTaskToken()}
	err := s.pool.QueryRow(ctx, s.tq(`WITH c AS (
			SELECT id FROM {tasks}
			WHERE state = 'pending' OR (state = 'claimed' AND lease_until <= now() AND attempts < max_attempts)
			ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED)
		UPDATE {tasks} t SET state = 'claimed', token = $1, attempts = t.attempts + 1,
			lease_until = now() + make_interval(secs => $2)
		FROM c WHERE t.id = c.id
		RETURNING t.id, t.kind, t.user_id, t.payload, t.attempts, t.max_attempts, t.last_error`),
		t.Token, lease.Seconds()).Scan(&t.ID, &t.Kind, &t.UserID, &t.Payload, &t.Attempts, &t.MaxAttempts, &t.LastError)
	if errors.Is(err, pgx.ErrNoRows) {
		return cognition.TaskRecord{}, false, nil
	}
	if err != nil {
		return cognition.TaskRecord{}, false, fmt.Errorf("cognition/postgres: claim: %w", err)
	}
	return t, true, nil
}

// Complete implements [cognition.TaskQueue].
func (s *Store) Complete(ctx context.Context, id int64, token string) error {
	tag, err := s.pool.Exec(ctx, s.tq(`DELETE FROM {tasks} WHERE id = $1 AND state = 'claimed' AND token = $2`), id, token)
	if err != nil {
		return fmt.Errorf("cognition/postgres: complete task %d: %w", id, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("%w (task %d)", cognition.ErrLeaseLost, id)
	}
	return nil
}

// Fail implements [cognition.TaskQueue].
func (s *Store) Fail(ctx context.Context, id int64, token, cause string, permanent bool) (bool, error) {
	var state string
	err := s.pool.QueryRow(ctx, s.tq(`UPDATE {tasks} SET last_error = $1, token = '',
		state = CASE WHEN $2 OR attempts >= max_attempts THEN 'dead' ELSE 'pending' END
		WHERE id = $3 AND state = 'claimed' AND token = $4 RETURNING state`), cause, permanent, id, token).Scan(&state)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, fmt.Errorf("%w (task %d)", cognition.ErrLeaseLost, id)
	}
	if err != nil {
		return false, fmt.Errorf("cognition/postgres: fail task %d: %w", id, err)
	}
	return state == string(cognition.TaskDead), nil
}

// Counts implements [cognition.TaskQueue].
func (s *Store) Counts(ctx context.Context) (cognition.TaskCounts, error) {
	var c cognition.TaskCounts
	err := s.pool.QueryRow(ctx, s.tq(`SELECT count(*) FILTER (WHERE state = 'pending'),
		count(*) FILTER (WHERE state = 'claimed'), count(*) FILTER (WHERE state = 'dead') FROM {tasks}`)).Scan(&c.Pending, &c.Claimed, &c.Dead)
	if err != nil {
		return c, fmt.Errorf("cognition/postgres: count tasks: %w", err)
	}
	return c, nil
}

// Dead implements [cognition.TaskQueue].
func (s *Store) Dead(ctx context.Context, limit int) ([]cognition.TaskRecord, error) {
	rows, err := s.pool.Query(ctx, s.tq(`SELECT id, kind, user_id, payload, attempts, max_attempts, last_error
		FROM {tasks} WHERE state = 'dead' ORDER BY id LIMIT $1`), limit)
	if err != nil {
		return nil, fmt.Errorf("cognition/postgres: dead tasks: %w", err)
	}
	defer rows.Close()
	var out []cognition.TaskRecord
	for rows.Next() {
		t := cognition.TaskRecord{State: cognition.TaskDead}
		if err := rows.Scan(&t.ID, &t.Kind, &t.UserID, &t.Payload, &t.Attempts, &t.MaxAttempts, &t.LastError); err != nil {
			return nil, fmt.Errorf("cognition/postgres: dead tasks: %w", err)
		}
		out = append(out, t)
	}
	return out, rows.Err()
}
