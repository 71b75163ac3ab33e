package model

import "math/rand/v2"

// Messages is a conversation kept in graph state: the memory of an agent.
//
// A graph state field of type Messages merges writes with [Messages.Merge],
// so nodes return only the messages they add, change or remove:
//
//	type State struct {
//		Messages model.Messages
//	}
//
//	var Conversation = graph.Declare(func(s *State) *model.Messages { return &s.Messages })
//
//	// in a node:
//	return Conversation.Set(model.Messages{reply}), nil
//
// A message whose ID is already in the conversation replaces it in place; a
// message made with [Remove] deletes the message with its ID; any other
// message is appended, with an ID assigned when it has none. Every message
// of a merged conversation therefore has an ID, which is how a later write
// can edit or delete it. With a checkpointer, a thread's Messages field is
// its conversation across runs: each run's input messages are merged into
// the saved ones.
//
// Messages encodes to JSON as an array of [Message] values, so it needs no
// special serializer.
type Messages []Message

// RoleRemove marks a removal: a message with this role, made by [Remove],
// deletes the message with its ID when merged. It never appears in a merged
// conversation.
const RoleRemove Role = "remove"

// Remove returns the marker that deletes the message with the given id when
// merged into [Messages].
func Remove(id string) Message { return Message{ID: id, Role: RoleRemove} }

// RemoveAll is the ID of a removal marker that deletes every message before
// it: Remove(RemoveAll) followed by new messages replaces the whole
// conversation. The ID is reserved for the marker: [Messages.Merge] gives a
// message that is not a removal marker and has this ID a new ID, as it does
// a message without one, so that no message of a merged conversation has
// it.
const RemoveAll = "*"

// Merge returns the conversation m with the messages of update merged in, in
// order: a message whose ID is in the conversation replaces that message in
// place, a removal marker ([Remove]) deletes the message with its ID (a
// marker for an unknown ID does nothing), Remove([RemoveAll]) deletes every
// message merged so far, and any other message is appended, getting a new
// random ID when it has none or has the reserved ID [RemoveAll]. Only
// removal markers delete messages: a message of any other role, the empty
// one included, is kept. The messages m holds are never modified, so an
// earlier state keeps its value; an update that only adds messages is
// appended to m's backing array when it has room, as graph's Append does.
//
// Merge takes time linear in len(m) + len(update): an update of more than a
// few messages finds ids through a set of the conversation's ids, not by
// scanning the conversation once per message.
func (m Messages) Merge(update Messages) Messages {
	if len(update) == 0 {
		return m
	}
	// pos maps the id of each message of the conversation being merged
	// to its position, for an update too long to scan the conversation
	// once per message; nil otherwise.
	var pos map[string]int
	if len(update) > mergeScan {
		pos = positions(m, len(update))
	}
	// A node's update is mostly one new message: its check is inlined.
	if len(update) == 1 && appendsOne(m, &update[0]) || len(update) > 1 && m.appendsOnly(update, pos) {
		// The common case: only new messages. Like graph's Append, this
		// appends past m's length, never changing what m holds. A
		// conversation grows by a few messages per turn, so a short one
		// grows to room for minGrow messages at once, not by doubling.
		out := m
		if n := len(m) + len(update); n > cap(m) {
			out = make(Messages, len(m), max(n, 2*cap(m), minGrow))
			copy(out, m)
		}
		out = append(out, update...)
		for i := len(m); i < len(out); i++ {
			if id := out[i].ID; id == "" || id == RemoveAll {
				out[i].ID = NewID()
			}
		}
		return out
	}
	out := make(Messages, len(m), len(m)+len(update))
	copy(out, m)
	// dead[i] says that out[i] was removed; nil until a removal. Only
	// removals delete: a message's fields never mark it deleted.
	var dead []bool
	for _, msg := range update {
		if msg.Role == RoleRemove {
			if msg.ID == RemoveAll {
				clear(out)
				out, dead = out[:0], dead[:0]
				clear(pos)
				continue
			}
			if i := find(out, pos, msg.ID); i >= 0 {
				out[i] = Message{} // deleted below, keeping positions stable
				if pos != nil {
					delete(pos, msg.ID)
				}
				if len(dead) <= i {
					dead = append(dead, make([]bool, len(out)-len(dead))...)
				}
				dead[i] = true
			}
			continue
		}
		if msg.ID == "" || msg.ID == RemoveAll {
			msg.ID = NewID()
		} else if i := find(out, pos, msg.ID); i >= 0 {
			out[i] = msg
			continue
		}
		if pos != nil {
			pos[msg.ID] = len(out)
		}
		out = append(out, msg)
	}
	if len(dead) > 0 {
		n := 0
		for i := range out {
			if i < len(dead) && dead[i] {
				continue
			}
			out[n] = out[i]
			n++
		}
		clear(out[n:])
		out = out[:n]
	}
	return out
}

