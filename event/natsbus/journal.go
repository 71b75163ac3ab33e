package natsbus

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"iter"
	"regexp"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/zap"

	"github.com/agentgraph/agentgraph/event"
	"github.com/agentgraph/agentgraph/event/internal/ratelog"
	"github.com/agentgraph/agentgraph/event/internal/resume"
)

// Defaults of [JournalConfig].
const (
	DefaultJournalMaxAge    = 10 * time.Minute
	DefaultJournalMaxEvents = 1024
	DefaultJournalMaxBytes  = 256 << 20
	DefaultJournalLease     = 10 * time.Second
)

// JournalClockSkew is how far the clocks of a stream's instances may
// differ. With a JournalConfig.SigningKey, readers refuse a heartbeat
// whose signed time is more than Lease plus JournalClockSkew old (a copy
// replayed after its writer died), and a key's first message whose signed
// time is more than MaxAge plus JournalClockSkew old (a copy republished
// after the key expired).
const JournalClockSkew = 5 * time.Second

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
	// written. Journals sharing the Stream use the same MaxAge (with a
	// SigningKey, a reader refuses a key's first message older than its
	// own). Zero means DefaultJournalMaxAge.
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
	// SigningKey, when set, signs every message the journal publishes
	// (events, ends, heartbeats) with HMAC-SHA256, and makes its readers
	// refuse messages that are unsigned or badly signed: only holders of
	// the key can write a key's events, end it or keep its writer alive.
	// Signed messages carry their send time: the instances' clocks must
	// agree within JournalClockSkew.
	// Every journal sharing the Stream uses the same key: 32 random
	// bytes, at least 16. Nil means messages are not signed, and NATS
	// subject permissions must keep other users from publishing on
	// "<Stream>.key.>" and "<Stream>.alive.>" (see the package doc).
	SigningKey []byte
	// Logger receives publishing failures, and the messages readers
	// refuse or cannot decode (each of the two at most one line a second,
	// with the number left unlogged). Nil means no logging.
	Logger *zap.Logger
}

// JournalStats counts the messages a [Journal]'s readers did not deliver.
type JournalStats struct {
	// Refused is the number of messages refused: a key's event or end
	// not from the key's writer, a heartbeat not from the writer, or,
	// with JournalConfig.SigningKey, one unsigned or badly signed.
	Refused uint64
	// Undecodable is the number of messages from a key's writer that
	// were not events; each was told to the reader by an events_lost
	// error event.
	Undecodable uint64
	// Repeats is the number of events from a key's writer that readers
	// skipped because they had been given one with the same or a larger
	// Seq: copies of an event published again, or events out of order.
	Repeats uint64
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

	refused, undecodable, repeats atomic.Uint64
	refusedLog, undecodableLog    ratelog.Limiter

	numMu sync.Mutex
	nums  map[string]uint64 // the number of the last event message of each key written, at most maxNumbered keys
}

// maxNumbered bounds the keys whose message numbers (hdrNum) a Journal
// remembers. A key forgotten numbers its next message 1 again, which
// readers take for a new count, not for a loss.
const maxNumbered = 4096

// Headers of journal messages.
const (
	hdrWriter    = "Agentgraph-Writer"
	hdrEnd       = "Agentgraph-End"
	hdrBeat      = "Agentgraph-Beat" // a heartbeat's number, from 1
	hdrSeq       = "Agentgraph-Seq"  // an event's Seq
	hdrTime      = "Agentgraph-Time" // when the message was sent: Unix nanoseconds
	hdrNum       = "Agentgraph-Num"  // an event message's number in its key, by its writer: 1, 2, 3...
	hdrSignature = "Agentgraph-Signature"
)

