package msgid

import (
	"encoding/binary"
	"fmt"
	"testing"
)

// hexDigits writes every digit value in every position as fmt does.
func TestHexDigits(t *testing.T) {
	vals := []uint32{0, 0xffffffff, 0x01234567, 0x89abcdef, 0xfedcba98, 0x9a9a9a9a, 0xa9a9a9a9, 0x0000000f, 0xf0000000}
	for d := range uint32(16) {
		for k := range 8 {
			vals = append(vals, d<<(4*k), ^(d << (4 * k)))
		}
	}
	for i := range 1000 {
		vals = append(vals, uint32(i)*2654435761)
	}
	for _, v := range vals {
		var b [8]byte
		binary.BigEndian.PutUint64(b[:], hexDigits(v))
		if got, want := string(b[:]), fmt.Sprintf("%08x", v); got != want {
			t.Fatalf("hexDigits(%#x) = %q, want %q", v, got, want)
		}
	}
}

func TestPut(t *testing.T) {
	b := make([]byte, Len+2)
	b[Len], b[Len+1] = '!', '!'
	Put(b)
	if b[0] != 'm' || b[1] != '-' || b[Len] != '!' {
		t.Fatalf("id %q", b)
	}
	for _, c := range b[2:Len] {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			t.Fatalf("id %q: %q is no lowercase hexadecimal digit", b[:Len], c)
		}
	}
	var c [Len]byte
	Put(c[:])
	if string(c[:]) == string(b[:Len]) {
		t.Fatalf("two ids alike: %s", c[:])
	}
}
