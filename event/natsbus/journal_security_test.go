package natsbus

import (
	"context"
	"encoding/binary"
	"errors"
	"math"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/agentgraph/agentgraph/event"
)

// readNotices reads key from the start: a Seq each, "lost N" for an
// events_lost notice, "err: ..." for an error.
func readNotices(ctx context.Context, j *Journal, key string) []string {
	var got []string
	for ev, err := range j.Read(ctx, key, 0) {
		if err != nil {
			return append(got, "err: "+err.Error())
		}
		if e, ok := ev.Payload.(event.Error); ok && e.Code == "events_lost" {
			got = append(got, "lost "+strconv.FormatUint(ev.Seq, 10))
			continue
		}
		got = append(got, strconv.FormatUint(ev.Seq, 10))
	}
	return got
}

// publishStored publishes m with a connection of its own, as another
// client of the server would, and waits for the stream to store it.
func publishStored(t *testing.T, ctx context.Context, url string, m *nats.Msg) {
	t.Helper()
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := js.PublishMsg(ctx, m); err != nil {
		t.Fatal(err)
	}
}

var testSigningKey = []byte("0123456789abcdef0123456789abcdef")

// TestJournalRefusesOthersMessages: another client publishing under a key
// (an end, garbage, an event with the largest Seq) neither ends its
// readers nor hides the writer's events; without a signing key, a message
// with no writer header or another writer's is refused, and with one, a
// message that copies the writer's id but is not signed with the key.
func TestJournalRefusesOthersMessages(t *testing.T) {
	url := natsURL(t)
	huge := []byte(`{"type":"step","request_id":"r1","seq":18446744073709551615,"time":"2026-01-01T00:00:00Z"}`)
	for _, signed := range []bool{false, true} {
		t.Run("signed="+strconv.FormatBool(signed), func(t *testing.T) {
			cfg := JournalConfig{URL: url, Stream: "journaltest-" + randomID(), Lease: time.Hour, MaxAge: time.Minute}
			if signed {
				cfg.SigningKey = testSigningKey
			}
			j := openJournal(t, cfg)
			ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second) // failure guard only
			defer cancel()
			for s := uint64(1); s <= 2; s++ {
				if err := j.Append(ctx, "k1", progress(s)); err != nil {
					t.Fatal(err)
				}
			}
			if err := j.nc.Flush(); err != nil {
				t.Fatal(err)
			}
			writer := nats.Header{}
			if signed {
				writer.Set(hdrWriter, j.id) // the id is in every message: anyone reading can copy it
			}
			hdr := func(kv ...string) nats.Header {
				h := nats.Header{}
				for k, v := range writer {
					h[k] = v
				}
				for i := 0; i < len(kv); i += 2 {
					h.Set(kv[i], kv[i+1])
				}
				return h
			}
			subject := j.subject("k1")
			others := []*nats.Msg{
				{Subject: subject, Header: hdr(hdrEnd, "1")},
				{Subject: subject, Data: []byte("garbage"), Header: hdr()},
				{Subject: subject, Data: huge, Header: hdr()},
				{Subject: subject, Data: huge, Header: hdr(hdrSignature, "AAAA")},
			}
			for _, m := range others {
				publishStored(t, ctx, url, m)
			}
			for s := uint64(3); s <= 5; s++ {
				if err := j.Append(ctx, "k1", progress(s)); err != nil {
					t.Fatal(err)
				}
			}
			if err := j.End(ctx, "k1"); err != nil {
				t.Fatal(err)
			}
			if got, want := readNotices(ctx, j, "k1"), []string{"1", "2", "3", "4", "5"}; !cmp.Equal(got, want) {
				t.Errorf("read %v, want %v", got, want)
			}
			if st := j.Stats(); st.Refused != uint64(len(others)) {
				t.Errorf("Stats = %+v, want Refused %d", st, len(others))
			}
		})
	}
}

