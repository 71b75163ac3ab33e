package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
)

// A write statement whose records failed together is written again one
// record at a time only when it stored nothing for certain.
func TestRefusedWhole(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"refused by PostgreSQL", fmt.Errorf("postgres: log write: %w", &pgconn.PgError{Code: "22021", Message: "invalid byte sequence"}), true},
		{"broken while reading the result", fmt.Errorf("postgres: log write: %w", io.ErrUnexpectedEOF), false},
		{"timed out", fmt.Errorf("postgres: log write: %w", context.DeadlineExceeded), false},
		{"some other failure", errors.New("boom"), false},
	} {
		if got := refusedWhole(tc.err); got != tc.want {
			t.Errorf("%s: refusedWhole = %v, want %v", tc.name, got, tc.want)
		}
	}
}
