package postgrestest

import (
	"context"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// MaxSQLKeys bounds the distinct statements a [Counter] counts apart in
// [Counts].SQL: the statements of the code under test are a fixed set, far
// fewer; any beyond the bound are counted under [OtherSQL].
const MaxSQLKeys = 256

// OtherSQL is the key of [Counts].SQL that counts the statements sent once
// [MaxSQLKeys] others had their own keys.
const OtherSQL = "(other statements)"

// Counts is what a pool sent PostgreSQL, as a [Counter] counts it.
type Counts struct {
	// Trips counts the round trips the tracer sees: a query, or a batch
	// (however many statements it holds).
	Trips int
	// Statements counts the statements: a query is one, a batch as many
	// as it holds.
	Statements int
	// Txs counts the transactions: a BEGIN (or START TRANSACTION), each
	// query sent outside a transaction, and each batch's statements sent
	// outside one (PostgreSQL runs the statements of a batch up to its
	// end, or up to a BEGIN, as one implicit transaction).
	Txs int
	// Writes counts the writes to the connections' sockets, when they
	// were opened with [Counter.Dial]: the round trips the tracer sees,
	// and those pgx makes unseen by it (to prepare a statement it has no
	// cached plan for, to deallocate one, or to ping the server).
	Writes int
	// Apart counts the statements the Counter's Apart function picked
	// out, counted nowhere else.
	Apart int
	// SQL counts the statements by their first six words.
	SQL map[string]int
}

// String lists the counts and the statements sent, most sent first, one
// a line, for a test's failure message.
func (c Counts) String() string {
	keys := make([]string, 0, len(c.SQL))
	for k := range c.SQL {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int {
		if d := c.SQL[b] - c.SQL[a]; d != 0 {
			return d
		}
		return strings.Compare(a, b)
	})
	var b strings.Builder
	fmt.Fprintf(&b, "%d round trips, %d statements, %d transactions, %d writes", c.Trips, c.Statements, c.Txs, c.Writes)
	if c.Apart > 0 {
		fmt.Fprintf(&b, ", %d statements apart", c.Apart)
	}
	b.WriteString("; sent:")
	for _, k := range keys {
		fmt.Fprintf(&b, "\n\t%3d  %s", c.SQL[k], k)
	}
	return b.String()
}

// Counter counts what a pool sends PostgreSQL: round trips, statements,
// transactions and socket writes (see [Counts]). It implements
// [pgx.QueryTracer] and [pgx.BatchTracer]: set it as the pool's
// ConnConfig.Tracer, and its Dial method as ConnConfig.DialFunc to count
// writes, or open the pool with [CountedPool]. The zero Counter is ready
// to use; it is safe for concurrent use, and must not be copied after
// first use.
type Counter struct {
	// Apart, if set, picks out statements, by their SQL, to be counted in
	// Counts.Apart only: not as round trips, statements or transactions,
	// nor in Counts.SQL (a batch that holds one is still a round trip).
	// Their socket writes are counted all the same. A test sets it
	// before the pool's first statement.
	Apart func(sql string) bool

	mu  sync.Mutex
	cur Counts
	// inTx holds the connections inside a transaction a BEGIN opened:
	// at most the connections the pool has open, and those it closed
	// inside one.
	inTx map[*pgx.Conn]bool
	// batch holds the connections sending a batch, true once the batch
	// opened an implicit transaction (a statement outside a BEGIN's).
	batch map[*pgx.Conn]bool
}

// Take returns the counts since the last Take (or since the Counter's
// first use), and starts counting afresh. Which connections are inside a
// transaction is remembered across it.
func (c *Counter) Take() Counts {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := c.cur
	c.cur = Counts{}
	if out.SQL == nil {
		out.SQL = map[string]int{}
	}
	return out
}

// Snapshot returns the counts since the last [Counter.Take], leaving them
// be: the difference of two snapshots counts what was sent between them.
func (c *Counter) Snapshot() Counts {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := c.cur
	out.SQL = make(map[string]int, len(c.cur.SQL))
	for k, v := range c.cur.SQL {
		out.SQL[k] = v
	}
	return out
}

// Dial opens a connection whose writes c counts, as a net.Dialer would;
// it fits pgconn.Config.DialFunc.
func (c *Counter) Dial(ctx context.Context, network, addr string) (net.Conn, error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	return &countedConn{Conn: conn, c: c}, nil
}

// countedConn is a net.Conn whose writes its Counter counts.
type countedConn struct {
	net.Conn
	c *Counter
}

func (cc *countedConn) Write(p []byte) (int, error) {
	cc.c.mu.Lock()
	cc.c.cur.Writes++
	cc.c.mu.Unlock()
	return cc.Conn.Write(p)
}

// TraceQueryStart implements [pgx.QueryTracer]: a query is a round trip of
// one statement.
func (c *Counter) TraceQueryStart(ctx context.Context, conn *pgx.Conn, data pgx.TraceQueryStartData) context.Context {
	if c.Apart != nil && c.Apart(data.SQL) {
		c.mu.Lock()
		c.cur.Apart++
		c.mu.Unlock()
		return ctx
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.cur.Trips++
	c.statement(conn, data.SQL)
	return ctx
}

// TraceQueryEnd implements [pgx.QueryTracer]; it counts nothing.
func (c *Counter) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// TraceBatchStart implements [pgx.BatchTracer]: a batch is a round trip.
func (c *Counter) TraceBatchStart(ctx context.Context, conn *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.cur.Trips++
	if c.batch == nil {
		c.batch = map[*pgx.Conn]bool{}
	}
	c.batch[conn] = false
	return ctx
}

// TraceBatchQuery implements [pgx.BatchTracer]: each statement of a batch
// counts.
func (c *Counter) TraceBatchQuery(_ context.Context, conn *pgx.Conn, data pgx.TraceBatchQueryData) {
	if c.Apart != nil && c.Apart(data.SQL) {
		c.mu.Lock()
		c.cur.Apart++
		c.mu.Unlock()
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.statement(conn, data.SQL)
}

// TraceBatchEnd implements [pgx.BatchTracer]; it counts nothing, and
// ends the batch's implicit transaction, if any.
func (c *Counter) TraceBatchEnd(_ context.Context, conn *pgx.Conn, _ pgx.TraceBatchEndData) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.batch, conn)
}

// statement counts one statement sent on conn; c.mu is held.
func (c *Counter) statement(conn *pgx.Conn, sql string) {
	c.cur.Statements++
	key := firstWords(sql)
	if c.cur.SQL == nil {
		c.cur.SQL = map[string]int{}
	}
	if _, ok := c.cur.SQL[key]; !ok && len(c.cur.SQL) >= MaxSQLKeys {
		key = OtherSQL
	}
	c.cur.SQL[key]++
	switch txControl(sql) {
	case txBegin:
		if c.inTx == nil {
			c.inTx = map[*pgx.Conn]bool{}
		}
		c.inTx[conn] = true
		if !c.batch[conn] { // a BEGIN in a batch's implicit transaction makes it explicit
			c.cur.Txs++
		}
	case txEnd:
		delete(c.inTx, conn)
		if _, ok := c.batch[conn]; ok {
			c.batch[conn] = false // what follows in the batch is a new transaction
		}
	default:
		if c.inTx[conn] {
			break
		}
		implicit, inBatch := c.batch[conn]
		switch {
		case !inBatch:
			c.cur.Txs++
		case !implicit:
			c.batch[conn] = true
			c.cur.Txs++
		}
	}
}

// firstWords returns the first six words of sql, separated by a space.
func firstWords(sql string) string {
	f := strings.Fields(sql)
	if len(f) > 6 {
		f = f[:6]
	}
	return strings.Join(f, " ")
}

const (
	txNone = iota
	txBegin
	txEnd
)

// txControl tells whether sql begins a transaction (BEGIN, with or
// without options, as pgx's Begin sends it, or START TRANSACTION), ends
// one (COMMIT, END, ROLLBACK, ABORT; not ROLLBACK TO a savepoint, nor the
// COMMIT or ROLLBACK of a prepared transaction), or neither. A COMMIT or
// ROLLBACK AND CHAIN begins the transaction that follows it.
func txControl(sql string) int {
	f := strings.Fields(strings.ToLower(strings.TrimRight(strings.TrimSpace(sql), "; \t\n")))
	if len(f) == 0 {
		return txNone
	}
	switch f[0] {
	case "begin":
		return txBegin
	case "start":
		if len(f) > 1 && f[1] == "transaction" {
			return txBegin
		}
	case "commit", "end", "rollback", "abort":
		if len(f) > 1 && f[1] != "work" && f[1] != "transaction" && f[1] != "and" {
			return txNone // ROLLBACK TO, COMMIT PREPARED, ROLLBACK PREPARED
		}
		if f[len(f)-1] == "chain" && f[len(f)-2] == "and" {
			return txBegin // AND CHAIN: a new transaction follows at once
		}
		return txEnd
	}
	return txNone
}

// TracedPool opens a pool on the test server ([DSN]) whose connections
// report to tr, set up further by tune (if not nil), and closed when the
// test ends. It does not check that the server answers: a test calls
// [Schema] first, which skips it when none does.
func TracedPool(t testing.TB, tr pgx.QueryTracer, tune func(*pgxpool.Config)) *pgxpool.Pool {
	t.Helper()
	cfg, err := pgxpool.ParseConfig(DSN())
	if err != nil {
		t.Fatalf("AGENTGRAPH_TEST_POSTGRES %q: %v; set it to a PostgreSQL DSN", DSN(), err)
	}
	cfg.ConnConfig.Tracer = tr
	if tune != nil {
		tune(cfg)
	}
	pool, err := pgxpool.NewWithConfig(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return pool
}

// CountedPool is [TracedPool] with c as the tracer and c's Dial as the
// connections' DialFunc: c counts the pool's socket writes too.
func CountedPool(t testing.TB, c *Counter, tune func(*pgxpool.Config)) *pgxpool.Pool {
	t.Helper()
	return TracedPool(t, c, func(cfg *pgxpool.Config) {
		cfg.ConnConfig.DialFunc = c.Dial
		if tune != nil {
			tune(cfg)
		}
	})
}
