package sqlstore_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/agentgraph/agentgraph/internal/sqlstore"
)

// rows is a result of ints; err is its error after the last row.
type rows struct {
	vals []int
	i    int
	err  error
}

func (r *rows) Next() bool { r.i++; return r.i <= len(r.vals) }
func (r *rows) Err() error { return r.err }
func (r *rows) Scan(dest ...any) error {
	*dest[0].(*int) = r.vals[r.i-1]
	return nil
}

func scanInt(row sqlstore.Row) (v int, err error) { return v, row.Scan(&v) }

func TestCollect(t *testing.T) {
	got, err := sqlstore.Collect(&rows{vals: []int{3, 1, 2}}, scanInt)
	if err != nil || !slices.Equal(got, []int{3, 1, 2}) {
		t.Errorf("Collect = %v, %v; want [3 1 2]", got, err)
	}
	broken := errors.New("connection lost")
	if _, err := sqlstore.Collect(&rows{vals: []int{1}, err: broken}, scanInt); err != broken {
		t.Errorf("Collect of rows that fail = %v, want their error", err)
	}
	bad := errors.New("bad row")
	n := 0
	_, err = sqlstore.Collect(&rows{vals: []int{1, 2, 3}}, func(sqlstore.Row) (int, error) { n++; return 0, bad })
	if err != bad || n != 1 {
		t.Errorf("Collect with a failing scan = %v after %d rows, want its error after 1", err, n)
	}
}
