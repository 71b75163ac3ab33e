package server

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
)

// The SQLite store's assistants ([AssistantStore]): a row per assistant
// (agentserver_assistants) and a row per version holding its document
// (agentserver_assistant_versions); the owner is the assistant row's.

func decodeAssistant(doc, owner string) (*Assistant, error) {
	var a Assistant
	if err := decodeNumbers([]byte(doc), &a); err != nil {
		return nil, fmt.Errorf("server: a stored assistant does not decode: %w", err)
	}
	a.Owner = owner
	return &a, nil
}

// CreateAssistant implements [AssistantStore].
func (s *SQLiteStore) CreateAssistant(ctx context.Context, a *Assistant) error {
	doc, err := json.Marshal(a)
	if err != nil {
		return err
	}
	return s.tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `INSERT INTO agentserver_assistants (id, owner, current, latest, created) VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
			a.ID, a.Owner, a.Version, a.Version, a.CreatedAt.UnixNano())
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("assistant %s: %w", a.ID, ErrExists)
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO agentserver_assistant_versions (id, version, doc) VALUES (?, ?, ?)`, a.ID, a.Version, string(doc))
		return err
	})
}

type sqlQuerier interface {
	QueryRowContext(context.Context, string, ...any) *sql.Row
}

func loadAssistant(ctx context.Context, q sqlQuerier, id string) (*Assistant, int, error) {
	var doc, owner string
	var latest int
	err := q.QueryRowContext(ctx, `SELECT v.doc, a.owner, a.latest FROM agentserver_assistants a
		JOIN agentserver_assistant_versions v ON v.id = a.id AND v.version = a.current WHERE a.id = ?`, id).Scan(&doc, &owner, &latest)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, 0, fmt.Errorf("assistant %s: %w", id, ErrNotFound)
	}
	if err != nil {
		return nil, 0, err
	}
	a, err := decodeAssistant(doc, owner)
	return a, latest, err
}

// Assistant implements [AssistantStore].
func (s *SQLiteStore) Assistant(ctx context.Context, id string) (*Assistant, error) {
	a, _, err := loadAssistant(ctx, s.db, id)
	return a, err
}

// Assistants implements [AssistantStore].
func (s *SQLiteStore) Assistants(ctx context.Context, owner string) ([]*Assistant, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT v.doc FROM agentserver_assistants a
		JOIN agentserver_assistant_versions v ON v.id = a.id AND v.version = a.current WHERE a.owner = ? ORDER BY a.created, a.id`, owner)
	if err != nil {
		return nil, err
	}
	return scanAssistants(rows, owner)
}

// UpdateAssistant implements [AssistantStore].
func (s *SQLiteStore) UpdateAssistant(ctx context.Context, id string, fn func(*Assistant) error) (*Assistant, error) {
	var out *Assistant
	err := s.tx(ctx, func(tx *sql.Tx) error {
		a, latest, err := loadAssistant(ctx, tx, id)
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
		if _, err := tx.ExecContext(ctx, `INSERT INTO agentserver_assistant_versions (id, version, doc) VALUES (?, ?, ?)`, id, a.Version, string(doc)); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE agentserver_assistants SET current = ?, latest = ? WHERE id = ?`, a.Version, a.Version, id); err != nil {
			return err
		}
		out = a
		return nil
	})
	return out, err
}

// AssistantVersions implements [AssistantStore].
func (s *SQLiteStore) AssistantVersions(ctx context.Context, owner, id string) ([]*Assistant, error) {
	err := s.db.QueryRowContext(ctx, `SELECT owner FROM agentserver_assistants WHERE id = ? AND owner = ?`, id, owner).Scan(&owner)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("assistant %s: %w", id, ErrNotFound)
	}
	if err != nil {
		return nil, err
	}
	rows, err := s.db.QueryContext(ctx, `SELECT doc FROM agentserver_assistant_versions WHERE id = ? ORDER BY version DESC`, id)
	if err != nil {
		return nil, err
	}
	return scanAssistants(rows, owner)
}

// SetAssistantVersion implements [AssistantStore].
func (s *SQLiteStore) SetAssistantVersion(ctx context.Context, owner, id string, version int) (*Assistant, error) {
	var out *Assistant
	err := s.tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE agentserver_assistants SET current = ? WHERE id = ? AND owner = ?
			AND EXISTS (SELECT 1 FROM agentserver_assistant_versions WHERE id = ? AND version = ?)`, version, id, owner, id, version)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("assistant %s version %d: %w", id, version, ErrNotFound)
		}
		out, _, err = loadAssistant(ctx, tx, id)
		return err
	})
	return out, err
}

// DeleteAssistant implements [AssistantStore].
func (s *SQLiteStore) DeleteAssistant(ctx context.Context, owner, id string) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM agentserver_assistants WHERE id = ? AND owner = ?`, id, owner)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return nil
		}
		_, err = tx.ExecContext(ctx, `DELETE FROM agentserver_assistant_versions WHERE id = ?`, id)
		return err
	})
}

// AssistantUsage implements [AssistantStore].
func (s *SQLiteStore) AssistantUsage(ctx context.Context, owner string) (int, int64, error) {
	var n int
	var bytes int64
	err := s.db.QueryRowContext(ctx, `SELECT count(DISTINCT a.id), coalesce(sum(length(CAST(v.doc AS BLOB))), 0) FROM agentserver_assistants a
		JOIN agentserver_assistant_versions v ON v.id = a.id WHERE a.owner = ?`, owner).Scan(&n, &bytes)
	return n, bytes, err
}

// scanAssistants decodes the documents of rows, assistants of owner, and
// closes rows.
func scanAssistants(rows *sql.Rows, owner string) ([]*Assistant, error) {
	defer rows.Close()
	var out []*Assistant
	for rows.Next() {
		var doc string
		if err := rows.Scan(&doc); err != nil {
			return nil, err
		}
		a, err := decodeAssistant(doc, owner)
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, rows.Err()
}
