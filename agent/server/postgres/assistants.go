package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/agentgraph/agentgraph/agent/server"
)

// The store's assistants ([server.AssistantStore]): a row per assistant
// (agentserver_assistants) and a row per version holding the assistant's
// document (agentserver_assistant_versions, deleted with its assistant);
// the owner is the assistant row's.

// sql returns the statement with its table names in place.
func (s *Store) sql(stmt string) string { return s.q.tables.Replace(stmt) }

func decodeAssistant(doc, owner string) (*server.Assistant, error) {
	var a server.Assistant
	if err := unmarshalNumbers([]byte(doc), &a); err != nil {
		return nil, fmt.Errorf("postgres: a stored assistant does not decode: %w", err)
	}
	a.Owner = owner
	return &a, nil
}

// CreateAssistant implements [server.AssistantStore].
func (s *Store) CreateAssistant(ctx context.Context, a *server.Assistant) error {
	doc, err := json.Marshal(a)
	if err != nil {
		return err
	}
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, s.sql(`INSERT INTO {assistants} (id, owner, current, latest, created) VALUES ($1, $2, $3, $3, $4) ON CONFLICT DO NOTHING`),
			a.ID, a.Owner, a.Version, a.CreatedAt)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return fmt.Errorf("assistant %s: %w", a.ID, server.ErrExists)
		}
		_, err = tx.Exec(ctx, s.sql(`INSERT INTO {assistantVersions} (id, version, doc) VALUES ($1, $2, $3)`), a.ID, a.Version, string(doc))
		return err
	})
	return wrap("create assistant", err)
}

// loadAssistant reads the assistant at its current version, and its
// highest version; lock locks its row.
func (s *Store) loadAssistant(ctx context.Context, q interface {
	QueryRow(context.Context, string, ...any) pgx.Row
}, id string, lock bool) (*server.Assistant, int, error) {
	stmt := `SELECT v.doc, a.owner, a.latest FROM {assistants} a JOIN {assistantVersions} v ON v.id = a.id AND v.version = a.current WHERE a.id = $1`
	if lock {
		stmt += ` FOR UPDATE OF a`
	}
	var doc, owner string
	var latest int
	err := q.QueryRow(ctx, s.sql(stmt), id).Scan(&doc, &owner, &latest)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, 0, fmt.Errorf("assistant %s: %w", id, server.ErrNotFound)
	}
	if err != nil {
		return nil, 0, err
	}
	a, err := decodeAssistant(doc, owner)
	return a, latest, err
}

// Assistant implements [server.AssistantStore].
func (s *Store) Assistant(ctx context.Context, id string) (*server.Assistant, error) {
	a, _, err := s.loadAssistant(ctx, s.pool, id, false)
	return a, wrap("load assistant", err)
}

func (s *Store) assistantDocs(ctx context.Context, stmt string, args ...any) ([]*server.Assistant, error) {
	rows, err := s.pool.Query(ctx, s.sql(stmt), args...)
	if err != nil {
		return nil, err
	}
	var out []*server.Assistant
	for rows.Next() {
		var doc, o string
		if err := rows.Scan(&doc, &o); err != nil {
			rows.Close()
			return nil, err
		}
		a, err := decodeAssistant(doc, o)
		if err != nil {
			rows.Close()
			return nil, err
		}
		out = append(out, a)
	}
	rows.Close()
	return out, rows.Err()
}

// Assistants implements [server.AssistantStore].
func (s *Store) Assistants(ctx context.Context, owner string) ([]*server.Assistant, error) {
	out, err := s.assistantDocs(ctx, `SELECT v.doc, a.owner FROM {assistants} a JOIN {assistantVersions} v ON v.id = a.id AND v.version = a.current
		WHERE a.owner = $1 ORDER BY a.created, a.id`, owner)
	return out, wrap("list assistants", err)
}

// UpdateAssistant implements [server.AssistantStore].
func (s *Store) UpdateAssistant(ctx context.Context, id string, fn func(*server.Assistant) error) (*server.Assistant, error) {
	var out *server.Assistant
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		a, latest, err := s.loadAssistant(ctx, tx, id, true)
		if err != nil {
			return err
		}
		if err := fn(a); err != nil {
			return err
		}
		a.ID, a.Version = id, latest+1
		doc, err := json.Marshal(a)
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, s.sql(`INSERT INTO {assistantVersions} (id, version, doc) VALUES ($1, $2, $3)`), id, a.Version, string(doc)); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, s.sql(`UPDATE {assistants} SET current = $2, latest = $2 WHERE id = $1`), id, a.Version); err != nil {
			return err
		}
		out = a
		return nil
	})
	if err != nil {
		return nil, wrap("update assistant", err)
	}
	return out, nil
}

// AssistantVersions implements [server.AssistantStore].
func (s *Store) AssistantVersions(ctx context.Context, owner, id string) ([]*server.Assistant, error) {
	out, err := s.assistantDocs(ctx, `SELECT v.doc, a.owner FROM {assistants} a JOIN {assistantVersions} v ON v.id = a.id
		WHERE a.id = $1 AND a.owner = $2 ORDER BY v.version DESC`, id, owner)
	if err == nil && len(out) == 0 {
		err = fmt.Errorf("assistant %s: %w", id, server.ErrNotFound)
	}
	return out, wrap("list assistant versions", err)
}

// SetAssistantVersion implements [server.AssistantStore].
func (s *Store) SetAssistantVersion(ctx context.Context, owner, id string, version int) (*server.Assistant, error) {
	var out *server.Assistant
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, s.sql(`UPDATE {assistants} SET current = $2 WHERE id = $1 AND owner = $3
			AND EXISTS (SELECT 1 FROM {assistantVersions} WHERE id = $1 AND version = $2)`), id, version, owner)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return fmt.Errorf("assistant %s version %d: %w", id, version, server.ErrNotFound)
		}
		out, _, err = s.loadAssistant(ctx, tx, id, false)
		return err
	})
	if err != nil {
		return nil, wrap("set assistant version", err)
	}
	return out, nil
}

// DeleteAssistant implements [server.AssistantStore]; its versions go
// with it (ON DELETE CASCADE).
func (s *Store) DeleteAssistant(ctx context.Context, owner, id string) error {
	_, err := s.pool.Exec(ctx, s.sql(`DELETE FROM {assistants} WHERE id = $1 AND owner = $2`), id, owner)
	return wrap("delete assistant", err)
}

// AssistantUsage implements [server.AssistantStore]: the bytes are those
// of the versions' documents.
func (s *Store) AssistantUsage(ctx context.Context, owner string) (int, int64, error) {
	var n int
	var bytes int64
	err := s.pool.QueryRow(ctx, s.sql(`SELECT count(DISTINCT a.id), coalesce(sum(octet_length(v.doc)), 0)::bigint FROM {assistants} a
		JOIN {assistantVersions} v ON v.id = a.id WHERE a.owner = $1`), owner).Scan(&n, &bytes)
	return n, bytes, wrap("count assistants", err)
}
