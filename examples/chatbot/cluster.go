package chatbot

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"net/http"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"go.uber.org/zap"

	"github.com/agentgraph/agentgraph/event"
	"github.com/agentgraph/agentgraph/event/natsbus"
	pgevent "github.com/agentgraph/agentgraph/event/postgres"
	"github.com/agentgraph/agentgraph/event/sse"
	"github.com/agentgraph/agentgraph/examples/chatbot/chatevent"
)

// relayWait bounds how long an instance waits for another to take a
// relayed answer or stop: the instance running the turn answers at once,
// the others stay silent, so an unknown id costs this long.
const relayWait = 2 * time.Second

// cluster is what lets instances sharing Config.Postgres serve one set
// of conversations: the journal that keeps resumable turns' events for
// any instance to replay (an event.Journal: natsbus.Journal over
// Config.NATS, or event/postgres's journal on Config.Postgres without
// it, each with the writers' leases), and the relay through which an
// answer to a question, or a stop, reaches the instance running the turn:
// over NATS with Config.NATS, over PostgreSQL's LISTEN/NOTIFY without it
// (see pgRelay).
type cluster struct {
	bot     *Bot
	nc      *nats.Conn // nil without Config.NATS: pgr relays
	journal event.Journal
	relay   *nats.Subscription
	subject string   // the relay's subject
	pgr     *pgRelay // the relay without Config.NATS
	// heartbeat is the interval of serveResume's heartbeat comments,
	// sse.DefaultHeartbeat: well below a client's idle timeout.
	heartbeat time.Duration
}

// relayRequest is a request relayed to the instance running a turn.
type relayRequest struct {
	Kind      string                        `json:"kind"` // "answer" or "stop"
	Principal string                        `json:"principal"`
	RequestID string                        `json:"request_id,omitempty"` // stop
	Response  chatevent.ElicitationResponse `json:"response,omitempty"`   // answer
}

// relayReply is the running instance's reply: empty Error when done.
type relayReply struct {
	Error string `json:"error,omitempty"`
	Field string `json:"field,omitempty"` // a *RequestError's field
	Ended bool   `json:"ended,omitempty"` // a stop found the turn already ended
}

// openCluster opens the journal of resumable turns, and the relay over
// Config.NATS, when the bot keeps its stores in PostgreSQL.
func (b *Bot) openCluster(ctx context.Context) error {
	switch b.cfg.TurnJournal {
	case "", "nats", "postgres":
	default:
		return fmt.Errorf("chatbot: Config.TurnJournal %q: use \"nats\", \"postgres\" or leave it empty", b.cfg.TurnJournal)
	}
	if b.cfg.TurnJournal == "nats" && b.cfg.NATS == "" {
		return errors.New("chatbot: Config.TurnJournal \"nats\" needs Config.NATS; set it, or use \"postgres\"")
	}
	if b.cfg.TurnJournal == "postgres" && b.cfg.Postgres == "" {
		return errors.New("chatbot: Config.TurnJournal \"postgres\" needs Config.Postgres; set it")
	}
	if b.cfg.NATS == "" {
		if b.cfg.Postgres == "" {
			return nil
		}
		return b.openPostgresJournal(ctx)
	}
	if b.cfg.Postgres == "" {
		return errors.New("chatbot: Config.NATS needs Config.Postgres: instances can only share conversations kept in PostgreSQL")
	}
	if !idPattern.MatchString(b.cfg.NATSPrefix) || strings.ContainsAny(b.cfg.NATSPrefix, ".:") {
		return fmt.Errorf("chatbot: Config.NATSPrefix %q: use letters, digits, '_' and '-'", b.cfg.NATSPrefix)
	}
	nc, err := nats.Connect(b.cfg.NATS, nats.Name("agentgraph-chatbot"), nats.Timeout(5*time.Second))
	if err != nil {
		return fmt.Errorf("chatbot: Config.NATS: connecting to %s: %w (is nats-server running with JetStream, -js?)", b.cfg.NATS, err)
	}
	b.closers = append(b.closers, func(context.Context) error { nc.Close(); return nil })
	b.stores.servers = append(b.stores.servers, serverCheck{name: "nats", ping: func(ctx context.Context) error {
		if !nc.IsConnected() {
			return fmt.Errorf("not connected to %s (%s)", b.cfg.NATS, nc.Status())
		}
		return nil
	}})
	c := &cluster{bot: b, nc: nc, subject: b.cfg.NATSPrefix + ".relay", heartbeat: sse.DefaultHeartbeat}
	if b.cfg.TurnJournal == "postgres" {
		if c.journal, err = b.newPostgresJournal(ctx); err != nil {
			return err
		}
	} else {
		j, err := natsbus.NewJournal(ctx, natsbus.JournalConfig{
			Conn: nc, Stream: b.cfg.NATSPrefix + "-turns", Lease: b.cfg.InstanceLease,
			MaxAge: b.cfg.TurnTimeout + b.cfg.ResumeLinger, MaxEvents: b.cfg.ResumeReplay,
			Logger: b.log, // payloads stay event.Raw: written back as they came
		})
		if err != nil {
			return fmt.Errorf("chatbot: Config.NATS: %w", err)
		}
		c.journal = j
		b.closers = append(b.closers, func(context.Context) error { return j.Close() })
	}
	c.relay, err = nc.Subscribe(c.subject, c.handle)
	if err != nil {
		return fmt.Errorf("chatbot: Config.NATS: subscribing to %s: %w", c.subject, err)
	}
	if err := nc.FlushTimeout(5 * time.Second); err != nil {
		return fmt.Errorf("chatbot: Config.NATS: %w", err)
	}
	b.closers = append(b.closers, func(context.Context) error { return c.relay.Unsubscribe() })
	b.cluster = c
	return nil
}

