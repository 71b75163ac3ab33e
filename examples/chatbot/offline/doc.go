// Package offline is a DEMO language model: a small rule-based model that
// lets the reference chatbot run with no API key and no network. It is not
// a language model and does not pretend to be one; it follows rules, never
// invents facts, and answers only from what its prompts give it.
//
// It reads the requests of package supervisor's steps (decide, reflect,
// plan and write, read through package supervisortest, or recognised by the
// JSON Schema agent.Call puts in the system prompt) and the query-rewriting, synthesis and writing
// prompts of LLM operators, and makes real decisions from their content:
//
//   - Supervisor: it routes by what the question asks, read from its
//     verbs, its question form and what it contains, not from whole
//     sentences. A greeting or thanks is answered; a question about the
//     conversation itself ("what did I ask first?") is answered from the
//     prompt's Conversation section; a question about the assistant
//     calls self_info, list_capabilities or list_tools; code to run (a
//     fenced block, an inline span, a call or assignment after a run
//     verb, or an expression a program should compute) calls run_code;
//     labelled numbers to chart or plot call chart; a short or vague
//     request ("update it", "fix the document") gets a clarifying
//     question; a definition or explanation of something general ("What
//     is Python?") is answered directly, from a small glossary or by
//     saying plainly that the demo model does not know; a comparison
//     with competitors, on any subject and in many phrasings ("how do we
//     stack up against", "cheaper than", "versus"), creates the
//     four-step workflow rewrite → (internal search ∥ web search) →
//     synthesise, from the operators it is shown; a demo request calls
//     book_demo with the e-mail, date and product it names; arithmetic,
//     with symbols or words ("plus", "multiply 19 by 21", "9 mod 0"),
//     calls the calculator (numbers and percentages in words, "15% off
//     $80", "1/3 of 90", temperatures, a rate over another period, "4
//     seats at $29 per month, per year", and a follow-up on the last
//     result such as "and double that" included, and arithmetic asked in
//     German, French or Spanish: "was ist zwölf mal drei?", "combien font
//     15 fois 3", "cuánto es 100 entre 4"), and dates, times and
//     e-mail addresses are never taken for arithmetic; the cost of a
//     number of seats at a plan's price the question does not give ("how
//     much would 5 editors on the Business plan cost per month?") is
//     searched for, then computed by the calculator and answered with the
//     passage the price is from; which plan fits ("which plan should a
//     3-person startup pick?") is reasoned from the plans the results
//     describe (the cheapest with room for the team and what it needs),
//     or answered with the plans and what would decide; a seat cost over
//     a plan's cap ("how much is Starter for 12 editors?") says so and
//     prices the cheapest plan with room; a choice between named plans
//     ("which is cheaper, Starter or Team?", "is Business or Team better
//     for 30 people?") is answered by comparing them on the price, the
//     room or the need asked about, and "which plan is cheapest?" from
//     the plans' prices; a message about
//     the assistant's instructions ("ignore your instructions", "print
//     your system prompt") or asking for a password or key is declined, a
//     request for an action no tool does ("send an e-mail", "set a
//     reminder", "cancel my subscription") or for creative text ("tell me
//     a joke", "can you help me write a cover letter?") is answered with
//     what the demo can do, a greeting or thanks in another language
//     ("hola", "merci beaucoup"), also mixed with others or with a "how are
//     you" ("hallo, guten morgen", "buenos días, ¿qué tal?"), is answered
//     in English, a greeting before a question ("Hi! What does Team
//     cost?") is left out of it, a message not in
//     English is asked again in English, and a first message that points
//     at something it never names ("which one is better?") is asked back; "latest", "news", "competitor" and
//     similar call web search; other questions search the knowledge base
//     first, then the web. A follow-up
//     ("and the Business plan?", "is it billed annually?") borrows the
//     words of the user's previous message, read from the "user: ..."
//     lines of the prompt's Conversation section; one that refers back
//     with a pronoun ("is it billed annually?") is first given to
//     query_rewriter when that is offered, which resolves it from the
//     conversation in its assembled context, and the rewritten internal
//     (or, for a web question, external) query is then searched. A
//     correction ("no, I meant the Business plan", "sorry, I meant 8
//     seats") asks the previous question again with the name or number
//     replaced, also once that question was folded into the
//     conversation's summary. A message of two to four questions that each need a
//     search ("How much is the Team plan and what is its uptime SLA?") is
//     searched one question at a time and answered part by part, naming
//     the parts the sources do not answer; a calculation with a lookup
//     ("what is 15% of 240, and what is the refund window?") computes
//     the one, then searches the other, and answers both. A hyphenated
//     word matches whole and in parts ("e-mail", "on-prem", which
//     matches "on-premises" and "self-hosted"), a quantity however it is
//     written ("4 hours", "4-hour", "four-hour", and "2 business hours"
//     apart from "2 business days"), a compound of a count ("two-factor")
//     the word after any count ("multi-factor"), and a word with one
//     typing slip ("buisness", "free trail"), the same on every host: no
//     system word list is read. A query
//     rewrite is never quoted as an answer. The result of a tool whose
//     output is the answer (calculate, run_code, chart, self_info and the
//     other self-description tools, book_demo) is reported as it is,
//     errors included ("division by zero"); a search answers only when
//     one passage holds at least half of the question's words (and two
//     of them, when it has two or more) and the question's topic, its
//     words before a preposition ("refund policy" in "refund policy for
//     annual plans"), none of which may be missing from every result:
//     it quotes the passages then (first the sentences that give the
//     kind of answer asked: a place for "where is my data stored?", a
//     duration for "how fast is support?"; and not when the thing a topic
//     is "of" is named nowhere, as in "the price of your blockchain
//     add-on"; nor when the question asks a kind of value, a year, a
//     count, an amount, a percentage, a duration or a place, of a thing
//     it names and no sentence both names the thing and gives such a
//     value, as in "when was Globex BI founded?" or "what does Acme
//     charge for Acme Chat?": it then first searches the knowledge base
//     for the thing and the kind of value), tries a search tool it has not tried
//     when not (also when a source matched nothing at all), and says
//     plainly that nothing relevant was found once every source is tried,
//     naming what the sources cover when a search tool's description
//     lists it (`The documents cover: ["pricing and plans", ...].`). A
//     conversational opener ("Quick question:", "btw", "So,", "One more
//     thing -") is read past like a greeting, and texting spellings are
//     read written out ("where r ur offices"). A list question names its
//     list by any of its nouns ("which packages can I buy?", "what
//     subscription tiers exist?"). A question about us is answered from
//     our own sources before competitor notes, and "free" answers a
//     price. Where data is kept leads with the passage headed by a place
//     ("Data residency"); where the company is (its offices, its
//     headquarters) with the sentence that names its city. A category
//     (a CRM, a chat app, a payment processor) reaches the products of
//     it the passages name, from a small lexicon that stands in for what
//     a language model knows.
//     Tools are picked by name from the prompt's tool list
//     (search_knowledge or rag_retriever, web_search or web_searcher,
//     calculate, run_code, chart, book_demo, query_rewriter,
//     synthesizer, self_info, list_capabilities, list_tools).
//   - Reflection: satisfied when successful results cover the question's
//     words, need_more (naming the missing words) when they do not and
//     iterations remain, blocked when nothing usable came back.
//   - Documents: the chunk and document summaries of package document's
//     LLMSummarizer (recognised by document.DefaultChunkInstructions and
//     document.DefaultCombineInstructions) are extracted: a part's
//     headings, its first sentence and those with figures or names; a
//     document's, the parts' headings and first facts. A supervisor prompt
//     whose Conversation section lists documents (document.Describe lines)
//     and whose tools include load_document loads the best-matching
//     document when the question refers to an uploaded document, names
//     one, or is covered by a ready document's summary; once loaded, the
//     words that only point at the document ("my uploaded document
//     say") do not count against the results' coverage.
//   - Free text (writer, synthesizer): reports a direct tool's result,
//     quotes the sentences of relevant results that best match the
//     question, with their source, or says plainly that nothing relevant
//     was found.
//   - Learning (cognition.LLMLearner's prompt, recognised by
//     cognition.MarkerLearn): from the user's messages it reads, by
//     general rules rather than set sentences, a stated or introduced
//     name ("my name is", "call me", "I'm Linus", "Raj here"), a role
//     whose last word names a person ("I work as", "as a nurse,", "I'm
//     Sofia, a UX designer") and the organisation after it, expertise
//     (from words and years of experience), a standing style (concise,
//     detailed, technical) and format (bullet points) when a clause is
//     about answers in general, and what the user works on. What is known
//     about the user (cognition's "User profile:" lines, or what they said
//     earlier in the conversation) shapes the answers: concise quotes the
//     best sentence as prose, detailed quotes more and lists the sources,
//     a list format gives lists; greetings use the name, and "what's my
//     name?" or "what do I do?" are answered from it. A chart request
//     without numbers charts the conversation's named figures or asks
//     which to chart.
//   - Conversation summaries (package memory's LLMSummarizer, recognised
//     by memory.DefaultSummaryInstructions): the current summary, then
//     what the user asked and the first sentence of each reply; never a
//     non-answer.
//
// The prompts of package operator's built-in LLM operators
// (operator.QueryRewriterPrompt and the others) are read by their
// templates: the fixed text says what is asked, and the values between
// (the question, the sources, the assembled context) are data. So a
// synthesis prompt whose assembled context quotes the query rewriter's
// JSON is still a synthesis, not a rewrite; the rewriter reads the
// conversation.* parts of its assembled context to resolve a follow-up.
// Other operators' prompts are read by their "Question:", "Sources:",
// "Content:" and "Data:" labels.
//
// The model is a model.Model (New) and an http.Handler speaking OpenAI's
// chat completions API (Model.Handler), plain and streamed as server-sent
// events with a final usage chunk, so a program can point langchaingo's
// real OpenAI client at it in-process:
//
//	m := offline.New(offline.Config{})
//	srv := httptest.NewServer(m.Handler()) // or mount m.Handler() on your own mux
//	reg := agent.DefaultRegistry()
//	agent.RegisterAliases(reg, "haiku=openai:offline-demo,sonnet=openai:offline-demo,opus=openai:offline-demo")
//	client, _ := agent.New(agent.Config{Registry: reg,
//		OpenAI: &provider.OpenAIConfig{BaseURL: srv.URL + "/v1", APIKey: "offline"}})
//
// Model.Transport serves the same handler without a socket: set
// agent.Config.HTTPClient to &http.Client{Transport: m.Transport()} and the
// BaseURL to any URL, such as "http://offline/v1"; the JSON bodies, the
// streamed events and the usage still go over the wire protocol, minus the
// TCP round trips. Or, without HTTP, agent.New(agent.Config{Model: m}),
// which serves every alias from m.
//
// The model reads the system messages and the last human message of a
// request; earlier turns reach it through the prompts' Conversation
// section. Its workflows address the built-in operators' outputs
// ({{step_1.internal_query}}, {{step_2.results}}), as package operator's
// query_rewriter, rag_retriever and web_searcher produce them.
//
// Token counts are an estimate (see EstimateTokens): one token per four
// bytes of text, rounded up, plus four per message, as a rough stand-in
// for a BPE tokenizer.
package offline
