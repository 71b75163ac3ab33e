package model_test

import (
	"fmt"
	"testing"

	"github.com/agentgraph/agentgraph/agent/model"
)

// conversation returns n user messages with ids prefix0, prefix1, ….
func conversation(prefix string, n int) model.Messages {
	m := make(model.Messages, n)
	for i := range m {
		m[i] = model.Message{ID: fmt.Sprintf("%s%d", prefix, i), Role: model.RoleUser}
	}
	return m
}

// BenchmarkMessagesMerge merges updates of several shapes and sizes: a
// turn's few new messages and one edit into a conversation (the common
// case), and a large update (a bulk import, a restored conversation, a
// hostile input) of new ids or of edits and removals.
func BenchmarkMessagesMerge(b *testing.B) {
	for _, conv := range []int{100, 10000} {
		m := conversation("c", conv)
		m = m[:len(m):len(m)] // no room: every merge copies, as a checkpointed state's does
		b.Run(fmt.Sprintf("conv=%d/append=2", conv), func(b *testing.B) {
			up := conversation("u", 2)
			b.ReportAllocs()
			for b.Loop() {
				_ = m.Merge(up)
			}
		})
		b.Run(fmt.Sprintf("conv=%d/edit=1", conv), func(b *testing.B) {
			up := model.Messages{m[conv-2]}
			b.ReportAllocs()
			for b.Loop() {
				_ = m.Merge(up)
			}
		})
	}
	for _, n := range []int{100, 1000, 10000} {
		b.Run(fmt.Sprintf("conv=0/append=%d", n), func(b *testing.B) {
			up := conversation("u", n)
			b.ReportAllocs()
			for b.Loop() {
				_ = model.Messages(nil).Merge(up)
			}
		})
		b.Run(fmt.Sprintf("conv=%d/edit+remove=%d", n, n), func(b *testing.B) {
			m := conversation("c", n)
			up := make(model.Messages, n)
			for i := range up {
				up[i] = m[i]
				if i%2 == 1 {
					up[i] = model.Remove(m[i].ID)
				}
			}
			b.ReportAllocs()
			for b.Loop() {
				_ = m.Merge(up)
			}
		})
	}
}
