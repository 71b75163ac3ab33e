package mcp

import (
	"encoding/json"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"unsafe"
)

// Output checks are bounded in cost: a schema whose keywords apply
// several subschemas to the same value, through a $ref that recurs, costs
// exponentially in the nesting depth of the result it checks. Before a
// result is checked, its size and depth are measured and the schema's
// worst-case work for that depth is estimated; a result over any bound is
// not checked (logged), rather than checked at unbounded cost.
const (
	// maxOutputDepth is the deepest structuredContent an output schema
	// checks.
	maxOutputDepth = 64
	// maxOutputNodes is the most values (objects, arrays and scalars)
	// of a structuredContent an output schema checks.
	maxOutputNodes = 1 << 16
	// maxOutputWork bounds the schema evaluations of one check: the
	// values of the result times the most evaluations one value can
	// take at the result's depth.
	maxOutputWork = 1 << 20
)

// costUnbounded marks a schema whose work cannot be bounded statically:
// a reference it cannot follow, or one that recurs without consuming
// the value (which the validator itself refuses).
const costUnbounded = -1

// schemaCost returns, for each remaining value depth d in
// 0..maxOutputDepth, an upper bound on the schema evaluations that
// applying the schema in doc to one value of depth d takes along one
// path down the value (costUnbounded when it has none), saturating at
// maxOutputWork+1. Only references within the document ("#" and "#/...")
// are followed; a schema with any other reference, or a nested $id that
// would change what "#" names, is unbounded.
func schemaCost(doc []byte) []int64 {
	var root any
	if err := json.Unmarshal(doc, &root); err != nil {
		return nil
	}
	a := &costAnalysis{root: root, memo: map[costKey]int64{}, busy: map[costKey]bool{}}
	out := make([]int64, maxOutputDepth+1)
	for d := range out {
		out[d] = a.cost(root, d, true)
	}
	return out
}

type costKey struct {
	node  unsafe.Pointer // the schema object's map
	depth int
}

type costAnalysis struct {
	root any
	memo map[costKey]int64
	busy map[costKey]bool
}

// Keywords that apply subschemas to the value itself, and to its members
// or items.
var (
	inPlaceOne   = []string{"not", "if", "then", "else"}
	inPlaceMany  = []string{"allOf", "anyOf", "oneOf"}
	inPlaceMap   = []string{"dependentSchemas", "dependencies"}
	childOne     = []string{"additionalProperties", "propertyNames", "additionalItems", "contains", "unevaluatedItems", "unevaluatedProperties", "items"}
	childMany    = []string{"prefixItems", "items"}
	childMap     = []string{"properties", "patternProperties"}
	refKeywords  = []string{"$ref", "$dynamicRef", "$recursiveRef"}
	costSaturate = int64(maxOutputWork + 1)
)

func sat(v int64) int64 { return min(v, costSaturate) }

// cost bounds the evaluations of schema s applied to a value of depth d.
func (a *costAnalysis) cost(s any, d int, isRoot bool) int64 {
	m, ok := s.(map[string]any)
	if !ok {
		return 1 // true, false, or not a schema
	}
	if !isRoot {
		if _, ok := m["$id"]; ok {
			return costUnbounded
		}
		if _, ok := m["id"].(string); ok {
			return costUnbounded
		}
	}
	k := costKey{reflect.ValueOf(m).UnsafePointer(), d}
	if v, ok := a.memo[k]; ok {
		return v
	}
	if a.busy[k] {
		return costUnbounded // recursion at the same depth
	}
	a.busy[k] = true
	defer delete(a.busy, k)
	total := int64(1)
	add := func(v int64) bool {
		if v == costUnbounded {
			total = costUnbounded
			return false
		}
		total = sat(total + v)
		return true
	}
	for _, kw := range refKeywords {
		r, ok := m[kw].(string)
		if !ok {
			continue
		}
		t, ok := a.resolve(r)
		if !ok || !add(a.cost(t, d, r == "#")) {
			a.memo[k] = costUnbounded
			return costUnbounded
		}
	}
	for _, kw := range inPlaceOne {
		if sub, ok := m[kw]; ok && !add(a.cost(sub, d, false)) {
			a.memo[k] = costUnbounded
			return costUnbounded
		}
	}
	for _, kw := range inPlaceMany {
		subs, _ := m[kw].([]any)
		for _, sub := range subs {
			if !add(a.cost(sub, d, false)) {
				a.memo[k] = costUnbounded
				return costUnbounded
			}
		}
	}
	for _, kw := range inPlaceMap {
		subs, _ := m[kw].(map[string]any)
		for _, sub := range subs {
			if !add(a.cost(sub, d, false)) {
				a.memo[k] = costUnbounded
				return costUnbounded
			}
		}
	}
	if d > 0 {
		child := func(sub any) bool { return add(a.cost(sub, d-1, false)) }
		ok := true
		for _, kw := range childOne {
			if sub, has := m[kw]; has && ok {
				if _, isArr := sub.([]any); !isArr {
					ok = child(sub)
				}
			}
		}
		for _, kw := range childMany {
			subs, _ := m[kw].([]any)
			for _, sub := range subs {
				if ok {
					ok = child(sub)
				}
			}
		}
		for _, kw := range childMap {
			subs, _ := m[kw].(map[string]any)
			for _, sub := range subs {
				if ok {
					ok = child(sub)
				}
			}
		}
		if !ok {
			a.memo[k] = costUnbounded
			return costUnbounded
		}
	}
	a.memo[k] = total
	return total
}

// resolve follows a reference within the document: "#" or a JSON
// pointer "#/...". Any other reference is not followed.
func (a *costAnalysis) resolve(ref string) (any, bool) {
	if ref == "#" {
		return a.root, true
	}
	if !strings.HasPrefix(ref, "#/") {
		return nil, false
	}
	frag, err := url.PathUnescape(ref[1:])
	if err != nil {
		return nil, false
	}
	cur := a.root
	for _, tok := range strings.Split(frag[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch v := cur.(type) {
		case map[string]any:
			next, ok := v[tok]
			if !ok {
				return nil, false
			}
			cur = next
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(v) {
				return nil, false
			}
			cur = v[i]
		default:
			return nil, false
		}
	}
	return cur, true
}

// valueShape returns the depth and the number of values of v, stopping
// once either passes its bound.
func valueShape(v any) (depth, nodes int) {
	type item struct {
		v any
		d int
	}
	stack := []item{{v, 0}}
	for len(stack) > 0 && depth <= maxOutputDepth && nodes <= maxOutputNodes {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		nodes++
		depth = max(depth, it.d)
		switch x := it.v.(type) {
		case map[string]any:
			for _, c := range x {
				stack = append(stack, item{c, it.d + 1})
			}
		case []any:
			for _, c := range x {
				stack = append(stack, item{c, it.d + 1})
			}
		}
	}
	return depth, nodes
}
