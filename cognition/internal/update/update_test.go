package update

import (
	"errors"
	"strings"
	"testing"

	"github.com/agentgraph/agentgraph/cognition"
)

// TestErr checks that an update returns its caller's errors as they are
// and wraps the store's.
func TestErr(t *testing.T) {
	mine := errors.New("mine")
	if _, err := Profile(&cognition.Profile{UserID: "u"}, "u", func(*cognition.Profile) error { return mine }); Err(err, "x") != mine {
		t.Errorf("Profile's function error: Err = %v, want it as it is", Err(err, "x"))
	}
	if _, err := Identity(&cognition.Identity{Agent: "a"}, "a", func(*cognition.Identity) error { return mine }); Err(err, "x") != mine {
		t.Errorf("Identity's function error: Err = %v, want it as it is", Err(err, "x"))
	}
	if _, err := Episodes("u", nil, func([]cognition.Episode) (cognition.EpisodeChanges, error) { return cognition.EpisodeChanges{}, mine }); Err(err, "x") != mine {
		t.Errorf("Episodes' function error: Err = %v, want it as it is", Err(err, "x"))
	}
	store := errors.New("disk full")
	if err := Err(store, "sqlite: update profile of %q", "u"); err.Error() != `sqlite: update profile of "u": disk full` || !errors.Is(err, store) {
		t.Errorf("Err of the store's error = %v, want it wrapped", err)
	}
	if Err(nil, "x") != nil {
		t.Error("Err(nil) is not nil")
	}
}

// TestChecks checks that a function may not change whose record it
// updates, and that changed episodes pass cognition.CheckChanges.
func TestChecks(t *testing.T) {
	_, err := Profile(&cognition.Profile{UserID: "u"}, "u", func(p *cognition.Profile) error { p.UserID = "v"; return nil })
	if err = Err(err, "x"); !errors.Is(err, cognition.ErrInvalid) || !strings.Contains(err.Error(), "changed UserID") || strings.HasPrefix(err.Error(), "x") {
		t.Errorf("Profile changing UserID: %v, want ErrInvalid unwrapped", err)
	}
	_, err = Identity(&cognition.Identity{Agent: "a"}, "a", func(id *cognition.Identity) error { id.Agent = "b"; return nil })
	if err = Err(err, "x"); !errors.Is(err, cognition.ErrInvalid) || !strings.Contains(err.Error(), "changed Agent") {
		t.Errorf("Identity changing Agent: %v, want ErrInvalid unwrapped", err)
	}
	_, err = Episodes("u", nil, func([]cognition.Episode) (cognition.EpisodeChanges, error) {
		return cognition.EpisodeChanges{Put: []cognition.Episode{{ID: "e", UserID: "v"}}}, nil
	})
	if err = Err(err, "x"); !errors.Is(err, cognition.ErrInvalid) {
		t.Errorf("Episodes putting another user's episode: %v, want ErrInvalid", err)
	}
	data, err := Profile(&cognition.Profile{UserID: "u"}, "u", func(p *cognition.Profile) error { return nil })
	if err != nil || !strings.Contains(string(data), `"u"`) {
		t.Errorf("Profile = %s, %v; want the profile's JSON", data, err)
	}
}

// TestGetPut checks the read and the update of a record: an ID is
// checked first, a missing record is the record of its ID, the caller's
// errors come back as they are, and the store's with the store's name.
func TestGetPut(t *testing.T) {
	none := func(p cognition.Profile) (cognition.Profile, error) { return p, nil }
	if p, err := Get(Profiles, "sqlite", "u", none); err != nil || p.UserID != "u" {
		t.Errorf("Get of a missing profile = %+v, %v; want the profile of u", p, err)
	}
	if _, err := Get(Profiles, "sqlite", "", none); !errors.Is(err, cognition.ErrInvalid) {
		t.Errorf("Get with an empty user ID: %v, want ErrInvalid", err)
	}
	disk := errors.New("disk full")
	if _, err := Get(Identities, "postgres", "a", func(cognition.Identity) (cognition.Identity, error) { return cognition.Identity{}, disk }); err == nil ||
		err.Error() != `postgres: identity of "a": disk full` || !errors.Is(err, disk) {
		t.Errorf("Get's load error: %v, want it wrapped after the store's name", err)
	}
	inTx := func(body func(tx *[]byte) error) error { var saved []byte; return body(&saved) }
	load := func(_ *[]byte, none cognition.Identity) (cognition.Identity, error) { return none, nil }
	var saved string
	save := func(_ *[]byte, data []byte) error { saved = string(data); return nil }
	id, err := Put(Identities, "sqlite", "a", func(id *cognition.Identity) error { id.Goals = []string{"Ada"}; return nil }, inTx, load, save)
	if err != nil || len(id.Goals) != 1 || !strings.Contains(saved, `"Ada"`) {
		t.Errorf("Put = %+v, %v, saved %s; want Ada saved", id, err, saved)
	}
	saved = ""
	mine := errors.New("mine")
	if _, err := Put(Identities, "sqlite", "a", func(*cognition.Identity) error { return mine }, inTx, load, save); err != mine || saved != "" {
		t.Errorf("Put with a failing function: %v, saved %q; want its error as it is, nothing saved", err, saved)
	}
	if _, err := Put(Identities, "sqlite", "a", func(*cognition.Identity) error { return nil }, inTx, load,
		func(*[]byte, []byte) error { return disk }); err == nil || err.Error() != `sqlite: update identity of "a": disk full` {
		t.Errorf("Put's save error: %v, want it wrapped after the store's name", err)
	}
}
