package postgres

import (
	"strconv"
	"strings"
)

// queries holds the SQL of a Saver, with the schema's tables filled in.
type queries struct {
	// Indexed by byID: [0] reads a thread's latest checkpoint, [1] the
	// checkpoint $2. get reads its record alone.
	get [2]string

	// getOne reads a checkpoint with its blob chains and writes in one
	// statement; indexed by byID as get.
	getOne [2]string
	// putFirst and putNext are a Put in one statement: the first checkpoint
	// of a thread, and a checkpoint whose parent is the thread's latest,
	// known to the Saver (see recent).
	putFirst, putNext string
	// putFirstNoSync and putNextNoSync are putFirst and putNext whose
	// commit does not wait for its WAL flush: set_config with is_local
	// true sets synchronous_commit for the statement's own (implicit)
	// transaction, which commits once the statement is done, so that a
	// Put without the flush wait is one statement too, not a transaction
	// of four (BEGIN, SET LOCAL, the statement, COMMIT). The setting is
	// made only when the statement saves the checkpoint (t has its row):
	// one that saves nothing writes nothing to commit. Their second
	// column is the setting's new value.
	putFirstNoSync, putNextNoSync string
	// putGroup is the one-statement Puts of several threads (each
	// thread at most once) in one statement, each Put saved as
	// putFirst (expect '') or putNext would save it: a Put whose thread
	// is not as remembered saves nothing, and the others are saved. Its
	// rows are the Puts saved, by their position among the parameters'
	// (from 1), with their sequence numbers. It is indexed by the
	// group's kind (groupMixed, groupFirst, groupNext): a group of first
	// checkpoints alone, or of next ones alone, has a statement without
	// the other's part, which PostgreSQL would prepare and run for no
	// row.
	putGroup [3]string
	// groupSettings, indexed by lazy, sets what a group's transaction
	// needs before its statement: its generic plan, and (lazy) a commit
	// that does not wait for its WAL flush.
	groupSettings [2]string

	createThread, advanceThread, parentRefs, idTaken, latest string
	insertCheckpoint, insertBlobs                            string
	touchCheckpoint, deleteTaskWrites, insertWrites          string
	// PutWrites: touchCheckpoint locks the thread of checkpoint $2 and
	// returns the checkpoint's sequence number; deleteTaskWrites and
	// addWrites, sent after it, find the checkpoint by its ID. They lock
	// the thread too (a lock the transaction already holds costs nothing):
	// when the touch, reading an older snapshot, found no checkpoint and
	// took no lock, a checkpoint they find gets no writes while a
	// DeleteThread or Prune holds the lock, nor after either removed it
	// (deleteTaskWrites waits for the lock, so addWrites reads the
	// database as that left it).
	addWrites string
	list      string
	// A page of snapshots: the chains and writes of the checkpoints list
	// selects, with the same parameters.
	pageChains, pageWrites                                         string
	deleteThread, deleteThreadsWrites, deleteThreadsBlobs          string
	deleteThreadsCheckpoints, deleteIdle, longThreads, lockCutoff  string
	deleteOldWrites, deleteOldCheckpoints, threadRefs, blobHeaders string
	deleteBlobs, usage                                             string
}

const checkpointColumns = `checkpoint_id, seq, parent_id, step, refs, body, metadata, created_at`

// pageSelection selects the sequence numbers and references of the
// checkpoints list returns, with its parameters: thread $1, before $2,
// metadata filter $3, limit $4.
const pageSelection = `SELECT seq, refs FROM {checkpoints}
	WHERE thread_id = $1
	AND ($2::text = '' OR seq < (SELECT seq FROM {checkpoints} WHERE thread_id = $1 AND checkpoint_id = $2))
	AND ($3::jsonb IS NULL OR metadata @> $3::jsonb)
	ORDER BY seq DESC LIMIT $4`

