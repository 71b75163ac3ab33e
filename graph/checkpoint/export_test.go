package checkpoint

import (
	"context"
	"fmt"
)

// CorruptBlob implements checkpointtest.Corrupter for the tests.
func (m *Memory) CorruptBlob(_ context.Context, threadID, channel string, n int64, kind Kind, base int64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	t := m.threads[threadID]
	if t == nil || n < t.first || n-t.first >= int64(len(t.written)) {
		return fmt.Errorf("thread %q has no blobs written by checkpoint %d", threadID, n)
	}
	w := t.written[n-t.first]
	for i := range w {
		if w[i].channel == channel {
			w[i].Kind, w[i].Base = uint8(kind), base
			return nil
		}
	}
	return fmt.Errorf("checkpoint %d of thread %q wrote no blob for %q", n, threadID, channel)
}

// CorruptRef implements checkpointtest.Corrupter for the tests.
func (m *Memory) CorruptRef(_ context.Context, threadID string, n int64, channel string, writer int64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	t := m.threads[threadID]
	if t == nil {
		return fmt.Errorf("no thread %q", threadID)
	}
	for _, c := range t.order {
		if c.seq != n {
			continue
		}
		for i := range c.refs {
			if c.refs[i].Channel == channel {
				c.refs[i].Writer = writer
				return nil
			}
		}
		return fmt.Errorf("checkpoint %d of thread %q has no channel %q", n, threadID, channel)
	}
	return fmt.Errorf("thread %q has no checkpoint %d", threadID, n)
}
