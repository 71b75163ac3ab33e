// Package agentserver serves four graphs over LangGraph's Agent Server API
// with package agent/server: "agent", the prebuilt tool-calling agent of
// package react on an offline demo model (or any model.Model);
// "approval", a draft -> review -> finish graph whose review pauses for a
// person; "chatbot", the reference chatbot of examples/chatbot (a thread is
// a conversation, a run a turn); and "bosai", Bos-AI's planner, parallel
// agents and composer of examples/bosai. The official
// @langchain/langgraph-sdk client and useStream talk to it as they talk to
// LangGraph's servers.
package agentserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"iter"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/agentgraph/agentgraph/agent/model"
	"github.com/agentgraph/agentgraph/agent/react"
	"github.com/agentgraph/agentgraph/agent/server"
	"github.com/agentgraph/agentgraph/agent/server/postgres"
	"github.com/agentgraph/agentgraph/examples/bosai"
	"github.com/agentgraph/agentgraph/examples/chatbot"
	"github.com/agentgraph/agentgraph/examples/internal/datadir"
	"github.com/agentgraph/agentgraph/graph"
	"github.com/agentgraph/agentgraph/graph/checkpoint"
	cppg "github.com/agentgraph/agentgraph/graph/checkpoint/postgres"
	"github.com/agentgraph/agentgraph/graph/checkpoint/sqlite"
	"github.com/jackc/pgx/v5/pgxpool"
	"go.uber.org/zap"
)

// Config configures New.
type Config struct {
	// Dir holds the SQLite files (server.db, checkpoints.db) and the
	// chatbot's directory. Required unless Postgres is set. New creates
	// it with mode 0700 and the files with 0600 (and takes the group's
	// and others' access away from a directory of its own files and from
	// its files, which earlier versions left to the umask).
	Dir string
	// Postgres, when set, is the DSN of the PostgreSQL database that keeps
	// threads, runs, event logs and checkpoints instead of the SQLite
	// files; any number of instances given the same database (and Schema)
	// share the work: each serves every thread and every run's stream,
	// and takes over the runs of an instance that died.
	Postgres string
	// Schema is the PostgreSQL schema of the tables; empty means public.
	Schema string
	// Model answers the agent; nil means the offline demo model.
	Model model.Model
	// Server is the server's configuration; its Store and Checkpointer are
	// set by New.
	Server server.Config
	// Chatbot configures the chatbot. The zero value runs it on the model
	// the environment configures, else on its offline demo model. New sets
	// its DataDir to Dir/chatbot or, with Postgres, its Postgres (unless
	// set) to Postgres and its PostgresSchema (unless set) to
	// ChatbotSchema(Schema); set its NATS too, so that instances sharing
	// the database serve each other's resumable turns.
	Chatbot chatbot.Config
	// BosAI configures Bos-AI. The zero value runs it on the model the
	// environment configures, else offline; New sets its Checkpointer to
	// the server's.
	BosAI bosai.Config
}

// App is the running server and what it opened.
type App struct {
	*server.Server
	close []func() error
}

// Close stops the runs and closes the databases.
func (a *App) Close(ctx context.Context) error {
	err := a.Server.Close(ctx)
	for _, c := range slices.Backward(a.close) { // the bots before the databases
		err = errors.Join(err, c())
	}
	return err
}

// ChatbotSchema is the PostgreSQL schema of the chatbot's tables when
// the server's are in schema: schema_chatbot, or chatbot for the default
// schema.
func ChatbotSchema(schema string) string {
	if schema == "" {
		return "chatbot"
	}
	return schema + "_chatbot"
}

// dbFiles reports the SQLite files New keeps in Config.Dir.
var dbFiles = datadir.SQLiteFiles("server.db", "checkpoints.db")

// privateDir makes Config.Dir and the SQLite files New keeps there its
// user's only (datadir.Private, datadir.PrivateFile): they hold every
// principal's threads and checkpoints. The directory holds those files
// and the chatbot's directory, which the chatbot makes private itself.
// log receives the warnings; nil means none.
func privateDir(dir string, log *zap.Logger) error {
	if log == nil {
		log = zap.NewNop()
	}
	own := func(e fs.DirEntry) bool { return dbFiles(e) || e.Name() == "chatbot" && e.IsDir() }
	const field = "agentserver: Config.Dir"
	if err := datadir.Private(dir, own, field, log, os.Chmod); err != nil {
		return err
	}
	for _, db := range []string{"server.db", "checkpoints.db"} {
		if err := datadir.PrivateFile(filepath.Join(dir, db), field, log, os.Chmod); err != nil {
			return err
		}
	}
	return nil
}