// TestJournalWriterMessagesOutOfOrder: a message of the key's writer that
// is not an event is told to the reader; an event with the largest Seq
// is told as far past the position and shown, and hides none of the
// events after it.
func TestJournalWriterMessagesOutOfOrder(t *testing.T) {
	url := natsURL(t)
	j := openJournal(t, JournalConfig{URL: url, Stream: "journaltest-" + randomID(), Lease: time.Hour, MaxAge: time.Minute, SigningKey: testSigningKey})
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second) // failure guard only
	defer cancel()
	if err := j.Append(ctx, "k1", progress(1)); err != nil {
		t.Fatal(err)
	}
	for _, data := range []string{"garbage", `{"type":"step","request_id":"r1","seq":18446744073709551615,"time":"2026-01-01T00:00:00Z"}`} {
		m := &nats.Msg{Subject: j.subject("k1"), Data: []byte(data), Header: nats.Header{hdrWriter: []string{j.id}}}
		j.sign(m)
		if err := j.nc.PublishMsg(m); err != nil {
			t.Fatal(err)
		}
	}
	for s := uint64(2); s <= 3; s++ {
		if err := j.Append(ctx, "k1", progress(s)); err != nil {
			t.Fatal(err)
		}
	}
	if err := j.End(ctx, "k1"); err != nil {
		t.Fatal(err)
	}
	max := strconv.FormatUint(math.MaxUint64, 10)
	if got, want := readNotices(ctx, j, "k1"), []string{"1", "lost 1", "lost 1", max, "2", "3"}; !cmp.Equal(got, want) {
		t.Errorf("read %v, want %v", got, want)
	}
	if st := j.Stats(); st.Undecodable != 1 || st.Refused != 0 || st.Repeats != 0 {
		t.Errorf("Stats = %+v, want Undecodable 1, Refused 0, Repeats 0", st)
	}
}

// TestJournalSpoofedHeartbeat: with a signing key, heartbeats that are
// unsigned or replayed do not keep a dead writer alive: its reader ends
// with ErrWriterLost.
func TestJournalSpoofedHeartbeat(t *testing.T) {
	url := natsURL(t)
	stream := "journaltest-" + randomID()
	cfg := JournalConfig{URL: url, Stream: stream, Lease: time.Second, MaxAge: time.Minute, SigningKey: testSigningKey}
	w, r := openJournal(t, cfg), openJournal(t, cfg)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second) // failure guard only
	defer cancel()

	// A copy of one of the writer's heartbeats, to replay.
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	beats, err := nc.SubscribeSync(w.aliveSubject(w.id))
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Append(ctx, "k", progress(1)); err != nil {
		t.Fatal(err)
	}
	if err := w.nc.Flush(); err != nil {
		t.Fatal(err)
	}
	captured, err := beats.NextMsg(10 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	_ = beats.Unsubscribe()
	_ = w.Close() // the writer dies without End

	stop := make(chan struct{})
	var spoofing sync.WaitGroup
	spoofing.Go(func() {
		unsigned := &nats.Msg{Subject: captured.Subject, Header: nats.Header{hdrWriter: []string{w.id}, hdrBeat: []string{"999999"}}}
		t := time.NewTicker(50 * time.Millisecond)
		defer t.Stop()
		for {
			_ = nc.PublishMsg(unsigned)
			_ = nc.PublishMsg(&nats.Msg{Subject: captured.Subject, Header: captured.Header})
			select {
			case <-stop:
				return
			case <-t.C:
			}
		}
	})
	defer spoofing.Wait()
	defer close(stop)
	var last error
	for _, err := range r.Read(ctx, "k", 0) {
		if err != nil {
			last = err
			break
		}
	}
	if !errors.Is(last, ErrWriterLost) {
		t.Fatalf("Read of a dead writer's key with spoofed heartbeats ended with %v, want ErrWriterLost", last)
	}
	if r.Stats().Refused == 0 {
		t.Error("Stats().Refused = 0 after spoofed heartbeats")
	}
}

// TestJournalSigningKeyTooShort: NewJournal refuses a short key, naming
// the setting.
func TestJournalSigningKeyTooShort(t *testing.T) {
	_, err := NewJournal(t.Context(), JournalConfig{URL: "nats://127.0.0.1:1", SigningKey: []byte("short")})
	if err == nil || !strings.Contains(err.Error(), "JournalConfig.SigningKey") {
		t.Fatalf("NewJournal with a 5-byte key = %v, want an error naming JournalConfig.SigningKey", err)
	}
}