// newQueries fills schema (already quoted) into the SQL.
//
// The recursive walks (walk in getOne, pageChains) follow a delta's base only
// when it is older than the delta (w.base < w.writer), as every base Put
// writes is: each step goes to an older blob, so a walk ends after at most
// as many steps as its channel has stored blobs, and damaged data (a loop,
// a delta applying to itself or to a newer blob) stops it instead of making
// it spin until the deadline. chain.Resolve then reports the damage.
func newQueries(schema string) queries {
	r := strings.NewReplacer(
		"{threads}", schema+".agentgraph_threads",
		"{checkpoints}", schema+".agentgraph_checkpoints",
		"{blobs}", schema+".agentgraph_blobs",
		"{writes}", schema+".agentgraph_writes",
		"{cols}", checkpointColumns,
	)
	q := queries{
		createThread: r.Replace(`INSERT INTO {threads} (thread_id, latest_id, seq, touched) VALUES ($1, $2, 1, $3)
			ON CONFLICT (thread_id) DO NOTHING RETURNING seq`),
		advanceThread: r.Replace(`UPDATE {threads} SET latest_id = $2, seq = seq + 1, touched = $3
			WHERE thread_id = $1 AND latest_id = $4 RETURNING seq`),
		parentRefs: r.Replace(`SELECT refs FROM {checkpoints} WHERE thread_id = $1 AND checkpoint_id = $2`),
		idTaken:    r.Replace(`SELECT EXISTS (SELECT 1 FROM {checkpoints} WHERE thread_id = $1 AND checkpoint_id = $2)`),
		latest:     r.Replace(`SELECT latest_id FROM {threads} WHERE thread_id = $1`),
		// insertCheckpoint adds the checkpoint, with its blobs ($10 of $11
		// bytes) and writes ($12 of $13 bytes), to the thread's running
		// totals.
		insertCheckpoint: r.Replace(`WITH c AS (INSERT INTO {checkpoints} (thread_id, seq, checkpoint_id, parent_id, step, refs, body, metadata, created_at)
			VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7, $8::jsonb, $9))
			UPDATE {threads} SET checkpoints = checkpoints + 1, blobs = blobs + $10, blob_bytes = blob_bytes + $11,
			writes = writes + $12, write_bytes = write_bytes + $13 WHERE thread_id = $1`),
		insertBlobs: r.Replace(`INSERT INTO {blobs} (thread_id, writer, channel, kind, base, data)
			SELECT $1, $2, c, k, b, d FROM unnest($3::text[], $4::int2[], $5::int8[], $6::bytea[]) AS u(c, k, b, d)`),
		touchCheckpoint: r.Replace(`UPDATE {threads} AS t SET touched = $3 FROM {checkpoints} AS c
			WHERE t.thread_id = $1 AND c.thread_id = $1 AND c.checkpoint_id = $2 RETURNING c.seq`),
		deleteTaskWrites: r.Replace(`DELETE FROM {writes} WHERE thread_id = $1
			AND EXISTS (SELECT 1 FROM {threads} WHERE thread_id = $1 FOR UPDATE)
			AND checkpoint_seq = (SELECT seq FROM {checkpoints} WHERE thread_id = $1 AND checkpoint_id = $2)
			AND task_id = ANY($3)`),
		addWrites: r.Replace(`WITH w AS (INSERT INTO {writes} (thread_id, checkpoint_seq, task_id, node, channel, value)
			SELECT $1, c.seq, t, n, ch, v
			FROM (SELECT 1 FROM {threads} WHERE thread_id = $1 FOR UPDATE) AS l,
			(SELECT seq FROM {checkpoints} WHERE thread_id = $1 AND checkpoint_id = $2) AS c,
			unnest($3::text[], $4::text[], $5::text[], $6::bytea[]) WITH ORDINALITY AS u(t, n, ch, v, i)
			ORDER BY i
			RETURNING length(value) AS n)
			UPDATE {threads} SET writes = writes + (SELECT count(*) FROM w), write_bytes = write_bytes + (SELECT sum(n) FROM w)
			WHERE thread_id = $1 AND EXISTS (SELECT FROM w)`),
		insertWrites: r.Replace(`INSERT INTO {writes} (thread_id, checkpoint_seq, task_id, node, channel, value)
			SELECT $1, $2, t, n, c, v FROM unnest($3::text[], $4::text[], $5::text[], $6::bytea[]) WITH ORDINALITY AS u(t, n, c, v, i)
			ORDER BY i`),
		get: pick(r, `SELECT {cols} FROM {checkpoints} WHERE {pick}`),
		getOne: pick(r, `WITH RECURSIVE c AS (SELECT {cols} FROM {checkpoints} WHERE {pick}),
			walk AS (`+walk+`)
			SELECT c.checkpoint_id, c.seq, c.parent_id, c.step, c.refs, c.body, c.metadata, c.created_at,
				b.channels, b.writers, b.kinds, b.bases, b.data,
				w.tasks, w.nodes, w.channels, w.vals
			FROM c,
			(SELECT array_agg(channel) AS channels, array_agg(writer) AS writers, array_agg(kind) AS kinds,
				array_agg(base) AS bases, array_agg(data) AS data FROM walk) AS b,
			LATERAL (SELECT array_agg(task_id ORDER BY id) AS tasks, array_agg(node ORDER BY id) AS nodes,
				array_agg(channel ORDER BY id) AS channels, array_agg(value ORDER BY id) AS vals
				FROM {writes} WHERE thread_id = $1 AND checkpoint_seq = c.seq) AS w`),
		putFirst: r.Replace(`WITH t AS (INSERT INTO {threads} (thread_id, latest_id, seq, touched, checkpoints, blobs, blob_bytes, writes, write_bytes)
			VALUES ($1, $2, 1, $3, 1, ` + putTotals(4, "") + `)
			ON CONFLICT (thread_id) DO NOTHING RETURNING seq),` + putTail(4)),
		putNext: r.Replace(`WITH t AS (UPDATE {threads} SET latest_id = $2, seq = seq + 1, touched = $3,
			checkpoints = checkpoints + 1, ` + putTotals(7, "+") + `
			WHERE thread_id = $1 AND latest_id = $4 AND seq = $5
			AND EXISTS (SELECT FROM {checkpoints} WHERE thread_id = $1 AND checkpoint_id = $4 AND refs = $6::jsonb)
			RETURNING seq),` + putTail(7)),
		list: r.Replace(`SELECT {cols} FROM {checkpoints}
			WHERE thread_id = $1
			AND ($2::text = '' OR seq < (SELECT seq FROM {checkpoints} WHERE thread_id = $1 AND checkpoint_id = $2))
			AND ($3::jsonb IS NULL OR metadata @> $3::jsonb)
			ORDER BY seq DESC LIMIT $4`),
		pageChains: r.Replace(`WITH RECURSIVE page AS (` + pageSelection + `),
			walk AS (
				SELECT b.channel, b.writer, b.kind, b.base
				FROM (SELECT DISTINCT r.key, (r.value->>1)::bigint AS writer FROM page, jsonb_each(page.refs) AS r(key, value)) AS s
				JOIN {blobs} AS b ON b.thread_id = $1 AND b.channel = s.key AND b.writer = s.writer
				UNION
				SELECT b.channel, b.writer, b.kind, b.base
				FROM walk AS w
				JOIN {blobs} AS b ON b.thread_id = $1 AND b.channel = w.channel AND b.writer = w.base
				WHERE w.kind = 2 AND w.base > 0 AND w.base < w.writer
			)
			SELECT w.channel, w.writer, w.kind, w.base, b.data
			FROM walk AS w
			JOIN {blobs} AS b ON b.thread_id = $1 AND b.channel = w.channel AND b.writer = w.writer`),
		pageWrites: r.Replace(`WITH page AS (` + pageSelection + `)
			SELECT checkpoint_seq, task_id, node, channel, value FROM {writes}
			WHERE thread_id = $1 AND checkpoint_seq IN (SELECT seq FROM page)
			ORDER BY id`),
		deleteThread:             r.Replace(`DELETE FROM {threads} WHERE thread_id = $1`),
		deleteThreadsWrites:      r.Replace(`DELETE FROM {writes} WHERE thread_id = ANY($1)`),
		deleteThreadsBlobs:       r.Replace(`DELETE FROM {blobs} WHERE thread_id = ANY($1)`),
		deleteThreadsCheckpoints: r.Replace(`DELETE FROM {checkpoints} WHERE thread_id = ANY($1)`),
		deleteIdle: r.Replace(`DELETE FROM {threads} WHERE touched < $1 AND ($2::text = '' OR thread_id = $2)
			RETURNING thread_id`),
		longThreads: r.Replace(`SELECT thread_id FROM {checkpoints} WHERE ($2::text = '' OR thread_id = $2)
			GROUP BY thread_id HAVING count(*) > $1`),
		lockCutoff: r.Replace(`WITH t AS (SELECT thread_id FROM {threads} WHERE thread_id = $1 FOR UPDATE)
			SELECT seq FROM {checkpoints} WHERE thread_id = (SELECT thread_id FROM t)
			ORDER BY seq DESC OFFSET $2 LIMIT 1`),
		deleteOldWrites:      r.Replace(`DELETE FROM {writes} WHERE thread_id = $1 AND checkpoint_seq < $2`),
		deleteOldCheckpoints: r.Replace(`DELETE FROM {checkpoints} WHERE thread_id = $1 AND seq < $2`),
		threadRefs:           r.Replace(`SELECT refs FROM {checkpoints} WHERE thread_id = $1`),
		blobHeaders:          r.Replace(`SELECT channel, writer, base FROM {blobs} WHERE thread_id = $1`),
		deleteBlobs: r.Replace(`DELETE FROM {blobs} AS b USING unnest($2::text[], $3::int8[]) AS u(c, w)
			WHERE b.thread_id = $1 AND b.channel = u.c AND b.writer = u.w`),
		// The running totals the triggers of schema version 3 keep; a
		// thread without a row stores nothing.
		usage: r.Replace(`SELECT checkpoints, blobs, blob_bytes, writes, write_bytes FROM {threads} WHERE thread_id = $1`),
	}
	for kind, parts := range [3][2]string{groupMixed: {groupFirstCTE + groupNextCTE, "SELECT thread_id, seq FROM f UNION ALL SELECT thread_id, seq FROM n"},
		groupFirst: {groupFirstCTE, "SELECT thread_id, seq FROM f"}, groupNext: {groupNextCTE, "SELECT thread_id, seq FROM n"}} {
		q.putGroup[kind] = r.Replace(strings.NewReplacer("{move}", parts[0], "{moved}", parts[1]).Replace(putGroup))
	}
	q.groupSettings = [2]string{
		`SELECT set_config('plan_cache_mode', 'force_generic_plan', true)`,
		`SELECT set_config('plan_cache_mode', 'force_generic_plan', true), set_config('synchronous_commit', 'off', true)`,
	}
	q.putFirstNoSync = noSync(q.putFirst)
	q.putNextNoSync = noSync(q.putNext)
	return q
}

