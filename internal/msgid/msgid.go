// Package msgid writes the random message ids of model.NewID's form: "m-"
// and sixteen lowercase hexadecimal digits.
package msgid

import (
	"encoding/binary"
	"math/rand/v2"
)

// Len is the length of an id: "m-" and 16 hexadecimal digits.
const Len = 18

// Put writes a new random id to b[:Len]; b must be at least Len bytes
// long.
func Put(b []byte) {
	b = b[:Len]
	b[0], b[1] = 'm', '-'
	u := rand.Uint64()
	// The digits of u, most significant first: eight at a time, each
	// half of u spread a nibble per byte.
	binary.BigEndian.PutUint64(b[2:10], hexDigits(uint32(u>>32)))
	binary.BigEndian.PutUint64(b[10:18], hexDigits(uint32(u)))
}

// hexDigits returns the eight lowercase hexadecimal digits of v, the most
// significant in the returned value's high byte.
func hexDigits(v uint32) uint64 {
	x := uint64(v)
	x = (x | x<<16) & 0x0000ffff0000ffff
	x = (x | x<<8) & 0x00ff00ff00ff00ff
	x = (x | x<<4) & 0x0f0f0f0f0f0f0f0f
	// A byte of x is a digit's value d: '0'+d, and 'a'-'0'-10 more where
	// d is 10 or over, which adding 6 carries into the byte's bit 4.
	over := ((x + 0x0606060606060606) >> 4) & 0x0101010101010101
	return x + 0x3030303030303030 + over*('a'-'0'-10)
}