// New opens the databases (the SQLite files in cfg.Dir, or PostgreSQL
// when cfg.Postgres is set) and returns the server with the four graphs
// registered.
func New(ctx context.Context, cfg Config) (*App, error) {
	if cfg.Dir == "" && cfg.Postgres == "" {
		return nil, errors.New("agentserver: Config.Dir and Postgres are empty; give the directory for the SQLite files or a PostgreSQL DSN")
	}
	app := &App{}
	fail := func(err error) (*App, error) {
		for _, c := range slices.Backward(app.close) {
			_ = c()
		}
		return nil, err
	}
	var (
		st    server.Store
		saver checkpoint.Saver
	)
	if cfg.Postgres != "" {
		pool, err := pgxpool.New(ctx, cfg.Postgres)
		if err != nil {
			return fail(fmt.Errorf("agentserver: connecting to PostgreSQL: %w", err))
		}
		app.close = append(app.close, func() error { pool.Close(); return nil })
		// The checkpoints below go to the same database: a run's start
		// and its checkpoint saves need not wait for their own WAL
		// flush, as the run's end, which waits for its own, flushes
		// them first (see "Commit durability" in package
		// agent/server/postgres's doc for what a PostgreSQL crash can
		// lose).
		pst, err := postgres.New(ctx, postgres.Config{Pool: pool, Schema: cfg.Schema, SharedCheckpoints: true})
		if err != nil {
			return fail(err)
		}
		psaver, err := cppg.New(ctx, cppg.Config{Pool: pool, Schema: cfg.Schema, AsyncCommit: true})
		if err != nil {
			return fail(err)
		}
		st, saver = pst, psaver
	} else {
		if err := privateDir(cfg.Dir, cfg.Server.Logger); err != nil {
			return fail(err)
		}
		sst, err := server.OpenSQLite(ctx, filepath.Join(cfg.Dir, "server.db"))
		if err != nil {
			return fail(err)
		}
		app.close = append(app.close, sst.Close)
		ssaver, err := sqlite.New(ctx, sqlite.Config{Path: filepath.Join(cfg.Dir, "checkpoints.db")})
		if err != nil {
			return fail(err)
		}
		app.close = append(app.close, ssaver.Close)
		st, saver = sst, ssaver
	}
	sc := cfg.Server
	sc.Store, sc.Checkpointer = st, saver
	srv, err := server.New(sc)
	if err != nil {
		return fail(err)
	}
	app.Server = srv
	m := cfg.Model
	if m == nil {
		m = DemoModel{}
	}
	agent, err := react.New(react.Config{Model: m, Instructions: "You are a helpful assistant.", Checkpointer: saver})
	if err != nil {
		return fail(err)
	}
	if err := server.Register(srv, "agent", agent, server.WithCodec(reactCodec), server.WithInputFields[react.State](reactInput...), server.WithDescription[react.State]("The prebuilt tool-calling agent (package react).")); err != nil {
		return fail(err)
	}
	approval, err := Approval(saver)
	if err != nil {
		return fail(err)
	}
	if err := server.Register(srv, "approval", approval, server.WithDescription[Draft]("Drafts a reply, pauses for approval, then finishes.")); err != nil {
		return fail(err)
	}
	cc := cfg.Chatbot
	if cfg.Postgres != "" {
		// The chatbot's conversations are in PostgreSQL too, so that every
		// instance serves them; in a schema of their own, since a
		// conversation's id is its thread's and both keep checkpoints.
		if cc.Postgres == "" {
			cc.Postgres = cfg.Postgres
		}
		if cc.PostgresSchema == "" {
			cc.PostgresSchema = ChatbotSchema(cfg.Schema)
		}
	} else {
		cc.DataDir = filepath.Join(cfg.Dir, "chatbot")
	}
	bot, err := chatbot.New(ctx, cc)
	if err != nil {
		return fail(err)
	}
	app.close = append(app.close, func() error { return bot.Close(context.WithoutCancel(ctx)) })
	chat, err := Chatbot(bot, saver)
	if err != nil {
		return fail(err)
	}
	if err := server.Register(srv, "chatbot", chat, server.WithCodec(conversationCodec), server.WithThreadDeleted[Conversation](forgetConversation(bot)), server.WithDescription[Conversation]("The reference chatbot (examples/chatbot): a thread is a conversation, a run is a turn.")); err != nil {
		return fail(err)
	}
	bc := cfg.BosAI
	bc.Checkpointer = saver
	bos, err := bosai.New(bc)
	if err != nil {
		return fail(err)
	}
	app.close = append(app.close, func() error { return bos.Close(context.WithoutCancel(ctx)) })
	if err := server.Register(srv, "bosai", bos.Graph(), server.WithCodec(bosaiCodec(bos)), server.WithDescription[bosai.State]("Bos-AI (examples/bosai): a planner, specialist agents in parallel and a composer.")); err != nil {
		return fail(err)
	}
	return app, nil
}

