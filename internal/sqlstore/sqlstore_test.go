package sqlstore_test

import (
	"errors"
	"slices"
	"strings"
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

// row holds one column of raw bytes, or fails to scan with err.
type row struct {
	data []byte
	err  error
}

func (r row) Scan(dest ...any) error {
	if r.err != nil {
		return r.err
	}
	*dest[0].(*[]byte) = r.data
	return nil
}

// TestJSON decodes a row's JSON, gives zero for no row, and names the
// value when it does not decode.
func TestJSON(t *testing.T) {
	type v struct{ N int }
	noRows := errors.New("no rows")
	if got, err := sqlstore.JSON(row{data: []byte(`{"N":2}`)}, noRows, "thing", v{N: -1}); err != nil || got.N != 2 {
		t.Errorf("JSON = %+v, %v; want N 2", got, err)
	}
	if got, err := sqlstore.JSON(row{err: noRows}, noRows, "thing", v{N: -1}); err != nil || got.N != -1 {
		t.Errorf("JSON of no row = %+v, %v; want the zero given", got, err)
	}
	broken := errors.New("connection lost")
	if _, err := sqlstore.JSON(row{err: broken}, noRows, "thing", v{}); err != broken {
		t.Errorf("JSON of a failed scan = %v, want its error", err)
	}
	_, err := sqlstore.JSON(row{data: []byte(`{`)}, noRows, "thing", v{})
	if err == nil || !strings.HasPrefix(err.Error(), "decode stored thing: ") {
		t.Errorf("JSON of bad data = %v, want decode stored thing: ...", err)
	}
}