// TestJournalOldBeatsToNewReader: with a signing key, signed heartbeats
// of a writer sent more than Lease (plus the clock skew) ago, replayed to
// a reader started after the writer died, are refused: their numbers are
// new to that reader, their time is not.
func TestJournalOldBeatsToNewReader(t *testing.T) {
	url := natsURL(t)
	cfg := JournalConfig{URL: url, Stream: "journaltest-" + randomID(), Lease: 2 * time.Second, MaxAge: time.Minute, SigningKey: testSigningKey}
	w, r := openJournal(t, cfg), openJournal(t, cfg)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second) // failure guard only
	defer cancel()
	if err := w.Append(ctx, "k", progress(1)); err != nil {
		t.Fatal(err)
	}
	if err := w.nc.Flush(); err != nil {
		t.Fatal(err)
	}
	// Beats 1 to 5 as the writer signed them a while before it died.
	const n = 5
	sent := time.Now().Add(-cfg.Lease - JournalClockSkew - time.Minute)
	var old []*nats.Msg
	for beat := 1; beat <= n; beat++ {
		m := &nats.Msg{Subject: w.aliveSubject(w.id), Header: nats.Header{hdrWriter: []string{w.id},
			hdrBeat: []string{strconv.Itoa(beat)}, hdrTime: []string{strconv.FormatInt(sent.Add(time.Duration(beat)*cfg.Lease/3).UnixNano(), 10)}}}
		w.sign(m)
		old = append(old, m)
	}
	_ = w.Close() // the writer dies without End

	var last error
	for ev, err := range r.Read(ctx, "k", 0) {
		if err != nil {
			last = err
			break
		}
		if ev.Seq == 1 {
			// The reader follows the writer's heartbeats: replay the old
			// ones on its connection, after its subscription.
			for _, m := range old {
				if err := r.nc.PublishMsg(m); err != nil {
					t.Fatal(err)
				}
			}
			if err := r.nc.Flush(); err != nil {
				t.Fatal(err)
			}
			for r.Stats().Refused < n && ctx.Err() == nil {
				time.Sleep(10 * time.Millisecond)
			}
		}
	}
	if !errors.Is(last, ErrWriterLost) {
		t.Fatalf("Read of a dead writer's key with old heartbeats replayed ended with %v, want ErrWriterLost", last)
	}
	if got := r.Stats().Refused; got != n {
		t.Errorf("Stats().Refused = %d after %d old heartbeats replayed, want %d", got, n, n)
	}
}

// TestJournalStrangersBeforeWriter: a key holding only a few messages of
// others is unknown, and each message refused is counted once per reader.
func TestJournalStrangersBeforeWriter(t *testing.T) {
	url := natsURL(t)
	j := openJournal(t, JournalConfig{URL: url, Stream: "journaltest-" + randomID(), Lease: time.Hour, MaxAge: time.Minute})
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second) // failure guard only
	defer cancel()
	const n = 3
	for range n {
		publishStored(t, ctx, url, &nats.Msg{Subject: j.subject("k"), Data: []byte("garbage"), Header: nats.Header{}})
	}
	if got, want := readNotices(ctx, j, "k"), []string{"err: " + ErrUnknownKey.Error()}; !cmp.Equal(got, want) {
		t.Errorf("read of a key with only others' messages: %v, want %v", got, want)
	}
	if got := j.Stats().Refused; got != n {
		t.Errorf("Stats().Refused = %d after one read, want %d", got, n)
	}
	if err := j.Append(ctx, "k", progress(1)); err != nil {
		t.Fatal(err)
	}
	if err := j.End(ctx, "k"); err != nil {
		t.Fatal(err)
	}
	if got, want := readNotices(ctx, j, "k"), []string{"1"}; !cmp.Equal(got, want) {
		t.Errorf("read %v, want %v", got, want)
	}
	if got := j.Stats().Refused; got != 2*n {
		t.Errorf("Stats().Refused = %d after two reads, want %d", got, 2*n)
	}
}

