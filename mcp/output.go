package mcp

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	sjson "github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"go.uber.org/zap"

	"github.com/agentgraph/agentgraph/internal/schemacheck"
)

// maxOutputProblems is the most mismatches an output check names; the
// rest are counted.
const maxOutputProblems = 10

// maxOutputLine and maxOutputMessage bound the text of an output check's
// mismatches, which quotes the server's schema and result (enum values,
// patterns, property names): each line is clipped to maxOutputLine bytes,
// the whole message to maxOutputMessage, each cut ending in ClippedMarker.
const (
	maxOutputLine    = 256
	maxOutputMessage = 4 << 10
)

// outputCheck is a tool's declared output schema (MCP outputSchema),
// compiled when a call of the tool first returns, once per listing of the
// server's tools.
type outputCheck struct {
	decl mcpgo.Tool // the tool as listed; only its output schema is read
	once sync.Once
	sch  *sjson.Schema
	cost []int64 // schemaCost of the schema
	err  error   // why the schema cannot check results
}

// newOutputCheck returns the check of t's results, or nil when t declares
// no output schema. A declared schema without "type" is checked as one
// of type "object": MCP's structuredContent is an object.
func newOutputCheck(t mcpgo.Tool) *outputCheck {
	o := t.OutputSchema
	if t.RawOutputSchema == nil && o.Type == "" && o.Properties == nil && len(o.Required) == 0 && o.Defs == nil && o.AdditionalProperties == nil {
		return nil
	}
	return &outputCheck{decl: t}
}

// schema compiles the declared schema on first use. A schema over
// MaxInputSchemaBytes, or one that does not compile, checks nothing: the
// fault is the server's, and it is logged once per listing.
func (o *outputCheck) schema(log *zap.Logger) (*sjson.Schema, error) {
	o.once.Do(func() {
		raw := o.decl.RawOutputSchema
		if raw == nil {
			decl := o.decl.OutputSchema
			if decl.Type == "" {
				decl.Type = "object"
			}
			raw, o.err = json.Marshal(decl)
		}
		switch {
		case o.err != nil:
		case len(raw) > MaxInputSchemaBytes:
			o.err = fmt.Errorf("it is %d bytes, over the limit of %d (MaxInputSchemaBytes)", len(raw), MaxInputSchemaBytes)
		default:
			o.sch, o.err = schemacheck.Compile(raw)
			if o.err == nil {
				o.cost = schemaCost(raw)
			}
		}
		o.decl = mcpgo.Tool{Name: o.decl.Name} // the schema is compiled; drop its source
		if o.err != nil {
			log.Warn("mcp tool's output schema not used; its results are not checked against it",
				zap.String("tool", o.decl.Name), zap.Error(o.err))
		}
	})
	return o.sch, o.err
}

// bounded says whether checking v against the schema stays within the
// bounds of output checks (maxOutputDepth, maxOutputNodes,
// maxOutputWork), and if not, why.
func (o *outputCheck) bounded(v any) (string, bool) {
	depth, nodes := valueShape(v)
	switch {
	case depth > maxOutputDepth:
		return fmt.Sprintf("structuredContent is nested over %d deep", maxOutputDepth), false
	case nodes > maxOutputNodes:
		return fmt.Sprintf("structuredContent has over %d values", maxOutputNodes), false
	case len(o.cost) <= depth || o.cost[depth] == costUnbounded:
		return "the output schema's cost cannot be bounded (a reference outside the document, a nested $id, or a recursion that consumes no value)", false
	case int64(nodes)*o.cost[depth] > maxOutputWork:
		return fmt.Sprintf("checking %d values nested %d deep against the output schema could take over %d schema evaluations", nodes, depth, maxOutputWork), false
	}
	return "", true
}

// check returns why res does not conform to the tool's output schema, or
// "" when it does (or the schema cannot check it). A result that is an
// error (isError) is not checked: the schema describes successes. A result
// whose check would pass the bounds of output checks is not checked
// either; that is logged.
func (o *outputCheck) check(server, tool string, res *mcpgo.CallToolResult, log *zap.Logger) string {
	if res.IsError {
		return ""
	}
	sch, err := o.schema(log)
	if err != nil {
		return ""
	}
	head := fmt.Sprintf("mcp: tool %q of server %q returned a result that does not match its output schema", tool, server)
	if res.StructuredContent == nil {
		return head + ": it has no structuredContent, which a tool that declares an output schema must return"
	}
	if why, ok := o.bounded(res.StructuredContent); !ok {
		log.Warn("mcp tool's result not checked against its output schema",
			zap.String("server", server), zap.String("tool", tool), zap.String("reason", why))
		return ""
	}
	err = sch.Validate(res.StructuredContent)
	if err == nil {
		return ""
	}
	var ve *sjson.ValidationError
	if !errors.As(err, &ve) {
		return clipText(head+": "+err.Error(), maxOutputMessage)
	}
	var b strings.Builder
	b.WriteString(head + ":")
	vs := schemacheck.Violations(ve)
	for i, v := range vs {
		if i == maxOutputProblems {
			fmt.Fprintf(&b, "\n- and %d more", len(vs)-i)
			break
		}
		path := v.Path
		if path == "" {
			path = "(structuredContent)"
		}
		var text string
		switch v.Kind.(type) {
		case *kind.Required:
			text = "is required but missing"
		case *kind.AdditionalProperties:
			text = "is not allowed by the schema"
		default:
			text = v.Kind.LocalizedString(schemacheck.English)
		}
		line := clipText("\n- "+path+": "+text, maxOutputLine)
		if b.Len()+len(line) > maxOutputMessage-len("\n- and 9999 more") {
			fmt.Fprintf(&b, "\n- and %d more", len(vs)-i)
			break
		}
		b.WriteString(line)
	}
	return clipText(b.String(), maxOutputMessage)
}
