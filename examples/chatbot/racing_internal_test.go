package chatbot

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestNewConversationsRacing: two new conversations of a principal
// started at once are counted one after the other, under the lock of its
// new conversations: at MaxConversations 1 the first is admitted and
// listed, the second refused with ErrConversationLimit. The first is held
// between its count and its listing until the second either passes its
// own count (no lock: both would be admitted) or waits for the lock, so
// that the outcome does not depend on timing. In memory, with SQLite and
// with PostgreSQL (whose lock every instance shares).
func TestNewConversationsRacing(t *testing.T) {
	stores := map[string]func(t *testing.T) Config{
		"memory": func(t *testing.T) Config { return Config{} },
		"sqlite": func(t *testing.T) Config { return Config{DataDir: t.TempDir()} },
		"postgres": func(t *testing.T) Config {
			dsn, schema := internalPostgres(t)
			return Config{Postgres: dsn, PostgresSchema: schema}
		},
	}
	for name, store := range stores {
		t.Run(name, func(t *testing.T) {
			cfg := store(t)
			cfg.Offline, cfg.MaxConversations, cfg.MaxRunningTurns = true, 1, -1
			b, err := New(t.Context(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer func() {
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				if err := b.Close(ctx); err != nil {
					t.Errorf("Close: %v", err)
				}
			}()
			checked, release := make(chan string, 2), make(chan struct{})
			b.roomChecked = func(id string) {
				checked <- id
				<-release
			}
			waiting := make(chan string, 2)
			b.lockWaiting = func(id string) { waiting <- id }
			alice := WithPrincipal(t.Context(), "alice")
			chat := func(id string, errs chan<- error) {
				for _, err := range b.Chat(alice, Request{ConversationID: id, Message: "Hello!"}) {
					if err != nil {
						errs <- err
						return
					}
				}
				errs <- nil
			}
			first, second := make(chan error, 1), make(chan error, 1)
			go chat("a", first)
			if id := <-checked; id != "a" {
				t.Fatalf("%q passed the count; want a", id)
			}
			go chat("b", second)
			// a holds the lock until release: b, once it takes the lock,
			// waits for a to be listed.
			raced := false
			deadline := time.After(time.Minute) // bounds a broken test only
		wait:
			for {
				select {
				case <-checked:
					raced = true // b counted while a, counted, was not listed yet
					break wait
				case id := <-waiting:
					if id == "b" {
						break wait
					}
				case err := <-second:
					close(release)
					t.Fatalf("the second new conversation ended (%v) before it was counted or took the lock of new conversations", err)
				case <-deadline:
					close(release)
					t.Fatal("b neither passed the count nor took the lock of new conversations")
				}
			}
			close(release)
			if err := <-first; err != nil {
				t.Errorf("the first new conversation: %v; want it admitted", err)
			}
			if err := <-second; !errors.Is(err, ErrConversationLimit) {
				t.Errorf("the second new conversation: %v (passed the count while the first was not listed: %v); want ErrConversationLimit (MaxConversations 1)", err, raced)
			}
			if list, err := b.Conversations(alice); err != nil || len(list) != 1 || list[0].ID != "a" {
				t.Errorf("alice's conversations: %+v, %v; want a only", list, err)
			}
		})
	}
}
