// Package sqlstore holds what the SQL stores of this module do the same
// way whatever their driver, pgx (internal/pgdb) or database/sql
// (internal/sqlitedb): reading a query's rows into a slice, and a value
// stored as JSON.
package sqlstore

import (
	"encoding/json"
	"errors"
	"fmt"
)

// Row is a row to scan: a pgx.Row, an *sql.Row, or the current row of
// [Rows].
type Row interface {
	Scan(dest ...any) error
}

// Rows is what pgx.Rows and *sql.Rows share.
type Rows interface {
	Row
	Next() bool
	Err() error
}

// Collect returns scan of each of rows, in order, or the first error of
// scan or of rows. It leaves closing rows to the caller.
func Collect[T any](rows Rows, scan func(Row) (T, error)) ([]T, error) {
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// JSON returns the value that the one column of row holds as JSON, or
// zero when there is no row: when Scan returns noRows, the driver's
// sql.ErrNoRows or pgx.ErrNoRows. what names the value in errors.
func JSON[T any](row Row, noRows error, what string, zero T) (T, error) {
	var data []byte
	err := row.Scan(&data)
	if errors.Is(err, noRows) {
		return zero, nil
	}
	if err != nil {
		return zero, err
	}
	var v T
	if err := json.Unmarshal(data, &v); err != nil {
		return zero, fmt.Errorf("decode stored %s: %w", what, err)
	}
	return v, nil
}
