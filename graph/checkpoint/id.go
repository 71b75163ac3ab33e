package checkpoint

import (
	"math/rand/v2"
	"sync/atomic"
	"time"
)

// idClock holds the time part of the last ID made by this process: the
// Unix time in milliseconds shifted left by idSeqBits, plus a sequence
// number within that millisecond. It only ever grows, so IDs made by one
// process sort in the order they were made even if the wall clock steps
// back or more than 2^idSeqBits IDs are made in one millisecond (the clock
// part then runs ahead of the wall clock until it catches up).
var idClock atomic.Uint64

const idSeqBits = 22 // 4 million IDs per millisecond before borrowing from the next

// NewID returns a new checkpoint ID: a UUID version 7 (RFC 9562) in its
// 36-character text form. Its text sorts in the order the IDs were made
// within a process, and by millisecond across processes.
//
// The first 48 bits are the Unix time in milliseconds, the next 22 bits
// (around the version and variant bits) a sequence number within the
// millisecond, and the last 52 bits random (from the runtime's
// cryptographically seeded generator), which keeps IDs made by different
// processes in the same millisecond distinct. Making one costs a clock read
// and an atomic operation, not a system call.
func NewID() string { return newID(time.Now()) }

// newID makes an ID for a checkpoint created at now.
func newID(now time.Time) string {
	var b [36]byte
	writeID(&b, now)
	return string(b[:])
}

// writeID writes a new ID for a checkpoint created at now to b.
func writeID(b *[36]byte, now time.Time) {
	ms := uint64(now.UnixMilli())
	var c uint64
	for {
		old := idClock.Load()
		c = ms << idSeqBits
		if c <= old {
			c = old + 1
		}
		if idClock.CompareAndSwap(old, c) {
			break
		}
	}
	seq := c & (1<<idSeqBits - 1)
	ms = c >> idSeqBits
	r := rand.Uint64()
	hi := ms<<16 | 0x7<<12 | seq>>10         // time, version 7, sequence high 12 bits
	lo := 0b10<<62 | (seq&0x3ff)<<52 | r>>12 // variant, sequence low 10 bits, 52 random bits
	const digits = "0123456789abcdef"
	put := func(at int, v uint64, n int) { // n hex digits of v, most significant first
		for i := n - 1; i >= 0; i-- {
			b[at+i] = digits[v&0xf]
			v >>= 4
		}
	}
	put(0, hi>>32, 8)
	b[8] = '-'
	put(9, hi>>16&0xffff, 4)
	b[13] = '-'
	put(14, hi&0xffff, 4)
	b[18] = '-'
	put(19, lo>>48, 4)
	b[23] = '-'
	put(24, lo&0xffffffffffff, 12)
}
