package agentserver

import (
	"encoding/json"
	"time"

	"github.com/agentgraph/agentgraph/agent/model"
	"github.com/agentgraph/agentgraph/agent/server"
	"github.com/agentgraph/agentgraph/examples/bosai"
)

// bosaiCodec serves Bos-AI's graph (bosai.Bot.Graph) to LangGraph
// clients. A run's input is a request ({"question", "context",
// "prefer_agents", ...}, bosai.Request's JSON) or a chat input
// ({"messages": [...]}, whose last user message is the question). The
// values are the plan, the agents' results and the response, with
// "messages" (the question and the answer) for chat UIs; the trace streams
// as custom events while the agents run.
//
// A run's input is checked by b.CheckUntrusted, as Bos-AI's own HTTP
// API checks its requests: a context api_headers or an api_base_url b may
// not call is refused. The values leave out the context's secrets
// (bosai.Request.WithoutSecrets).
func bosaiCodec(b *bosai.Bot) server.Codec[bosai.State] {
	return server.Codec[bosai.State]{
		Input: func(data json.RawMessage) (bosai.State, error) {
			var req bosai.Request
			if err := json.Unmarshal(data, &req); err != nil {
				return bosai.State{}, err
			}
			var chat struct {
				Messages json.RawMessage `json:"messages"`
			}
			if err := json.Unmarshal(data, &chat); err == nil && len(chat.Messages) > 0 {
				ms, err := server.DecodeMessages(chat.Messages)
				if err != nil {
					return bosai.State{}, err
				}
				for _, m := range ms {
					if m.Role == model.RoleUser {
						req.Question = m.Text()
					}
				}
			}
			req = req.Normalize()
			if err := b.CheckUntrusted(req); err != nil {
				return bosai.State{}, err
			}
			// The dates Bos-AI's Run adds for the planner, unless given.
			now := time.Now().UTC()
			c := map[string]string{"current_datetime_utc": now.Format(time.RFC3339), "current_date": now.Format(time.DateOnly)}
			for k, v := range req.Context {
				c[k] = v
			}
			req.Context = c
			return bosai.State{Request: req}, nil
		},
		Values: func(s bosai.State) (json.RawMessage, error) {
			msgs := model.Messages{}
			if q := s.Request.Question; q != "" {
				m := model.User(q)
				m.ID = "question"
				msgs = append(msgs, m)
			}
			if a := s.Response.Answer; a != "" {
				m := model.Assistant(a)
				m.ID = "answer"
				msgs = append(msgs, m)
			}
			return json.Marshal(map[string]any{"messages": server.EncodeMessages(msgs), "request": s.Request.WithoutSecrets(), "plan": s.Plan,
				"results": s.Results, "response": s.Response})
		},
	}
}