// openPostgresJournal opens the cluster without NATS: resumable turns
// are journaled in PostgreSQL, and answers and stops relayed over its
// LISTEN/NOTIFY.
func (b *Bot) openPostgresJournal(ctx context.Context) error {
	j, err := b.newPostgresJournal(ctx)
	if err != nil {
		return err
	}
	c := &cluster{bot: b, journal: j, heartbeat: sse.DefaultHeartbeat}
	c.pgr, err = startPGRelay(ctx, b.pg, b.cfg.PostgresSchema, b.log, c.serveRelay)
	if err != nil {
		return err
	}
	b.closers = append(b.closers, func(context.Context) error { c.pgr.close(); return nil })
	b.cluster = c
	return nil
}

// newPostgresJournal opens the journal of resumable turns in
// Config.Postgres (table names chatbot_turns_*), closed with the bot.
func (b *Bot) newPostgresJournal(ctx context.Context) (event.Journal, error) {
	j, err := pgevent.NewJournal(ctx, pgevent.JournalConfig{
		Pool: b.pg, Schema: b.cfg.PostgresSchema, Name: "chatbot_turns", Lease: b.cfg.InstanceLease,
		MaxAge: b.cfg.TurnTimeout + b.cfg.ResumeLinger, MaxEvents: b.cfg.ResumeReplay,
		Logger: b.log, // payloads stay event.Raw: written back as they came
	})
	if err != nil {
		return nil, fmt.Errorf("chatbot: turn journal in Config.Postgres: %w", err)
	}
	b.closers = append(b.closers, func(context.Context) error { return j.Close() })
	return j, nil
}

// journalKey is the journal key of principal's turn requestID: a hash,
// so that another principal's request with the same id names another key.
func journalKey(principal, requestID string) string {
	h := sha256.Sum256([]byte(principal + "\x00" + requestID))
	return hex.EncodeToString(h[:24])
}

// tee yields events and appends to key's journal each that the stream
// took (yield returned true), so that the journal and the stream hold the
// same events and number what follows them alike; sent is called after
// each successful append: the journal delivers the event to clients on
// other instances, so the stream need not wait for a local one. A
// failure of events is journaled as the stream_failed error event the
// local clients get. A journal failure is logged: the turn goes on.
func (c *cluster) tee(ctx context.Context, key string, events iter.Seq2[event.Event, error], sent func()) iter.Seq2[event.Event, error] {
	return func(yield func(event.Event, error) bool) {
		var last event.Event
		for ev, err := range events {
			if err != nil {
				fail := event.Event{Type: event.TypeError, RequestID: last.RequestID, Seq: last.Seq + 1, Time: time.Now(),
					Payload: event.Error{Code: "stream_failed", Message: "the run stopped before it finished"}}
				c.append(ctx, key, fail)
				yield(ev, err)
				return
			}
			if !yield(ev, nil) {
				return
			}
			last = ev
			if c.append(ctx, key, ev) {
				sent()
			}
		}
	}
}