// reactInput are the fields of react.State a client may write: the rest
// (usage, run_usage, iterations, outcome, answer) are the agent's
// accounting, which a client could otherwise fake.
var reactInput = []string{"messages", "instructions"}

// reactCodec writes the agent's messages in LangChain's form, which
// useStream renders; the default codec reads them (server.Codec), only
// the fields of reactInput.
var reactCodec = server.Codec[react.State]{
	Values: func(s react.State) (json.RawMessage, error) {
		return json.Marshal(map[string]any{"messages": server.EncodeMessages(s.Messages), "outcome": s.Outcome, "iterations": s.Iterations})
	},
}

// DemoModel is an offline model for demonstrations: it answers the last
// user message by echoing it, streamed word by word, in at most 64
// chunks (a long reply's words are grouped, so that an echo
// of a long message is not one stream event per word). It is labelled as
// a demo in every reply.
type DemoModel struct{}

// maxDemoChunks bounds the text chunks DemoModel streams for one reply.
const maxDemoChunks = 64

func (DemoModel) reply(req *model.Request) *model.Response {
	last := ""
	for _, m := range req.Messages {
		if m.Role == model.RoleUser {
			last = m.Text()
		}
	}
	return &model.Response{Message: model.Assistant("[demo model] You said: " + last), FinishReason: model.FinishStop, Model: "demo"}
}

// Generate implements model.Model.
func (d DemoModel) Generate(ctx context.Context, req *model.Request) (*model.Response, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return d.reply(req), nil
}

// Stream implements model.Model.
func (d DemoModel) Stream(ctx context.Context, req *model.Request) iter.Seq2[model.Chunk, error] {
	return func(yield func(model.Chunk, error) bool) {
		resp := d.reply(req)
		for _, w := range demoChunks(resp.Text()) {
			if err := ctx.Err(); err != nil {
				yield(model.Chunk{}, err)
				return
			}
			if !yield(model.Chunk{Kind: model.ChunkText, Text: w}, nil) {
				return
			}
		}
		yield(model.Chunk{Kind: model.ChunkDone, Response: resp}, nil)
	}
}

// demoChunks splits text after its spaces, word by word, into at most
// maxDemoChunks chunks: a text of more words has them grouped, as evenly
// as whole words allow.
func demoChunks(text string) []string {
	words := strings.SplitAfter(text, " ")
	if len(words) <= maxDemoChunks {
		return words
	}
	out := make([]string, 0, maxDemoChunks)
	for i := range maxDemoChunks {
		lo, hi := i*len(words)/maxDemoChunks, (i+1)*len(words)/maxDemoChunks
		out = append(out, strings.Join(words[lo:hi], ""))
	}
	return out
}

// Draft is the approval graph's state.
type Draft struct {
	Topic    string   `json:"topic"`
	Draft    string   `json:"draft"`
	Approved string   `json:"approved"`
	Log      []string `json:"log"`
}

var (
	draftTopic    = graph.Replace(func(s *Draft) *string { return &s.Topic })
	draftText     = graph.Replace(func(s *Draft) *string { return &s.Draft })
	draftApproved = graph.Replace(func(s *Draft) *string { return &s.Approved })
	draftLog      = graph.Append(func(s *Draft) *[]string { return &s.Log })
)

// Approval builds the approval graph on saver.
func Approval(saver checkpoint.Saver) (*graph.Compiled[Draft], error) {
	g := graph.New[Draft]()
	g.AddNode("draft", func(ctx context.Context, s Draft) (graph.Update[Draft], error) {
		_ = graph.Emit(ctx, map[string]string{"step": "draft"})
		return graph.Updates(draftText.Set("A short note about "+s.Topic+"."), draftLog.Set([]string{"drafted"})), nil
	})
	g.AddNode("review", func(ctx context.Context, s Draft) (graph.Update[Draft], error) {
		answer, err := graph.Interrupt[string](ctx, map[string]string{"question": "approve this draft?", "draft": s.Draft})
		if err != nil {
			return graph.Update[Draft]{}, err
		}
		return graph.Updates(draftApproved.Set(answer), draftLog.Set([]string{"reviewed: " + answer})), nil
	})
	g.AddNode("finish", func(ctx context.Context, s Draft) (graph.Update[Draft], error) {
		return draftLog.Set([]string{fmt.Sprintf("finished (%s)", s.Approved)}), nil
	})
	g.AddEdge(graph.START, "draft").AddEdge("draft", "review").AddEdge("review", "finish").AddEdge("finish", graph.END)
	_ = draftTopic
	return g.Compile(graph.WithCheckpointer(saver))
}