// writerScan bounds the messages Read looks at, from a key's first kept
// one, for the first from a journal writer (with a writer header and,
// with a SigningKey, signed).
const writerScan = 16

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
	if n := len(cfg.SigningKey); n > 0 && n < 16 {
		return nil, fmt.Errorf("natsbus: JournalConfig.SigningKey has %d bytes; use 32 random bytes (at least 16), the same for every journal of the stream", n)
	}
	cfg.SigningKey = append([]byte(nil), cfg.SigningKey...)
	if len(cfg.SigningKey) == 0 {
		cfg.SigningKey = nil
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
	for beat := uint64(1); ; beat++ {
		m := &nats.Msg{Subject: j.aliveSubject(j.id), Header: nats.Header{hdrWriter: []string{j.id}, hdrBeat: []string{strconv.FormatUint(beat, 10)}}}
		j.stampAndSign(m)
		if err := j.nc.PublishMsg(m); err != nil && !errors.Is(err, nats.ErrConnectionClosed) {
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
	if ev.Seq != 0 {
		m.Header.Set(hdrSeq, strconv.FormatUint(ev.Seq, 10))
	}
	m.Header.Set(hdrNum, strconv.FormatUint(j.number(key), 10))
	j.stampAndSign(m)
	if err := j.nc.PublishMsg(m); err != nil {
		return fmt.Errorf("natsbus: journal %s: %w", key, err)
	}
	return nil
}

// number returns the number of key's next event message: one more than
// the last, from 1. Readers take a number more than one past the last
// they read for messages the stream dropped before them.
func (j *Journal) number(key string) uint64 {
	j.numMu.Lock()
	defer j.numMu.Unlock()
	n, ok := j.nums[key]
	if !ok && len(j.nums) >= maxNumbered {
		for k := range j.nums { // any one: it starts at 1 again
			delete(j.nums, k)
			break
		}
	}
	if j.nums == nil {
		j.nums = make(map[string]uint64)
	}
	n++
	j.nums[key] = n
	return n
}

// End marks key's events complete: readers that reach the mark end. It
// waits for the server to store it, and so every event appended before.
func (j *Journal) End(ctx context.Context, key string) error {
	if err := event.CheckJournalKey(key); err != nil {
		return err
	}
	j.numMu.Lock()
	delete(j.nums, key)
	j.numMu.Unlock()
	m := &nats.Msg{Subject: j.subject(key), Header: nats.Header{hdrWriter: []string{j.id}, hdrEnd: []string{"1"}}}
	j.stampAndSign(m)
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
//
// The key's writer is the journal that wrote the first message kept under
// it: Read delivers the events and the end of that writer alone, and
// heeds its heartbeats alone; with a SigningKey, only those signed with
// it, and only heartbeats sent within Lease plus [JournalClockSkew]. It
// refuses other messages and counts them ([Journal.Stats]); a key whose
// messages are all refused is unknown. A message of the writer that is
// not an event is told to the reader by an events_lost error event; an
// event with a Seq at most that of one yielded before (a copy, or out of
// order) is skipped. The writer numbers its event messages of a key (a
// signed header): a reader that finds numbers missing, dropped by the
// stream ahead of it, is told by an events_lost error event.
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
		writer, first, err := j.keyWriter(ctx, stream, key, subject)
		if errors.Is(err, ErrUnknownKey) {
			yield(event.Event{}, err)
			return
		}
		if err != nil {
			yield(event.Event{}, fmt.Errorf("natsbus: journal %s: %w", key, err))
			return
		}

		// Heartbeats of the writer, from now on: with a SigningKey, each
		// signed, sent within Lease (plus the clock skew) and numbered
		// above the last one heeded, so that a heartbeat replayed is
		// refused, to this reader and to one started after the writer
		// died. Without one, any message on the writer's subject is a
		// heartbeat (as those of journals that sent them without headers):
		// only subject permissions guard it.
		alive := make(chan struct{}, 1)
		var lastBeat uint64 // the subscription's handler runs one at a time
		hb, err := j.nc.Subscribe(j.aliveSubject(writer), func(m *nats.Msg) {
			if j.cfg.SigningKey != nil {
				if !j.accepted(m.Subject, m.Header, m.Data, writer) {
					j.refuse(key, m.Subject, "heartbeat not signed")
					return
				}
				beat, err := strconv.ParseUint(m.Header.Get(hdrBeat), 10, 64)
				if err != nil || beat <= lastBeat || !sentWithin(m.Header, j.cfg.Lease) {
					j.refuse(key, m.Subject, "heartbeat replayed")
					return
				}
				lastBeat = beat
			}
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
		if last.Header.Get(hdrEnd) == "" || !j.accepted(last.Subject, last.Header, last.Data, writer) {
			leaseC = lease.C
		}
		cur := resume.After(key, after)
		var lastNum uint64 // the number (hdrNum) of the last event message read
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
				// Messages before the writer's first, which keyWriter
				// passed over (stale copies among them), are refused too.
				if md, err := m.Metadata(); err == nil && md.Sequence.Stream < first {
					j.refuse(key, m.Subject(), "message before the first of the key's writer, or sent longer than MaxAge ago")
					continue
				}
				if !j.accepted(m.Subject(), m.Headers(), m.Data(), writer) {
					j.refuse(key, m.Subject(), "message not from the key's writer, or not signed")
					continue
				}
				if m.Headers().Get(hdrEnd) != "" {
					return
				}
				// The writer numbers its messages of the key 1, 2, 3...:
				// a number more than one past the last read means the
				// stream dropped the messages between (its per-subject
				// limit or MaxAge) before this reader read them; a lower
				// one, that the writer counts anew.
				if n, err := strconv.ParseUint(m.Headers().Get(hdrNum), 10, 64); err == nil {
					if lastNum != 0 && n > lastNum+1 {
						seq, _ := strconv.ParseUint(m.Headers().Get(hdrSeq), 10, 64)
						if !cur.Dropped(seq, yield) {
							return
						}
					}
					lastNum = n
				}
				ev, err := j.cfg.Decoder.Decode(m.Data())
				if err != nil {
					j.undecodable.Add(1)
					if ok, skipped := j.undecodableLog.Allow(); ok {
						j.log.Warn("natsbus: journal message is not an event; the reader is told it missed one",
							zap.String("key", key), zap.Error(err), zap.Uint64("unlogged_since_last", skipped))
					}
					// The Seq the writer gave it, 0 if none: signed with the
					// message when there is a SigningKey.
					seq, _ := strconv.ParseUint(m.Headers().Get(hdrSeq), 10, 64)
					if !cur.Undecodable(seq, err, yield) {
						return
					}
					continue
				}
				repeats := cur.Repeats()
				yielded, more := cur.Pass(ev, yield)
				if n := cur.Repeats(); n != repeats {
					j.repeats.Add(n - repeats)
				}
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

// keyWriter returns the writer of the key whose subject is subject: the
// writer of its first kept message that is a journal's (one of the first
// writerScan) and, with a SigningKey, sent within MaxAge (plus the clock
// skew), so that a copy of an expired key's first message republished
// does not make its writer the key's. It fails with ErrUnknownKey when
// the key holds fewer than writerScan messages and none is a writer's.
// It returns the stream sequence of that first message too. The messages
// it passes over are counted as refused by the consume loop of Read,
// which refuses every message before that sequence; those of a key it
// fails for, here.
func (j *Journal) keyWriter(ctx context.Context, stream jetstream.Stream, key, subject string) (writer string, first uint64, err error) {
	seq := uint64(1)
	var passed []string // the subjects of the messages passed over
	defer func() {
		for _, s := range passed {
			j.refuse(key, s, "message not from a journal writer, or not signed")
		}
	}()
	for range writerScan {
		m, err := stream.GetMsg(ctx, seq, jetstream.WithGetMsgSubject(subject))
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			return "", 0, ErrUnknownKey
		}
		if err != nil {
			passed = nil
			return "", 0, fmt.Errorf("looking up the key's writer: %w", err)
		}
		if w := m.Header.Get(hdrWriter); w != "" && j.accepted(m.Subject, m.Header, m.Data, w) &&
			(j.cfg.SigningKey == nil || sentWithin(m.Header, j.cfg.MaxAge)) {
			passed = nil // the consume loop counts them
			return w, m.Sequence, nil
		}
		passed = append(passed, m.Subject)
		seq = m.Sequence + 1
	}
	return "", 0, fmt.Errorf("none of the key's first %d messages is from a journal writer (with its writer header, signed with the JournalConfig.SigningKey if any): others publish on the journal's subjects; restrict them with NATS permissions or set JournalConfig.SigningKey", writerScan)
}

// accepted reports whether the message on subject with headers h and
// body data is writer's: it carries writer's id and, with a SigningKey,
// a valid signature.
func (j *Journal) accepted(subject string, h nats.Header, data []byte, writer string) bool {
	if h.Get(hdrWriter) != writer {
		return false
	}
	if j.cfg.SigningKey == nil {
		return true
	}
	got, err := base64.RawStdEncoding.DecodeString(h.Get(hdrSignature))
	return err == nil && hmac.Equal(got, j.mac(subject, h, data))
}

// stampAndSign adds the time to m and, when the journal has a
// SigningKey, its signature.
func (j *Journal) stampAndSign(m *nats.Msg) {
	m.Header.Set(hdrTime, strconv.FormatInt(time.Now().UnixNano(), 10))
	j.sign(m)
}

// sentWithin reports whether the message with headers h was sent at most
// d plus JournalClockSkew ago, by its time header, and at most
// JournalClockSkew in the future.
func sentWithin(h nats.Header, d time.Duration) bool {
	ns, err := strconv.ParseInt(h.Get(hdrTime), 10, 64)
	if err != nil {
		return false
	}
	age := time.Since(time.Unix(0, ns))
	return age <= d+JournalClockSkew && age >= -JournalClockSkew
}

// sign adds its signature to m, when the journal has a SigningKey.
func (j *Journal) sign(m *nats.Msg) {
	if j.cfg.SigningKey != nil {
		m.Header.Set(hdrSignature, base64.RawStdEncoding.EncodeToString(j.mac(m.Subject, m.Header, m.Data)))
	}
}

// macVersion opens the signed text of every message, so that a change of
// its fields makes older signatures fail.
const macVersion = "agentgraph-journal-mac-v2"

// mac is the HMAC-SHA256 of a message: macVersion, then its subject, the
// headers of writer, end, heartbeat number, Seq, message number and time (empty when
// absent) and its body, in this order, each prefixed by its length, so
// that no two messages share the signed text.
func (j *Journal) mac(subject string, h nats.Header, data []byte) []byte {
	mac := hmac.New(sha256.New, j.cfg.SigningKey)
	var n [binary.MaxVarintLen64]byte
	put := func(b []byte) {
		mac.Write(n[:binary.PutUvarint(n[:], uint64(len(b)))])
		mac.Write(b)
	}
	for _, s := range [...]string{macVersion, subject, h.Get(hdrWriter), h.Get(hdrEnd), h.Get(hdrBeat), h.Get(hdrSeq), h.Get(hdrNum), h.Get(hdrTime)} {
		put([]byte(s))
	}
	put(data)
	return mac.Sum(nil)
}

// refuse counts a message refused and logs it, at most once a second.
func (j *Journal) refuse(key, subject, why string) {
	j.refused.Add(1)
	if ok, skipped := j.refusedLog.Allow(); ok {
		j.log.Warn("natsbus: journal refused a message: "+why+"; restrict the journal's subjects with NATS permissions or set JournalConfig.SigningKey",
			zap.String("key", key), zap.String("subject", subject), zap.Uint64("unlogged_since_last", skipped))
	}
}

// Stats returns the journal's counters.
func (j *Journal) Stats() JournalStats {
	return JournalStats{Refused: j.refused.Load(), Undecodable: j.undecodable.Load(), Repeats: j.repeats.Load()}
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
