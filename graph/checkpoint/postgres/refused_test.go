package postgres

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
)

// TestRefused: a one-statement Put falls back to putTx on a unique
// violation only (a taken checkpoint ID, which putTx reports); every
// other error is returned.
func TestRefused(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		back bool
	}{
		{"unique violation", &pgconn.PgError{Code: "23505"}, true},
		{"wrapped unique violation", fmt.Errorf("batch: %w", &pgconn.PgError{Code: "23505"}), true},
		{"foreign key violation", &pgconn.PgError{Code: "23503"}, false},
		{"statement timeout", &pgconn.PgError{Code: "57014"}, false},
		{"lock timeout", &pgconn.PgError{Code: "55P03"}, false},
		{"out of memory", &pgconn.PgError{Code: "53200"}, false},
		{"syntax error", &pgconn.PgError{Code: "42601"}, false},
		{"undefined column", &pgconn.PgError{Code: "42703"}, false},
		{"not a PostgreSQL error", context.DeadlineExceeded, false},
	} {
		err := refused(tc.err)
		if tc.back {
			if err != nil {
				t.Errorf("%s: refused = %v; want nil (fall back to putTx)", tc.name, err)
			}
			continue
		}
		if !errors.Is(err, tc.err) {
			t.Errorf("%s: refused = %v; want the error, wrapped", tc.name, err)
		}
	}
}
