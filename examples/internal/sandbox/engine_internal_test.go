package sandbox

import (
	"context"
	"testing"
)

// BenchmarkExecuteInProcess is the interpreter alone, as runs went before
// they moved to workers: the baseline of BenchmarkRun.
func BenchmarkExecuteInProcess(b *testing.B) {
	o := &wireOptions{Filename: "code.star", Globals: []string{"result"}, MaxSteps: 1000, Timeout: int64(1e9), LoadError: ErrLoadDisabled.Error()}
	b.ReportAllocs()
	for b.Loop() {
		if _, werr := execute(context.Background(), "result = 6 * 7", o, nil); werr != nil {
			b.Fatal(werr.Msg)
		}
	}
}
