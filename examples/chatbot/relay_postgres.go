package chatbot

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"go.uber.org/zap"
)

// The relay over PostgreSQL carries answers and stops between instances
// that share Config.Postgres without Config.NATS. Every instance LISTENs on
// one channel (named after Config.PostgresSchema, so that deployments in
// other schemas of the database do not hear it); a forwarded request is a
// NOTIFY on it with a fresh id, every instance hears it, the one running
// the turn serves it and NOTIFYs the reply with the request's id, and the
// others stay silent, as over NATS. A notification missed while an
// instance reconnects its listening connection costs its sender relayWait
// and a 404, as an unknown id does.

// pgRelayPayloadMax bounds a relayed message: PostgreSQL refuses NOTIFY
// payloads of 8000 bytes or more.
const pgRelayPayloadMax = 7900

// pgRelayPending bounds the requests this instance waits on at once.
const pgRelayPending = 4096

// pgRelayMessage is one NOTIFY on the relay channel: a request (Request
// set) or the reply to request ID (Reply set).
type pgRelayMessage struct {
	ID      string          `json:"id"`
	Request json.RawMessage `json:"request,omitempty"`
	Reply   json.RawMessage `json:"reply,omitempty"`
}

// pgRelay is an instance's end of the relay over PostgreSQL.
type pgRelay struct {
	pool    *pgxpool.Pool
	channel string
	serve   func(req []byte) (reply []byte, ok bool)
	log     *zap.Logger

	mu      sync.Mutex
	pending map[string]chan []byte // request id -> its reply

	cancel context.CancelFunc
	done   chan struct{}
	ready  chan struct{} // closed once the first LISTEN holds
	failed error         // the first LISTEN's failure, read after done
}

// pgRelayChannel is the relay channel of schema: a hash, so that any
// schema name makes a channel name PostgreSQL keeps whole.
func pgRelayChannel(schema string) string {
	h := sha256.Sum256([]byte(schema))
	return "chatbot_relay_" + hex.EncodeToString(h[:12])
}

// startPGRelay starts listening on the relay channel; it returns once the
// first LISTEN holds, so that requests sent after it are heard, or with
// that LISTEN's failure. Stop it with close.
func startPGRelay(ctx context.Context, pool *pgxpool.Pool, schema string, log *zap.Logger, serve func([]byte) ([]byte, bool)) (*pgRelay, error) {
	lctx, cancel := context.WithCancel(context.Background())
	r := &pgRelay{pool: pool, channel: pgRelayChannel(schema), serve: serve, log: log,
		pending: make(map[string]chan []byte), cancel: cancel, done: make(chan struct{}), ready: make(chan struct{})}
	go r.listen(lctx)
	select {
	case <-r.ready:
		return r, nil
	case <-r.done:
		cancel()
		return nil, fmt.Errorf("chatbot: relay over Config.Postgres: LISTEN %s: %w", r.channel, r.failed)
	case <-ctx.Done():
		cancel()
		<-r.done
		return nil, fmt.Errorf("chatbot: relay over Config.Postgres: LISTEN %s: %w", r.channel, ctx.Err())
	}
}

// close stops listening and waits for the listener to end.
func (r *pgRelay) close() {
	r.cancel()
	<-r.done
}

// listen holds a connection LISTENing on the channel, reconnecting with a
// growing pause (up to 5s) when it is lost, until ctx ends. When the first
// LISTEN fails, it sets r.failed and ends.
func (r *pgRelay) listen(ctx context.Context) {
	defer close(r.done)
	listened := false
	readyOnce := sync.OnceFunc(func() { listened = true; close(r.ready) })
	pause := 100 * time.Millisecond
	for ctx.Err() == nil {
		err := r.listenOnce(ctx, readyOnce)
		if ctx.Err() != nil {
			return
		}
		if !listened {
			r.failed = err
			return
		}
		r.log.Warn("chatbot: the relay's PostgreSQL connection was lost; answers and stops relayed meanwhile are not heard", zap.Error(err))
		select {
		case <-ctx.Done():
			return
		case <-time.After(pause):
		}
		pause = min(2*pause, 5*time.Second)
	}
}

// listenOnce LISTENs on a connection of its own (not one of the pool's,
// which the stores share) until it fails or ctx ends.
func (r *pgRelay) listenOnce(ctx context.Context, ready func()) error {
	conn, err := pgx.ConnectConfig(ctx, r.pool.Config().ConnConfig.Copy())
	if err != nil {
		return err
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_ = conn.Close(cctx)
		cancel()
	}()
	if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{r.channel}.Sanitize()); err != nil {
		return err
	}
	ready()
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		r.receive(ctx, []byte(n.Payload))
	}
}

// receive takes one notification: a reply goes to the request waiting for
// it; a request is served, and its reply sent, when this instance runs
// its turn.
func (r *pgRelay) receive(ctx context.Context, payload []byte) {
	var m pgRelayMessage
	if err := json.Unmarshal(payload, &m); err != nil || m.ID == "" {
		return
	}
	if m.Reply != nil {
		r.mu.Lock()
		ch := r.pending[m.ID]
		delete(r.pending, m.ID)
		r.mu.Unlock()
		if ch != nil {
			ch <- m.Reply // buffered: one reply per request
		}
		return
	}
	reply, ok := r.serve(m.Request)
	if !ok {
		return
	}
	if err := r.notify(ctx, pgRelayMessage{ID: m.ID, Reply: reply}); err != nil {
		r.log.Warn("chatbot: replying to a relayed request failed", zap.Error(err))
	}
}

func (r *pgRelay) notify(ctx context.Context, m pgRelayMessage) error {
	data, err := json.Marshal(m)
	if err != nil {
		return err
	}
	if len(data) > pgRelayPayloadMax {
		return errPGRelayTooLarge
	}
	_, err = r.pool.Exec(ctx, "SELECT pg_notify($1, $2)", r.channel, string(data))
	return err
}

// errPGRelayTooLarge is a request too large for a NOTIFY.
var errPGRelayTooLarge = &RequestError{Field: "content",
	Reason: fmt.Sprintf("too large to relay to the instance running the turn over PostgreSQL (at most about %d bytes); answer on that instance, or set Config.NATS", pgRelayPayloadMax)}

// request sends req to every instance and returns the reply of the one
// that served it; errPGRelayNoReply when none did before ctx ended.
func (r *pgRelay) request(ctx context.Context, req []byte) ([]byte, error) {
	var b [16]byte
	_, _ = rand.Read(b[:])
	id := hex.EncodeToString(b[:])
	ch := make(chan []byte, 1)
	r.mu.Lock()
	if len(r.pending) >= pgRelayPending {
		r.mu.Unlock()
		return nil, fmt.Errorf("chatbot: %d relayed requests already wait for their replies; try again", pgRelayPending)
	}
	r.pending[id] = ch
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		delete(r.pending, id)
		r.mu.Unlock()
	}()
	if err := r.notify(ctx, pgRelayMessage{ID: id, Request: req}); err != nil {
		if errors.Is(err, errPGRelayTooLarge) {
			return nil, err
		}
		return nil, fmt.Errorf("chatbot: relaying over Config.Postgres: %w", err)
	}
	select {
	case rep := <-ch:
		return rep, nil
	case <-ctx.Done():
		return nil, errPGRelayNoReply
	}
}

// errPGRelayNoReply is a relayed request no instance served in time.
var errPGRelayNoReply = errors.New("chatbot: no instance took the relayed request")