// append appends ev to key's journal and reports whether it did; a
// failure is logged.
func (c *cluster) append(ctx context.Context, key string, ev event.Event) bool {
	if err := c.journal.Append(context.WithoutCancel(ctx), key, ev); err != nil {
		c.bot.log.Warn("chatbot: journaling a turn's event failed; a client resuming it on another instance misses it",
			zap.String("request_id", ev.RequestID), zap.Uint64("seq", ev.Seq), zap.Error(err))
		return false
	}
	return true
}

// unused fails with the error of a reused request id when the journal
// holds key, requestID's turn: one that ran on another instance, or on
// this one before its ResumeLinger ended. When the journal cannot tell,
// the turn goes on (its events are not journaled either): that is logged.
func (c *cluster) unused(ctx context.Context, key, requestID string) error {
	has, err := c.journal.Has(ctx, key)
	if err != nil {
		c.bot.log.Warn("chatbot: checking a resumable turn's request id in the journal failed; a reused id may mix two turns' events on other instances",
			zap.String("request_id", requestID), zap.Error(err))
		return nil
	}
	if has {
		return errRequestIDUsed(requestID)
	}
	return nil
}

// end marks key's turn ended in the journal.
func (c *cluster) end(key string) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := c.journal.End(ctx, key); err != nil {
		c.bot.log.Warn("chatbot: ending a turn's journal failed; clients resuming it elsewhere get instance_lost", zap.Error(err))
	}
}

// serveResume serves GET /api/v1/chat/stream/{request_id} for a turn this
// instance does not hold, from the journal: the events after Last-Event-ID
// and those still to come, with heartbeat comments while it waits for
// them, ending with an error event with code "instance_lost" when the
// instance running the turn stopped. A journaled event that cannot be
// encoded is sent as an error event with code "unencodable_event".
func (c *cluster) serveResume(w http.ResponseWriter, r *http.Request, principal, id string) {
	b := c.bot
	after, ok := lastEventID(r)
	if !ok {
		b.writeError(w, r, &RequestError{Field: "Last-Event-ID", Reason: "must be an event id of the stream (a sequence number)"})
		return
	}
	key := journalKey(principal, id)
	has, err := c.journal.Has(r.Context(), key)
	if err != nil {
		b.writeError(w, r, err)
		return
	}
	if !has {
		b.writeError(w, r, fmt.Errorf("%w: %q (only turns sent with \"resumable\": true can be resumed, until %s after they end)", ErrUnknownStream, id, b.cfg.ResumeLinger))
		return
	}
	// The journal is read on a goroutine of its own, so that heartbeats go
	// out while it waits for the turn's next event: a quiet turn (a slow
	// tool, an elicitation waiting for a person) must not look like a dead
	// connection to the client (sse.FollowConfig.IdleTimeout).
	ctx, cancel := context.WithCancel(r.Context())
	type read struct {
		ev  event.Event
		err error
	}
	reads, readDone := make(chan read), make(chan struct{})
	go func() {
		defer close(readDone)
		defer close(reads)
		for ev, err := range c.journal.Read(ctx, key, after) {
			select {
			case reads <- read{ev, err}:
			case <-ctx.Done():
				return
			}
		}
	}()
	defer func() { cancel(); <-readDone }()
	heartbeat := time.NewTicker(c.heartbeat)
	defer heartbeat.Stop()
	w.Header().Set("X-Request-ID", id)
	sw := sse.NewWriter(w, sse.Config{})
	if err := sw.Start(); err != nil { // the client sees the stream open while the turn waits
		return
	}
	last := after
	for {
		var rd read
		select {
		case <-heartbeat.C:
			if sw.Heartbeat() != nil {
				return
			}
			continue
		case got, ok := <-reads:
			if !ok {
				return
			}
			rd = got
		}
		if err := rd.err; err != nil {
			if r.Context().Err() != nil {
				return
			}
			code, msg := "stream_failed", "the turn's stream could not be read; resume it again"
			if errors.Is(err, event.ErrWriterLost) {
				code = "instance_lost"
				msg = fmt.Sprintf("chatbot: the instance running this turn stopped (no heartbeat for %s, Config.InstanceLease); the turn failed, send the message again", b.cfg.InstanceLease)
			} else {
				b.log.Warn("chatbot: reading a turn's journal failed", zap.String("request_id", id), zap.Error(err))
			}
			_ = sw.WriteEvent(event.Event{Type: event.TypeError, RequestID: id, Seq: last + 1, Time: time.Now(),
				Payload: event.Error{Code: code, Message: msg}})
			return
		}
		ev := rd.ev
		if err := sw.WriteEvent(ev); err != nil {
			// An event that cannot be encoded (a type an older version
			// journaled with a line break) leaves nothing written: an
			// error event with its id takes its place, so the client
			// goes on past it rather than asking for it again and again.
			// When the client is gone this write fails too.
			if sw.WriteEvent(event.Event{Type: event.TypeError, RequestID: id, Seq: ev.Seq, Time: ev.Time, Payload: event.Error{
				Code: "unencodable_event", Message: "an event of type " + string(ev.Type) + " could not be encoded",
			}}) != nil {
				return
			}
			b.log.Error("chatbot: a journaled event cannot be encoded; sent an error event in its place",
				zap.String("request_id", id), zap.Uint64("seq", ev.Seq), zap.Error(err))
		}
		last = ev.Seq
	}
}

