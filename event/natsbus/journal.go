package natsbus

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"iter"
	"regexp"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/zap"

	"github.com/agentgraph/agentgraph/event"
	"github.com/agentgraph/agentgraph/event/internal/resume"
)

// Defaults of [JournalConfig].
const (
	DefaultJournalMaxAge    = 10 * time.Minute
	DefaultJournalMaxEvents = 1024
	DefaultJournalMaxBytes  = 256 << 20
	DefaultJournalLease     = 10 * time.Second
)

// Errors of a [Journal]: the values of package event, so that callers
// test for them the same way whatever the journal.
var (
	// ErrUnknownKey is returned by Read for a key that holds no events:
	// never written, or past the journal's retention. It is
	// [event.ErrUnknownKey].
	ErrUnknownKey = event.ErrUnknownKey
	// ErrWriterLost ends a Read whose key's writer stopped sending
	// heartbeats for JournalConfig.Lease before it ended the key: the
	// process writing it is gone, and no more events will come. It is
	// [event.ErrWriterLost].
	ErrWriterLost = event.ErrWriterLost
)

var _ event.Journal = (*Journal)(nil)

// JournalConfig configures a [Journal].
type JournalConfig struct {
	// URL is the NATS server (JetStream enabled) to dial when Conn is nil.
	// Empty means nats.DefaultURL.
	URL string
	// Conn, if set, is used instead of dialing. The journal does not
	// close it.
	Conn *nats.Conn
	// Stream is the JetStream stream's name and the first token of its
	// subjects: letters, digits, '_' and '-'. Journals of instances that
	// read each other's keys use the same name. Empty means
	// "agentgraph-journal".
	Stream string
	// MaxAge is how long a key's events are kept after they were
	// written. Zero means DefaultJournalMaxAge.
	MaxAge time.Duration
	// MaxEvents is how many of its latest events a key keeps; older ones
	// are dropped (a Read that needed them starts with an events_lost
	// error event). Zero means DefaultJournalMaxEvents.
	MaxEvents int
	// MaxBytes bounds the whole stream; the oldest events go first. Zero
	// means DefaultJournalMaxBytes.
	MaxBytes int64
	// Lease is how long a reader waits without a heartbeat from a key's
	// writer (sent every third of it) before it ends with ErrWriterLost.
	// Zero means DefaultJournalLease.
	Lease time.Duration
	// Decoder decodes the events read into payload structs. Nil means
	// payloads arrive as event.Raw (and event.Error).
	Decoder *event.Decoder
	// Logger receives publishing failures. Nil means no logging.
	Logger *zap.Logger
}

// Journal is an [event.Journal] in NATS: it keeps the events of keyed
// streams (one run, one request) in a JetStream stream, so that any instance can replay a key's events and
// follow it until its writer ends it: a client that lost its connection
// to one instance resumes on another. Each key keeps its latest MaxEvents
// events for MaxAge, within the stream's MaxBytes.
//
// Events are published without waiting for the server's acknowledgement
// (a run is not slowed by the round trip), in order; [Journal.End]
// waits for its own, so once it returns every event before it is stored.
// While a Journal is open it sends a heartbeat every Lease/3, so that a
// reader following a key whose writer died ends with [ErrWriterLost]
// within Lease instead of waiting forever.
//
// A Journal is safe for concurrent use.
type Journal struct {
	cfg    JournalConfig
	log    *zap.Logger
	nc     *nats.Conn
	ownsNC bool
	js     jetstream.JetStream
	id     string // this writer's id, in every message's header
	stop   chan struct{}
	done   sync.WaitGroup
	once   sync.Once
}

// Headers of journal messages.
const (
	hdrWriter = "Agentgraph-Writer"
	hdrEnd    = "Agentgraph-End"
)

var keyPattern = regexp.MustCompile(`^[A-Za-z0-9_-]{1,128}$`)