// putGroup is queries.putGroup. Its parameters are arrays with an item
// per Put ($3 excepted: the time the threads are touched): the thread
// ($1), the checkpoint ID ($2), the expected latest checkpoint ($4, ”
// for a thread's first), its sequence number ($5) and references ($6),
// the parent ID ($7), step ($8), references ($9), body ($10), metadata
// ($11) and creation time ($12) of the checkpoint, the counts and bytes
// of its blobs and writes ($13 to $16, added to the thread's running
// totals); then an item per blob ($17 to $21: the position of its Put,
// from 1, its channel, kind, base and data) and per write ($22 to $26:
// the position of its Put, its task, node, channel and value), in
// order. f starts threads, n moves them on (as putNext, whose
// conditions it checks per Put), t is the Puts saved with their new
// sequence numbers.
const putGroup = `WITH p AS (SELECT * FROM unnest($1::text[], $2::text[], $4::text[], $5::int8[], $6::text[], $7::text[], $8::int8[],
		$9::text[], $10::bytea[], $11::text[], $12::timestamptz[], $13::int8[], $14::int8[], $15::int8[], $16::int8[])
		WITH ORDINALITY AS p(thread_id, id, expect, pseq, praw, parent_id, step, refs, body, md, created, nb, bb, nw, wb, i)),
	{move}
	t AS (SELECT p.*, s.seq FROM p JOIN ({moved}) AS s ON s.thread_id = p.thread_id),
	c AS (INSERT INTO {checkpoints} (thread_id, seq, checkpoint_id, parent_id, step, refs, body, metadata, created_at)
		SELECT thread_id, seq, id, parent_id, step, refs::jsonb, body, md::jsonb, created FROM t),
	b AS (INSERT INTO {blobs} (thread_id, writer, channel, kind, base, data)
		SELECT t.thread_id, t.seq, u.c, u.k, u.b, u.d
		FROM unnest($17::int8[], $18::text[], $19::int2[], $20::int8[], $21::bytea[]) AS u(i, c, k, b, d) JOIN t ON t.i = u.i),
	w AS (INSERT INTO {writes} (thread_id, checkpoint_seq, task_id, node, channel, value)
		SELECT t.thread_id, t.seq, u.t, u.n, u.c, u.v
		FROM unnest($22::int8[], $23::text[], $24::text[], $25::text[], $26::bytea[]) WITH ORDINALITY AS u(i, t, n, c, v, o) JOIN t ON t.i = u.i
		ORDER BY u.o)
	SELECT i, seq FROM t`

