package chatbot_test

import (
	"context"
	"strings"
	"testing"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/agentgraph/agentgraph/examples/chatbot"
)

// fix4Cases are classes the offline demo model got wrong once the asked
// kind (place, duration), foreign arithmetic and synonym groups were in:
// each class by the input that showed it and one or two other phrasings.
var fix4Cases = []demoCase{
	// A digit, a sign and a digit in a sentence in another language is
	// not arithmetic unless a foreign operator word was read.
	{kind: "not-calc", say: "¿Tienen soporte 24/7?", notTools: []string{"calculate"}},
	{kind: "not-calc", say: "Somos 10-15 usuarios, ¿qué plan nos conviene?", notTools: []string{"calculate"}},
	{kind: "not-calc", say: "Mein Auftrag 4521-889 ist nicht angekommen", notTools: []string{"calculate"}},
	// Number words next to a number, or "por"/"entre" outside an
	// arithmetic frame, are not operands.
	{kind: "not-calc", say: "¿Es seguro al cien por cien?", notTools: []string{"calculate"}},
	{kind: "not-calc", say: "Revisamos los paneles uno por uno", notTools: []string{"calculate"}},
	{kind: "not-calc", say: "¿Hay una oferta 2 por 1?", notTools: []string{"calculate"}},

	// Decimal commas and dot thousands in foreign arithmetic.
	{kind: "calc-lang", say: "Was ist 2,5 mal 4?", tools: []string{"calculate"}, want: []string{"= 10"}},
	{kind: "calc-lang", say: "Combien font 7,5 fois 2 ?", tools: []string{"calculate"}, want: []string{"= 15"}},
	{kind: "calc-lang", say: "Was ist 1.000 geteilt durch 8?", tools: []string{"calculate"}, want: []string{"= 125"}},
	{kind: "calc-lang", say: "¿Cuánto es 2.500 más 1,5?", tools: []string{"calculate"}, want: []string{"= 2501.5"}},

	// "where" asking how or through what, not a place.
	{kind: "where-not-place", say: "Where do Team customers get support?", want: []string{"email support"}},
	{kind: "where-not-place", say: "Where do Business customers get help?", want: []string{"live chat"}},

	// quick/fast/soon that do not ask a duration.
	{kind: "not-duration", say: "Quick question: do non-profits get a discount?", want: []string{"40% off"}},
	{kind: "not-duration", say: "Fast question, is there a discount for schools?", want: []string{"40% off"}},

	// The owner of an attribute named with a verb or adjective.
	{kind: "owner", say: "What's the cost of adding viewers?", want: []string{"free"}, notWant: notInDocuments},
	{kind: "owner", say: "What's the price of extra viewers?", want: []string{"free"}, notWant: notInDocuments},

	// A server or host is not a region.
	{kind: "not-place", say: "Can we host Acme on our own servers?", want: []string{"cloud service only"}},
	{kind: "not-place", say: "Do you support SQL Server?", want: []string{"SQL Server"}, notWant: []string{"Frankfurt"}},
	{kind: "not-place", say: "Can I run Acme on my own server?", want: []string{"cloud service only"}},

	// "get back" that is not a reply.
	{kind: "not-reply", say: "How do I get back a deleted dashboard?", notWant: []string{"First-response"}},
	{kind: "not-reply", say: "Can I get back my money?", notWant: []string{"First-response"}},

	// "support" as the subject of the question.
	{kind: "support", say: "What is support like on the Team plan?", want: []string{"email support"}},
	{kind: "support", say: "What are support hours?", want: []string{"08:00"}},
	{kind: "support", say: "What about support for SAML?", want: []string{"SAML"}},

	// A question asking which things exist leads with the sentence that
	// lists them.
	{kind: "list", say: "What plans do you offer?", lead: "four pricing tiers"},
	{kind: "list", say: "Hi, what plans do you offer?", want: []string{"four pricing tiers"}, notWant: []string{"Academy"}},
	{kind: "list", say: "Which plans are available?", want: []string{"four pricing tiers"}},
	{kind: "list", say: "What tiers are there?", lead: "four pricing tiers"},
	{kind: "list", say: "What kind of support do you provide?", want: []string{"email support"}, notWant: notInDocuments},
	{kind: "list", say: "What types of support are there?", want: []string{"email support"}, notWant: notInDocuments},
}

// TestDemoFix4 checks every class above.
func TestDemoFix4(t *testing.T) {
	runDemoCases(t, fix4Cases, true)
}

// empty wraps a tool so that every call answers with nothing found.
func empty(string, server.ToolHandlerFunc) server.ToolHandlerFunc {
	return func(context.Context, mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
		return mcpgo.NewToolResultText(""), nil
	}
}

// TestDeadEndNamesOnlyKnownTopics: a question nothing answers names the
// bundled knowledge base's topics only when that server runs and was
// searched; servers of one's own cover what they cover.
func TestDeadEndNamesOnlyKnownTopics(t *testing.T) {
	servers := bundledWith(t, empty, "search_knowledge", "web_search")
	_, srv := newServer(t, chatbot.Config{NoBundledServers: true, MCPServers: servers})
	answer := chat(t, srv, "", "How much does the Team plan cost?").answer()
	if !strings.HasPrefix(answer, "I'm sorry, I couldn't find an answer") {
		t.Fatalf("answer is not a dead end:\n%s", answer)
	}
	if strings.Contains(answer, "pricing and plans") {
		t.Errorf("the dead end names the bundled knowledge base's topics, which no server here covers:\n%s", answer)
	}
}