// NewJournal connects (unless cfg.Conn is set), creates or updates the
// stream and starts the heartbeats.
func NewJournal(ctx context.Context, cfg JournalConfig) (*Journal, error) {
	if cfg.Stream == "" {
		cfg.Stream = "agentgraph-journal"
	}
	if !keyPattern.MatchString(cfg.Stream) {
		return nil, fmt.Errorf("natsbus: JournalConfig.Stream %q: use letters, digits, '_' and '-'", cfg.Stream)
	}
	if cfg.MaxAge <= 0 {
		cfg.MaxAge = DefaultJournalMaxAge
	}
	if cfg.MaxEvents <= 0 {
		cfg.MaxEvents = DefaultJournalMaxEvents
	}
	if cfg.MaxBytes <= 0 {
		cfg.MaxBytes = DefaultJournalMaxBytes
	}
	if cfg.Lease <= 0 {
		cfg.Lease = DefaultJournalLease
	}
	j := &Journal{cfg: cfg, log: cfg.Logger, nc: cfg.Conn, id: randomID(), stop: make(chan struct{})}
	if j.log == nil {
		j.log = zap.NewNop()
	}
	if j.nc == nil {
		url := cfg.URL
		if url == "" {
			url = nats.DefaultURL
		}
		nc, err := nats.Connect(url, nats.Name("agentgraph-journal"), nats.Timeout(5*time.Second))
		if err != nil {
			return nil, fmt.Errorf("natsbus: connecting to %s: %w (is nats-server running with JetStream (-js)? set JournalConfig.URL)", url, err)
		}
		j.nc, j.ownsNC = nc, true
	}
	js, err := jetstream.New(j.nc)
	if err != nil {
		j.closeConn()
		return nil, fmt.Errorf("natsbus: JetStream: %w", err)
	}
	j.js = js
	_, err = js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
		Name:              cfg.Stream,
		Subjects:          []string{cfg.Stream + ".key.>"},
		Storage:           jetstream.FileStorage,
		Retention:         jetstream.LimitsPolicy,
		Discard:           jetstream.DiscardOld,
		MaxAge:            cfg.MaxAge,
		MaxMsgsPerSubject: int64(cfg.MaxEvents),
		MaxBytes:          cfg.MaxBytes,
	})
	if err != nil {
		j.closeConn()
		return nil, fmt.Errorf("natsbus: creating JetStream stream %s: %w (is JetStream enabled on the server?)", cfg.Stream, err)
	}
	j.done.Add(1)
	go j.heartbeat()
	return j, nil
}

func (j *Journal) closeConn() {
	if j.ownsNC {
		j.nc.Close()
	}
}

func (j *Journal) subject(key string) string { return j.cfg.Stream + ".key." + key }

func (j *Journal) aliveSubject(writer string) string { return j.cfg.Stream + ".alive." + writer }

// heartbeat tells readers this writer is alive, every Lease/3.
func (j *Journal) heartbeat() {
	defer j.done.Done()
	t := time.NewTicker(j.cfg.Lease / 3)
	defer t.Stop()
	for {
		if err := j.nc.Publish(j.aliveSubject(j.id), nil); err != nil && !errors.Is(err, nats.ErrConnectionClosed) {
			j.log.Warn("natsbus: journal heartbeat failed", zap.Error(err))
		}
		select {
		case <-t.C:
		case <-j.stop:
			return
		}
	}
}

// Append adds ev to key's events. It returns once the message is in the
// connection's outgoing buffer.
func (j *Journal) Append(ctx context.Context, key string, ev event.Event) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := event.CheckJournalKey(key); err != nil {
		return err
	}
	data, err := ev.AppendJSON(nil)
	if err != nil {
		return fmt.Errorf("natsbus: %w", err)
	}
	m := &nats.Msg{Subject: j.subject(key), Data: data, Header: nats.Header{hdrWriter: []string{j.id}}}
	if err := j.nc.PublishMsg(m); err != nil {
		return fmt.Errorf("natsbus: journal %s: %w", key, err)
	}
	return nil
}

// End marks key's events complete: readers that reach the mark end. It
// waits for the server to store it, and so every event appended before.
func (j *Journal) End(ctx context.Context, key string) error {
	if err := event.CheckJournalKey(key); err != nil {
		return err
	}
	m := &nats.Msg{Subject: j.subject(key), Header: nats.Header{hdrWriter: []string{j.id}, hdrEnd: []string{"1"}}}
	if _, err := j.js.PublishMsg(ctx, m); err != nil {
		return fmt.Errorf("natsbus: ending journal %s: %w", key, err)
	}
	return nil
}

// Has reports whether key holds events (or its end).
func (j *Journal) Has(ctx context.Context, key string) (bool, error) {
	if err := event.CheckJournalKey(key); err != nil {
		return false, err
	}
	stream, err := j.js.Stream(ctx, j.cfg.Stream)
	if err != nil {
		return false, fmt.Errorf("natsbus: journal stream: %w", err)
	}
	_, err = stream.GetLastMsgForSubject(ctx, j.subject(key))
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("natsbus: journal %s: %w", key, err)
	}
	return true, nil
}