// The kinds of group (the index of queries.putGroup): first and next
// checkpoints, first ones alone, next ones alone.
const (
	groupMixed = iota
	groupFirst
	groupNext
)

// groupFirstCTE and groupNextCTE are the parts of putGroup that start
// threads (f) and move them on (n). n looks each expected checkpoint up
// in a LATERAL subquery whose LIMIT 1 (the key is unique) keeps it a
// lookup per Put: as a semi-join, the generic plan hashed the references
// of every checkpoint of the table at each group.
const (
	groupFirstCTE = `f AS (INSERT INTO {threads} (thread_id, latest_id, seq, touched, checkpoints, blobs, blob_bytes, writes, write_bytes)
		SELECT thread_id, id, 1, $3, 1, nb, bb, nw, wb FROM p WHERE expect = ''
		ON CONFLICT (thread_id) DO NOTHING RETURNING thread_id, seq),
	`
	groupNextCTE = `n AS (UPDATE {threads} AS h SET latest_id = p.id, seq = h.seq + 1, touched = $3, checkpoints = h.checkpoints + 1,
			blobs = h.blobs + p.nb, blob_bytes = h.blob_bytes + p.bb, writes = h.writes + p.nw, write_bytes = h.write_bytes + p.wb
		FROM p, LATERAL (SELECT x.refs FROM {checkpoints} AS x WHERE x.thread_id = p.thread_id AND x.checkpoint_id = p.expect LIMIT 1) AS x
		WHERE p.expect <> '' AND h.thread_id = p.thread_id AND h.latest_id = p.expect AND h.seq = p.pseq AND x.refs = p.praw::jsonb
		RETURNING h.thread_id, h.seq),
	`
)