// forward relays req to the instance running its turn, and returns what
// that instance answered, or ErrUnknownElicitation or ErrUnknownStream
// when no instance took it within relayWait.
func (c *cluster) forward(ctx context.Context, req relayRequest) error {
	unknown := ErrUnknownElicitation
	if req.Kind == "stop" {
		unknown = ErrUnknownStream
	}
	data, err := json.Marshal(req)
	if err != nil {
		return err
	}
	rctx, cancel := context.WithTimeout(ctx, relayWait)
	defer cancel()
	var reply []byte
	switch {
	case c.nc != nil:
		m, err := c.nc.RequestWithContext(rctx, c.subject, data)
		if err != nil {
			if ctx.Err() == nil && (errors.Is(err, context.DeadlineExceeded) || errors.Is(err, nats.ErrNoResponders) || errors.Is(err, nats.ErrTimeout)) {
				return unknown
			}
			return fmt.Errorf("chatbot: relaying to the instance running the turn: %w", err)
		}
		reply = m.Data
	case c.pgr != nil:
		reply, err = c.pgr.request(rctx, data)
		if errors.Is(err, errPGRelayNoReply) && ctx.Err() == nil {
			return unknown
		}
		if err != nil {
			return err
		}
	default:
		return unknown
	}
	var rep relayReply
	if err := json.Unmarshal(reply, &rep); err != nil {
		return fmt.Errorf("chatbot: the instance running the turn replied %q: %w", reply, err)
	}
	switch {
	case rep.Error == "":
		return nil
	case rep.Ended:
		return ErrTurnEnded
	case rep.Field != "":
		return &RequestError{Field: rep.Field, Reason: rep.Error}
	}
	return errors.New(rep.Error)
}

// handle serves a request relayed over NATS when this instance runs its
// turn, and stays silent otherwise.
func (c *cluster) handle(m *nats.Msg) {
	data, ok := c.serveRelay(m.Data)
	if !ok {
		return
	}
	if err := m.Respond(data); err != nil {
		c.bot.log.Warn("chatbot: replying to a relayed request failed", zap.Error(err))
	}
}

// serveRelay serves a relayed request (a relayRequest in JSON) when this
// instance runs its turn, returning the relayReply to send back; ok is
// false, and nothing is to be sent, otherwise.
func (c *cluster) serveRelay(data []byte) (reply []byte, ok bool) {
	var req relayRequest
	if err := json.Unmarshal(data, &req); err != nil || !idPattern.MatchString(req.Principal) {
		return nil, false
	}
	var err error
	switch req.Kind {
	case "answer":
		err = c.bot.respondHere(req.Principal, req.Response)
		if errors.Is(err, ErrUnknownElicitation) {
			return nil, false
		}
	case "stop":
		found, running := c.bot.streams.stop(scoped(req.Principal, req.RequestID))
		if !found {
			return nil, false
		}
		if !running {
			reply, _ = json.Marshal(relayReply{Error: ErrTurnEnded.Error(), Field: "request_id", Ended: true})
			return reply, true
		}
	default:
		return nil, false
	}
	var rep relayReply
	var re *RequestError
	switch {
	case errors.As(err, &re):
		rep = relayReply{Error: re.Reason, Field: re.Field}
	case err != nil:
		rep = relayReply{Error: err.Error()}
	}
	reply, _ = json.Marshal(rep)
	return reply, true
}