// Read yields key's events with a sequence number above after, oldest
// first, those stored and then those still to come, until the writer ends
// the key ([Journal.End]), ctx ends, or the writer stops sending
// heartbeats for Lease ([ErrWriterLost]). A key with no events yields
// [ErrUnknownKey] at once. When the retention dropped events after
// "after", Read first yields an error event with code "events_lost".
func (j *Journal) Read(ctx context.Context, key string, after uint64) iter.Seq2[event.Event, error] {
	return func(yield func(event.Event, error) bool) {
		if err := event.CheckJournalKey(key); err != nil {
			yield(event.Event{}, err)
			return
		}
		subject := j.subject(key)
		stream, err := j.js.Stream(ctx, j.cfg.Stream)
		if err != nil {
			yield(event.Event{}, fmt.Errorf("natsbus: journal stream: %w", err))
			return
		}
		last, err := stream.GetLastMsgForSubject(ctx, subject)
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			yield(event.Event{}, ErrUnknownKey)
			return
		}
		if err != nil {
			yield(event.Event{}, fmt.Errorf("natsbus: journal %s: %w", key, err))
			return
		}
		writer := last.Header.Get(hdrWriter)

		// Heartbeats of the writer, from now on.
		alive := make(chan struct{}, 1)
		hb, err := j.nc.Subscribe(j.aliveSubject(writer), func(*nats.Msg) {
			select {
			case alive <- struct{}{}:
			default:
			}
		})
		if err != nil {
			yield(event.Event{}, fmt.Errorf("natsbus: journal %s: %w", key, err))
			return
		}
		defer hb.Unsubscribe() //nolint:errcheck

		cons, err := j.js.OrderedConsumer(ctx, j.cfg.Stream, jetstream.OrderedConsumerConfig{
			FilterSubjects: []string{subject}, DeliverPolicy: jetstream.DeliverAllPolicy,
		})
		if err != nil {
			yield(event.Event{}, fmt.Errorf("natsbus: journal %s: %w", key, err))
			return
		}
		msgs, quit := make(chan jetstream.Msg, 64), make(chan struct{})
		cc, err := cons.Consume(func(m jetstream.Msg) {
			select {
			case msgs <- m:
			case <-quit:
			}
		})
		if err != nil {
			yield(event.Event{}, fmt.Errorf("natsbus: journal %s: %w", key, err))
			return
		}
		defer cc.Stop()
		defer close(quit) // before Stop: a handler blocked on msgs returns

		// The writer's lease: a key already ended needs none (its writer
		// may be gone, its events are all stored).
		var leaseC <-chan time.Time
		lease := time.NewTimer(j.cfg.Lease)
		defer lease.Stop()
		if last.Header.Get(hdrEnd) == "" {
			leaseC = lease.C
		}
		cur := resume.After(after)
		for {
			select {
			case <-ctx.Done():
				yield(event.Event{}, ctx.Err())
				return
			case <-alive:
				lease.Reset(j.cfg.Lease)
			case <-leaseC:
				select {
				case <-alive: // a heartbeat came while yield blocked
					lease.Reset(j.cfg.Lease)
					continue
				default:
				}
				yield(event.Event{}, ErrWriterLost)
				return
			case m := <-msgs:
				if m.Headers().Get(hdrEnd) != "" {
					return
				}
				ev, err := j.cfg.Decoder.Decode(m.Data())
				if err != nil {
					j.log.Warn("natsbus: journal message is not an event", zap.String("key", key), zap.Error(err))
					continue
				}
				yielded, more := cur.Pass(ev, yield)
				if !more {
					return
				}
				if yielded {
					// The time the reader took is not the writer's.
					lease.Reset(j.cfg.Lease)
				}
			}
		}
	}
}

// Close stops the heartbeats (readers following this journal's keys
// that it did not end then get ErrWriterLost, Lease later) and closes the
// connection if the journal dialled it.
func (j *Journal) Close() error {
	j.once.Do(func() {
		close(j.stop)
		j.done.Wait()
		j.closeConn()
	})
	return nil
}

// randomID is a writer id: 16 random bytes in hex.
func randomID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
