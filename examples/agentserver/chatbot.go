package agentserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/agentgraph/agentgraph/agent/model"
	"github.com/agentgraph/agentgraph/agent/server"
	"github.com/agentgraph/agentgraph/agent/server/guard"
	"github.com/agentgraph/agentgraph/examples/chatbot"
	"github.com/agentgraph/agentgraph/examples/chatbot/chatevent"
	"github.com/agentgraph/agentgraph/graph"
	"github.com/agentgraph/agentgraph/graph/checkpoint"
	"github.com/agentgraph/agentgraph/operator/elicit"
)

// Conversation is the state of the "chatbot" graph: a conversation's
// messages, in LangChain's form on the wire ({"messages": [...]}).
type Conversation struct {
	Messages model.Messages
}

// conversationMessages merges messages by id (model.Messages.Merge).
var conversationMessages = graph.Declare(func(s *Conversation) *model.Messages { return &s.Messages })

// Chatbot builds the "chatbot" graph on saver: one node, "turn", that
// answers the conversation's last user message with a turn of bot (its
// whole chat graph: supervisor, tools, workflows, writer). The thread is
// the bot's conversation, so the bot's memory of it carries over from
// turn to turn; the run's context (server.RunContext) is the turn's
// client context. The turn is the run's principal's (guard.Principal,
// chatbot.WithPrincipal): each API principal's conversations are its
// own, counted against its own Config.MaxConversations. Registered with
// server.WithThreadDeleted(forgetConversation(bot)), the bot's
// conversation goes with its thread. The answer streams as messages-tuple chunks, and the
// turn's other events (supervisor decisions, tool progress, usage) as
// custom events {"type", "data"}.
//
// A question the bot asks the user mid-turn (an MCP elicitation, such as
// the demo booking's form) is not carried over the Agent Server API: it
// is declined, as a client without forms would.
func Chatbot(bot *chatbot.Bot, saver checkpoint.Saver) (*graph.Compiled[Conversation], error) {
	g := graph.New[Conversation]()
	g.AddNode("turn", func(ctx context.Context, s Conversation) (graph.Update[Conversation], error) {
		var question string
		for _, m := range s.Messages {
			if m.Role == model.RoleUser {
				question = m.Text()
			}
		}
		if question == "" {
			return graph.Update[Conversation]{}, errors.New("agentserver: the chatbot graph needs a user message in messages")
		}
		ctx, err := botContext(ctx)
		if err != nil {
			return graph.Update[Conversation]{}, err
		}
		cfg := graph.ConfigFrom(ctx)
		req := chatbot.Request{ConversationID: cfg.ThreadID, RequestID: cfg.RunID, Message: question, Context: server.RunContext(ctx)}
		var answer strings.Builder
		for ev, err := range bot.Chat(ctx, req) {
			if err != nil {
				return graph.Update[Conversation]{}, err
			}
			switch p := ev.Payload.(type) {
			case chatevent.ResponseChunk:
				answer.WriteString(p.Content)
				if err := graph.EmitMessage(ctx, model.Chunk{Kind: model.ChunkText, Text: p.Content}); err != nil {
					return graph.Update[Conversation]{}, err
				}
			case chatevent.ElicitationRequest:
				if err := bot.Respond(ctx, chatevent.ElicitationResponse{Response: elicit.Response{ElicitationID: p.ElicitationID, Action: elicit.Decline}}); err != nil {
					return graph.Update[Conversation]{}, err
				}
			default:
				if err := graph.Emit(ctx, map[string]any{"type": ev.Type, "data": ev.Payload}); err != nil {
					return graph.Update[Conversation]{}, err
				}
			}
		}
		reply := model.Assistant(answer.String())
		reply.ID = model.NewID()
		return conversationMessages.Set(model.Messages{reply}), nil
	})
	g.AddEdge(graph.START, "turn").AddEdge("turn", graph.END)
	return g.Compile(graph.WithCheckpointer(saver))
}

// botContext is ctx naming the run's principal (guard.Principal) as the
// bot's (chatbot.WithPrincipal); without authentication, the bot's
// LocalPrincipal. A principal the bot cannot keep apart from the others
// (chatbot.CheckPrincipal: one holding '/', say, or an authenticated
// principal named LocalPrincipal, which would reach the conversations
// of requests without authentication) is refused.
func botContext(ctx context.Context) (context.Context, error) {
	p := guard.Principal(ctx)
	if p == "" {
		return ctx, nil
	}
	if err := chatbot.CheckPrincipal(p); err != nil {
		return nil, fmt.Errorf("agentserver: the chatbot graph refuses the run's principal: %w; name principals as chatbot.CheckPrincipal accepts (server.APIKeys, Config.Authenticate)", err)
	}
	return chatbot.WithPrincipal(ctx, p), nil
}

// forgetConversation is the chatbot graph's server.WithThreadDeleted
// function: it deletes the bot's conversation of the deleted thread, of
// the thread's principal, so that it no longer counts against
// chatbot.Config.MaxConversations and a new thread given the same id
// starts with an empty conversation. A thread the bot has no
// conversation for (one that ran another graph, or none) is done.
func forgetConversation(bot *chatbot.Bot) func(ctx context.Context, threadID string) error {
	return func(ctx context.Context, threadID string) error {
		ctx, err := botContext(ctx)
		if err != nil {
			return err
		}
		err = bot.DeleteConversation(ctx, threadID)
		if errors.Is(err, chatbot.ErrUnknownConversation) {
			return nil
		}
		return err
	}
}

// conversationCodec reads and writes a Conversation in LangChain's form.
var conversationCodec = server.Codec[Conversation]{
	Input: func(data json.RawMessage) (Conversation, error) {
		var in struct {
			Messages json.RawMessage `json:"messages"`
		}
		if err := json.Unmarshal(data, &in); err != nil {
			return Conversation{}, err
		}
		if len(in.Messages) == 0 {
			return Conversation{}, nil
		}
		ms, err := server.DecodeMessages(in.Messages)
		return Conversation{Messages: ms}, err
	},
	Values: func(s Conversation) (json.RawMessage, error) {
		return json.Marshal(map[string]any{"messages": server.EncodeMessages(s.Messages)})
	},
}