// minGrow is the least number of messages Merge makes room for when it
// must grow a conversation's backing array.
const minGrow = 8

// mergeScan is the number of messages of an update up to which Merge finds
// ids by scanning the conversation, as [Messages.Index] does, which costs
// less than a set of the conversation's ids: a turn adds a few messages.
// A longer update builds the set, so that the merge stays linear.
const mergeScan = 16

// positions returns the set of the ids of m, each with its position, with
// room for extra more ids; or nil when m holds an id twice. A conversation
// with a repeated id (which Merge never makes, but a caller's slice may
// hold) is merged by scanning, as [Messages.Index] does: once the message
// found last is removed the scan finds the one before it, which a set of
// positions would have forgotten.
func positions(m Messages, extra int) map[string]int {
	pos := make(map[string]int, len(m)+extra)
	n := 0 // the messages with an id
	for i := range m {
		if id := m[i].ID; id != "" {
			pos[id] = i
			if n++; len(pos) != n {
				return nil // id repeated
			}
		}
	}
	return pos
}

// find returns the position of the message of out with the given id, or
// -1: in pos, the positions of out's ids, when it is not nil.
func find(out Messages, pos map[string]int, id string) int {
	if pos == nil {
		return out.Index(id)
	}
	if i, ok := pos[id]; ok {
		return i
	}
	return -1
}

// appendsOnly reports whether update only adds messages: no removal, no
// id already in m or repeated in update. pos, when not nil, is the set of
// m's ids (see positions).
func (m Messages) appendsOnly(update Messages, pos map[string]int) bool {
	var seen map[string]struct{}
	if pos != nil {
		seen = make(map[string]struct{}, len(update))
	}
	for i := range update {
		u := &update[i]
		if u.Role == RoleRemove {
			return false
		}
		if u.ID == "" || u.ID == RemoveAll {
			continue // gets a new id
		}
		if pos == nil {
			if m.Index(u.ID) >= 0 || update[:i].Index(u.ID) >= 0 {
				return false
			}
			continue
		}
		if _, ok := pos[u.ID]; ok {
			return false
		}
		if _, ok := seen[u.ID]; ok {
			return false
		}
		seen[u.ID] = struct{}{}
	}
	return true
}

// appendsOne reports whether merging u into m appends it, as appendsOnly
// reports for an update of one message: it is no removal, and its id is
// not in m.
func appendsOne(m Messages, u *Message) bool {
	return u.Role != RoleRemove && (u.ID == "" || u.ID == RemoveAll || m.Index(u.ID) < 0)
}

// Index returns the position of the message with the given id, or -1. The
// empty id is never found.
func (m Messages) Index(id string) int {
	if id == "" {
		return -1
	}
	// Writes mostly touch recent messages: search from the end. Every
	// merge searches the conversation for each message it adds, so the
	// last byte is compared first: ids of one form (NewID's) differ there
	// 15 times in 16, and the full comparison is a call.
	end := id[len(id)-1]
	for i := len(m) - 1; i >= 0; i-- {
		if x := m[i].ID; len(x) == len(id) && x[len(x)-1] == end && x == id {
			return i
		}
	}
	return -1
}

// Last returns the last message and true, or the zero Message and false when
// m is empty.
func (m Messages) Last() (Message, bool) {
	if len(m) == 0 {
		return Message{}, false
	}
	return m[len(m)-1], true
}

// NewID returns a new random message ID, such as "m-3f9a0c1d2b4e5f60", the
// kind [Messages.Merge] gives a message that has none.
func NewID() string {
	var buf [18]byte
	b := append(buf[:0], "m-"...)
	u := rand.Uint64()
	const hex = "0123456789abcdef"
	for i := 60; i >= 0; i -= 4 {
		b = append(b, hex[(u>>uint(i))&0xf])
	}
	return string(b)
}
