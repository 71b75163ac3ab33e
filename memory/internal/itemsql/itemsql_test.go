package itemsql

import (
	"testing"

	"github.com/agentgraph/agentgraph/memory"
)

func TestOp(t *testing.T) {
	for op, want := range map[string]string{memory.OpEq: "=", memory.OpGt: ">", memory.OpGte: ">=", memory.OpLt: "<", memory.OpLte: "<="} {
		if got := Op(op); got != want {
			t.Errorf("Op(%s) = %s, want %s", op, got, want)
		}
	}
}
