// Package update holds what the SQL stores of cognition
// (cognition/postgres, cognition/sqlite) share in their read-modify-write
// updates: running the caller's function on what the store read inside its
// transaction, checking what the function changed, and telling the
// caller's errors, which an update returns as they are, from the store's,
// which it wraps.
package update

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/agentgraph/agentgraph/cognition"
)

// callerError marks an error of the caller's function, or of the check of
// its changes, so that [Err] returns it unwrapped.
type callerError struct{ err error }

func (e callerError) Error() string { return e.err.Error() }

// Profile runs fn on p, the profile of userID as the store read it, checks
// what fn left ([cognition.CheckProfile]), and returns p encoded as JSON, to be saved.
func Profile(p *cognition.Profile, userID string, fn func(*cognition.Profile) error) ([]byte, error) {
	if err := fn(p); err != nil {
		return nil, callerError{err}
	}
	if err := cognition.CheckProfile(userID, *p); err != nil {
		return nil, callerError{err}
	}
	return json.Marshal(p)
}

// Identity runs fn on id, the identity of agent as the store read it,
// checks what fn left ([cognition.CheckIdentity]), and returns id encoded
// as JSON, to be saved.
func Identity(id *cognition.Identity, agent string, fn func(*cognition.Identity) error) ([]byte, error) {
	if err := fn(id); err != nil {
		return nil, callerError{err}
	}
	if err := cognition.CheckIdentity(agent, *id); err != nil {
		return nil, callerError{err}
	}
	return json.Marshal(id)
}

// Record describes a JSON record of the stores, keyed by one ID: a
// profile by user ID or an identity by agent.
type Record[T any] struct {
	// Key names the ID in the errors of [cognition.ValidateID], such as
	// "user ID".
	Key string
	// What names the record in errors, such as "profile".
	What string
	// New returns the record of an ID that has none stored.
	New func(id string) T
	// Apply runs an update's function on v, the record of id as the store
	// read it, and returns v encoded as JSON, to be saved: [Profile] or
	// [Identity].
	Apply func(v *T, id string, fn func(*T) error) ([]byte, error)
}

// Profiles describes the profiles of users.
var Profiles = Record[cognition.Profile]{Key: "user ID", What: "profile",
	New: func(id string) cognition.Profile { return cognition.Profile{UserID: id} }, Apply: Profile}

// Identities describes the identities of agents.
var Identities = Record[cognition.Identity]{Key: "agent", What: "identity",
	New: func(id string) cognition.Identity { return cognition.Identity{Agent: id} }, Apply: Identity}

// Get is a store's read of the record r of id: it checks id, then loads
// the record through load, which is given the record of an id with none
// stored. Its errors start with store, such as "postgres".
func Get[T any](r Record[T], store, id string, load func(none T) (T, error)) (T, error) {
	var zero T
	if err := cognition.ValidateID(r.Key, id); err != nil {
		return zero, err
	}
	v, err := load(r.New(id))
	if err != nil {
		return zero, fmt.Errorf("%s: %s of %q: %w", store, r.What, id, err)
	}
	return v, nil
}

// Put is a store's update of the record r of id with fn: it checks id,
// then, in the transaction that inTx runs, loads the record through load
// (given the record of an id with none stored), runs fn on it (r.Apply)
// and saves its JSON through save. It returns fn's errors as they are
// ([Err]); its own start with store, such as "postgres".
func Put[T, Tx any](r Record[T], store, id string, fn func(*T) error, inTx func(func(Tx) error) error,
	load func(tx Tx, none T) (T, error), save func(tx Tx, data []byte) error) (T, error) {
	var zero T
	if err := cognition.ValidateID(r.Key, id); err != nil {
		return zero, err
	}
	var v T
	err := inTx(func(tx Tx) error {
		var err error
		if v, err = load(tx, r.New(id)); err != nil {
			return err
		}
		data, err := r.Apply(&v, id, fn)
		if err != nil {
			return err
		}
		return save(tx, data)
	})
	if err != nil {
		return zero, Err(err, "%s: update %s of %q", store, r.What, id)
	}
	return v, nil
}

// Episodes runs fn on cur, the episodes of userID as the store read them,
// and returns the changes it asks for once [cognition.CheckChanges] has
// passed them.
func Episodes(userID string, cur []cognition.Episode, fn func([]cognition.Episode) (cognition.EpisodeChanges, error)) (cognition.EpisodeChanges, error) {
	ch, err := fn(cur)
	if err != nil {
		return ch, callerError{err}
	}
	if err := cognition.CheckChanges(userID, ch); err != nil {
		return ch, callerError{err}
	}
	return ch, nil
}

// Err returns what an update returns for err, the error of its
// transaction: nil for nil, an error of the caller's function (or of the
// check of its changes) as it is, and any other error wrapped, after the
// words of format and args.
func Err(err error, format string, args ...any) error {
	if err == nil {
		return nil
	}
	var ce callerError
	if errors.As(err, &ce) {
		return ce.err
	}
	return fmt.Errorf(format+": %w", append(args, err)...)
}