// walk is the recursive part of the walk of a checkpoint's blob chains from
// the references of the checkpoint c.
//
// Each blob is looked up by its primary key in a LATERAL subquery whose
// LIMIT 1 (the key is unique) keeps the planner from flattening it into a
// join: as a join, the generic plan a prepared statement settles on read
// every blob of the thread into a hash table (a thread of 200 runs: about
// 90 buffers per read, growing with the thread's history), where a lookup
// per reference reads 2 or 3.
const walk = `SELECT b.channel, b.writer, b.kind, b.base, b.data
	FROM c, jsonb_each(c.refs) AS r(key, value),
	LATERAL (SELECT x.channel, x.writer, x.kind, x.base, x.data FROM {blobs} AS x
		WHERE x.thread_id = $1 AND x.channel = r.key AND x.writer = (r.value->>1)::bigint LIMIT 1) AS b
	UNION ALL
	SELECT b.channel, b.writer, b.kind, b.base, b.data
	FROM walk AS w,
	LATERAL (SELECT x.channel, x.writer, x.kind, x.base, x.data FROM {blobs} AS x
		WHERE x.thread_id = $1 AND x.channel = w.channel AND x.writer = w.base LIMIT 1) AS b
	WHERE w.kind = 2 AND w.base > 0 AND w.base < w.writer`

