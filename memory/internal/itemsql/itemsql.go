// Package itemsql holds what the SQL item stores of memory
// (memory/postgres, memory/sqlite) write the same way in their queries.
package itemsql

import "github.com/agentgraph/agentgraph/memory"

// Op returns the SQL comparison operator of a filter condition's Op
// (memory.OpGt ... memory.OpLte), and "=" for any other (memory.OpEq; a
// store writes memory.OpNe as NOT of the equality).
func Op(op string) string {
	switch op {
	case memory.OpGt:
		return ">"
	case memory.OpGte:
		return ">="
	case memory.OpLt:
		return "<"
	case memory.OpLte:
		return "<="
	}
	return "="
}