// TestJournalUndecodableSeq: a message of the writer that is not an event
// is told to the reader by the Seq the writer gave it: once, however many
// copies, and not to a reader resuming past it. A refused message logged
// just before does not keep it from being logged.
func TestJournalUndecodableSeq(t *testing.T) {
	url := natsURL(t)
	core, logs := observer.New(zap.WarnLevel)
	j := openJournal(t, JournalConfig{URL: url, Stream: "journaltest-" + randomID(), Lease: time.Hour, MaxAge: time.Minute, Logger: zap.New(core)})
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second) // failure guard only
	defer cancel()
	if err := j.Append(ctx, "k", progress(1)); err != nil {
		t.Fatal(err)
	}
	if err := j.nc.Flush(); err != nil {
		t.Fatal(err)
	}
	publishStored(t, ctx, url, &nats.Msg{Subject: j.subject("k"), Data: []byte("stranger"), Header: nats.Header{}})
	for range 2 {
		// The writer's event 2, not decodable (say, a newer format).
		publishStored(t, ctx, url, &nats.Msg{Subject: j.subject("k"), Data: []byte("garbage"),
			Header: nats.Header{hdrWriter: []string{j.id}, hdrSeq: []string{"2"}}})
	}
	if err := j.Append(ctx, "k", progress(3)); err != nil {
		t.Fatal(err)
	}
	if err := j.End(ctx, "k"); err != nil {
		t.Fatal(err)
	}
	if got, want := readNotices(ctx, j, "k"), []string{"1", "lost 2", "3"}; !cmp.Equal(got, want) {
		t.Errorf("read %v, want %v", got, want)
	}
	var got []string
	for ev, err := range j.Read(ctx, "k", 2) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, strconv.FormatUint(ev.Seq, 10))
	}
	if want := []string{"3"}; !cmp.Equal(got, want) {
		t.Errorf("read after 2: %v, want %v", got, want)
	}
	if logs.FilterMessageSnippet("refused").Len() == 0 || logs.FilterMessageSnippet("not an event").Len() == 0 {
		t.Errorf("logged %v, want a refused message and one that is not an event", logs.All())
	}
}

// TestJournalStaleFirstMessage: with a signing key, a copy of an expired
// key's first message republished under it does not make its writer the
// key's.
func TestJournalStaleFirstMessage(t *testing.T) {
	url := natsURL(t)
	cfg := JournalConfig{URL: url, Stream: "journaltest-" + randomID(), Lease: 2 * time.Second, MaxAge: time.Minute, SigningKey: testSigningKey}
	old, j := openJournal(t, cfg), openJournal(t, cfg)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second) // failure guard only
	defer cancel()
	staleThenOne(t, ctx, url, cfg, old, j)
}

// staleThenOne stores, in key "k" of j's stream, a copy of a message of
// writer's signed by it and older than cfg.MaxAge allows, then has j
// append one notice and end the key, and checks that j reads only its
// own notice.
func staleThenOne(t *testing.T, ctx context.Context, url string, cfg JournalConfig, writer, j *Journal) {
	t.Helper()
	m := &nats.Msg{Subject: j.subject("k"), Data: []byte(`{"type":"step","request_id":"r1","seq":7,"time":"2026-01-01T00:00:00Z"}`),
		Header: nats.Header{hdrWriter: []string{writer.id}, hdrSeq: []string{"7"},
			hdrTime: []string{strconv.FormatInt(time.Now().Add(-cfg.MaxAge-JournalClockSkew-time.Minute).UnixNano(), 10)}}}
	writer.sign(m)
	publishStored(t, ctx, url, m)
	if err := j.Append(ctx, "k", progress(1)); err != nil {
		t.Fatal(err)
	}
	if err := j.End(ctx, "k"); err != nil {
		t.Fatal(err)
	}
	if got, want := readNotices(ctx, j, "k"), []string{"1"}; !cmp.Equal(got, want) {
		t.Errorf("read %v, want %v", got, want)
	}
}