// putTail is the end of the one-statement Puts, after the CTE t that
// creates or moves the thread and returns the new checkpoint's sequence
// number: the inserts, each of which inserts nothing when t is empty, and
// the final select of that number. Its parameters, from $first on, are
// the parent ID, step, references, body, metadata and creation time of the
// checkpoint, the four columns of the blobs (as insertBlobs) and the four
// of the writes (as insertWrites).
func putTail(first int) string {
	tail := `
		c AS (INSERT INTO {checkpoints} (thread_id, seq, checkpoint_id, parent_id, step, refs, body, metadata, created_at)
			SELECT $1, t.seq, $2, {0}, {1}, {2}::jsonb, {3}, {4}::jsonb, {5} FROM t),
		b AS (INSERT INTO {blobs} (thread_id, writer, channel, kind, base, data)
			SELECT $1, t.seq, u.c, u.k, u.b, u.d FROM t, unnest({6}::text[], {7}::int2[], {8}::int8[], {9}::bytea[]) AS u(c, k, b, d)),
		w AS (INSERT INTO {writes} (thread_id, checkpoint_seq, task_id, node, channel, value)
			SELECT $1, t.seq, u.t, u.n, u.c, u.v FROM t, unnest({10}::text[], {11}::text[], {12}::text[], {13}::bytea[]) WITH ORDINALITY AS u(t, n, c, v, i)
			ORDER BY u.i)
		SELECT seq FROM t`
	for i := 13; i >= 0; i-- {
		tail = strings.ReplaceAll(tail, "{"+strconv.Itoa(i)+"}", "$"+strconv.Itoa(first+i))
	}
	return tail
}

// putTotals is what a one-statement Put adds to its thread's running
// blob and write totals, from the blob data and write values among its
// parameters (putTail's, from $first on): the four values as an INSERT's,
// or, with op "+", as an UPDATE's assignments.
func putTotals(first int, op string) string {
	blobs, data := "$"+strconv.Itoa(first+6), "$"+strconv.Itoa(first+9)
	writes, values := "$"+strconv.Itoa(first+10), "$"+strconv.Itoa(first+13)
	v := []string{
		"cardinality(" + blobs + "::text[])",
		"(SELECT coalesce(sum(length(d)), 0) FROM unnest(" + data + "::bytea[]) AS d)",
		"cardinality(" + writes + "::text[])",
		"(SELECT coalesce(sum(length(d)), 0) FROM unnest(" + values + "::bytea[]) AS d)",
	}
	if op == "" {
		return strings.Join(v, ", ")
	}
	for i, col := range []string{"blobs", "blob_bytes", "writes", "write_bytes"} {
		v[i] = col + " = " + col + " " + op + " " + v[i]
	}
	return strings.Join(v, ", ")
}

// noSync turns a one-statement Put (its final select "SELECT seq FROM
// t") into one whose commit does not wait for its WAL flush.
func noSync(put string) string {
	const last = "SELECT seq FROM t"
	if !strings.HasSuffix(put, last) {
		panic("postgres: a one-statement Put does not end in " + last)
	}
	return strings.TrimSuffix(put, last) + "SELECT seq, set_config('synchronous_commit', 'off', true) FROM t"
}

// pick fills query's {pick} with the selection of a thread's ($1) latest
// checkpoint and with that of its checkpoint $2, giving each its own plan.
func pick(r *strings.Replacer, query string) [2]string {
	q := r.Replace(query)
	return [2]string{
		strings.ReplaceAll(q, "{pick}", `thread_id = $1 AND $2::text = '' ORDER BY seq DESC LIMIT 1`),
		strings.ReplaceAll(q, "{pick}", `thread_id = $1 AND checkpoint_id = $2`),
	}
}