// TestJournalStaleFirstOfWriter: with a signing key, a stale signed copy
// of a message of the key's own writer, stored before its first message,
// is refused by the reader, and counted once.
func TestJournalStaleFirstOfWriter(t *testing.T) {
	url := natsURL(t)
	cfg := JournalConfig{URL: url, Stream: "journaltest-" + randomID(), Lease: 2 * time.Second, MaxAge: time.Minute, SigningKey: testSigningKey}
	j := openJournal(t, cfg)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second) // failure guard only
	defer cancel()
	staleThenOne(t, ctx, url, cfg, j, j)
	if got := j.Stats().Refused; got != 1 {
		t.Errorf("Stats().Refused = %d after one stale message, want 1", got)
	}
}

// TestJournalMACFixedFields: a message without the optional headers whose
// body carries them does not share the signature of one with them.
func TestJournalMACFixedFields(t *testing.T) {
	j := &Journal{cfg: JournalConfig{SigningKey: testSigningKey}}
	h := nats.Header{hdrWriter: []string{"w"}, hdrSeq: []string{"3"}, hdrTime: []string{"100"}}
	body := []byte("D")
	var forged []byte
	for _, s := range []string{hdrSeq, "3", hdrTime, "100"} {
		forged = binary.AppendUvarint(forged, uint64(len(s)))
		forged = append(forged, s...)
	}
	forged = append(forged, body...)
	if cmp.Equal(j.mac("s", h, body), j.mac("s", nats.Header{hdrWriter: []string{"w"}}, forged)) {
		t.Error("a message with its Seq and time headers moved into its body has the same MAC")
	}
	if cmp.Equal(j.mac("s", nats.Header{hdrWriter: []string{"w"}}, []byte("ab")), j.mac("s", nats.Header{hdrWriter: []string{"w"}, hdrTime: []string{"a"}}, []byte("b"))) {
		t.Error("a body prefix moved into the time header has the same MAC")
	}
}

// TestSentWithinFuture refuses times further ahead than the clock skew.
func TestSentWithinFuture(t *testing.T) {
	at := func(d time.Duration) nats.Header {
		return nats.Header{hdrTime: []string{strconv.FormatInt(time.Now().Add(d).UnixNano(), 10)}}
	}
	if !sentWithin(at(0), time.Minute) {
		t.Error("sentWithin(now) = false")
	}
	if sentWithin(at(JournalClockSkew+time.Hour), time.Minute) {
		t.Error("sentWithin(an hour past the clock skew ahead) = true, want false")
	}
	if sentWithin(at(-time.Minute-JournalClockSkew-time.Hour), time.Minute) {
		t.Error("sentWithin(an hour too old) = true, want false")
	}
}

// TestJournalTellsOfDroppedMessages: messages of a key the stream dropped
// ahead of a reader, after its first event, are told to it with an
// events_lost notice; the gap was taken for an Emitter's coalescing.
func TestJournalTellsOfDroppedMessages(t *testing.T) {
	url := natsURL(t)
	cfg := JournalConfig{URL: url, Stream: "journaltest-" + randomID(), Lease: time.Hour, MaxAge: time.Minute}
	j := openJournal(t, cfg)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second) // failure guard only
	defer cancel()
	for s := uint64(1); s <= 3; s++ {
		if err := j.Append(ctx, "k", progress(s)); err != nil {
			t.Fatal(err)
		}
	}
	if err := j.End(ctx, "k"); err != nil {
		t.Fatal(err)
	}
	stream, err := j.js.Stream(ctx, cfg.Stream)
	if err != nil {
		t.Fatal(err)
	}
	first, err := stream.GetMsg(ctx, 1, jetstream.WithGetMsgSubject(j.subject("k")))
	if err != nil {
		t.Fatal(err)
	}
	if err := stream.DeleteMsg(ctx, first.Sequence+1); err != nil { // event 2
		t.Fatal(err)
	}
	if got, want := readNotices(ctx, j, "k"), []string{"1", "lost 2", "3"}; !cmp.Equal(got, want) {
		t.Errorf("read %v, want %v", got, want)
	}
}
