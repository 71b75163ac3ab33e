package offline

import (
	"fmt"
	"iter"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/agentgraph/agentgraph/cognition"
	"github.com/agentgraph/agentgraph/examples/chatbot/internal/lexicon"
	"github.com/agentgraph/agentgraph/examples/supervisor"
	"github.com/agentgraph/agentgraph/operator/plan"
)

// coverage is the share of a question's words that results must contain
// to count as answering it.
const coverage = 0.5

// decide is the supervisor's rule set.
func decide(p prompt) supervisor.Decision {
	p = withCorrection(p)
	q := strings.TrimSpace(p.question)
	last := p.iteration >= p.max
	if len(p.results) > 0 {
		return decideWithResults(p, q, last)
	}
	words := tokens(q)
	u := userOf(p.conversation, q)
	switch {
	case q == "":
		return clarify("The message is empty.", "What would you like to know?")
	case asksForInstructions(q, words):
		return supervisor.Decision{Action: supervisor.ActionAnswer, Reasoning: "The message asks for or against the assistant's instructions; declined.", Response: declineInstructions}
	case asksForSecrets(words):
		return supervisor.Decision{Action: supervisor.ActionAnswer, Reasoning: "The message asks for a secret; the assistant has none to give.", Response: declineSecrets}
	case foreignCourtesy(q) != noCourtesy:
		return supervisor.Decision{Action: supervisor.ActionAnswer, Reasoning: "A greeting or thanks in another language needs no tools.",
			Response: courtesyReply(foreignCourtesy(q), p.tools, u)}
	case notEnglish(q) && !foreignCalculation(q):
		// Arithmetic is read in German, French and Spanish too.
		return supervisor.Decision{Action: supervisor.ActionAnswer, Reasoning: "The message is not in English, which is all the demo model reads.", Response: onlyEnglish}
	case isGreeting(words):
		return supervisor.Decision{Action: supervisor.ActionAnswer, Reasoning: "A greeting needs no tools.", Response: greetingFor(p.tools, u)}
	case isThanks(words):
		return supervisor.Decision{Action: supervisor.ActionAnswer, Reasoning: "Thanks need no tools.", Response: "You're welcome! Anything else I can help with?"}
	case asksAboutUser(words):
		return supervisor.Decision{Action: supervisor.ActionAnswer, Reasoning: "The question is about the user; the user profile answers it.", Response: aboutUser(words, u)}
	case saysAboutSelf(q):
		return supervisor.Decision{Action: supervisor.ActionAnswer, Reasoning: "The user tells about themselves; nothing to look up.", Response: acknowledge(q)}
	case asksAboutConversation(words):
		return supervisor.Decision{Action: supervisor.ActionAnswer, Reasoning: "The question is about this conversation; its transcript answers it.",
			Response: recall(words, p.conversation, q)}
	}
	if expr := followUpArithmetic(q, p.conversation); expr != "" && !last {
		if t := pick(p.tools, "calculate", "calculator", "calc"); t != "" {
			return call("The message continues the last calculation; the calculator evaluates it on the previous result.", t, map[string]any{"expression": expr})
		}
	}
	if form := wantsComposition(words); form != "" && !wantsProgramWritten(words) {
		return supervisor.Decision{Action: supervisor.ActionAnswer, Reasoning: "The user asks for creative text, which the demo model does not compose.", Response: cannotCompose(casedAs(q, form))}
	}
	if t := selfTool(words, p.tools); t != "" && !last {
		return call("The question is about the assistant itself; "+t+" describes it.", t, map[string]any{})
	}
	if code := programOf(q, words); code != "" && !last {
		if t := pick(p.tools, "run_code"); t != "" {
			return call("The user wants a program run; run_code executes it in a sandbox.", t, map[string]any{"code": code})
		}
	} else if code == "" && !last && wantsProgramWritten(words) && pick(p.tools, "run_code") != "" {
		return supervisor.Decision{Action: supervisor.ActionAnswer, Reasoning: "The user wants a program written from a description; the demo model writes no programs.",
			Response: "As the offline demo model I can run a program you give me (in a code block or `backticks`, for example `print(sum(range(10)))`) " +
				"and compute arithmetic, but I can't write a program from a description. With a real model configured I would write it and run it with run_code."}
	}
	if args := chartArgs(q, words); args != nil && !last {
		if t := pick(p.tools, "chart"); t != "" {
			return call("The user wants labelled numbers shown as a chart.", t, args)
		}
	} else if wantsChart(q, words) && !last && pick(p.tools, "chart") != "" {
		if args := chartFromConversation(q, p.conversation); args != nil {
			return call("The user wants the figures of the conversation shown as a chart.", pick(p.tools, "chart"), args)
		}
		return clarify("A chart needs labelled numbers, and neither the message nor the conversation has them.",
			"Which numbers should I chart? Give me labels and values, for example \"Starter 19, Team 49, Business 89\".")
	}
	if previousQuestion(p.conversation, q) == "" && refersBack(words) && (isVague(words) || actsOnPronoun(words)) {
		// "Send it", "delete that" opening a conversation: whatever the
		// action, "it" points at nothing yet.
		return clarify("The request acts on something it never names, and there is no earlier message it could point at.", vagueQuestion(words))
	}
	if what := unsupportedAction(q, words, p.tools); what != "" {
		return supervisor.Decision{Action: supervisor.ActionAnswer, Reasoning: "The user asks for an action in the world that none of the tools can do.", Response: cannotDo(what, p.tools)}
	}
	if isVague(words) || previousQuestion(p.conversation, q) == "" && pointsNowhere(words) {
		return clarify("The request is too short or vague to act on: it does not say what it refers to.", vagueQuestion(words))
	}
	if d, ok := decideDocument(p, q); ok && !last {
		return d
	}
	if subj := generalSubject(q, words); subj != "" && (p.conversation == "" || !isFollowUp(words)) {
		return supervisor.Decision{Action: supervisor.ActionAnswer, Reasoning: "A general-knowledge question: answered directly, no tool needed.",
			Response: styled(generalAnswer(subj), u)}
	}
	if d, ok := nextPartSearch(p); ok {
		return d
	}
	asked, refers := q, refersBack(words)
	if prev := previousQuestion(p.conversation, q); prev != "" && isFollowUp(words) {
		// "And the Business plan?" after "How much does the Team plan
		// cost?": route and search with the earlier question's words too.
		if frame := askedFrame(p.conversation, q); asksSeatCost(frame+" "+q, tokens(frame+" "+q)) {
			// "what about Starter?" after "and for 12 editors per
			// year?": the seats and the period of the questions it
			// leans on are asked again.
			prev = frame
		}
		// The name q gives takes the place of the one it replaces: "and
		// for the Team plan?" after the Business plan's rate limit
		// searches Team's rate limit, not Business's too.
		q = reframe(prev, q) + " " + q
		words = tokens(q)
	}
	if wf := comparisonWorkflow(p, q); wf != nil && !last {
		return supervisor.Decision{Action: supervisor.ActionCreateWorkflow,
			Reasoning: "Comparing us with competitors needs internal documents and the web; both searches can run in parallel after the query is rewritten, then a synthesis.",
			Workflow:  wf}
	}
	if prev := previousQuestion(p.conversation, asked); prev != "" && refers && !last {
		// "Is it billed annually?" after a question about the Business
		// plan: the query rewriter, which sees the conversation, turns it
		// into search queries that name what "it" is.
		if t := pick(p.tools, "query_rewriter"); t != "" {
			return call("The question refers back to the conversation; the query rewriter resolves the reference into search queries.", t, map[string]any{"query": asked})
		}
	}
	if last {
		return supervisor.Decision{Action: supervisor.ActionAnswer, Reasoning: "No iterations are left for tools.",
			Response: "I could not look this up within the steps I am allowed for one question."}
	}
	if hasAny(words, "demo", "demonstration") && hasAny(words, "book", "schedule", "arrange", "want", "like") {
		if t := pick(p.tools, "book_demo"); t != "" {
			args := map[string]any{}
			if m := emailRE.FindString(q); m != "" {
				args["email"] = m
			}
			if m := dateRE.FindString(q); m != "" {
				args["date"] = m
			}
			for _, prod := range []string{"Insights", "Pipelines", "Forecast", "API"} {
				if hasAny(words, strings.ToLower(prod)) {
					args["product"] = prod
					break
				}
			}
			return call("The user wants a demo; book_demo books it and asks for what is missing.", t, args)
		}
	}
	if asksChoice(q) || asksExtremePlan(words) != "" {
		if t := pick(p.tools, "search_knowledge", "rag_retriever", "knowledge", "rag"); t != "" {
			args := map[string]any{"query": choiceQuery(q)}
			if t == "search_knowledge" || strings.HasSuffix(t, "__search_knowledge") {
				args["top_k"] = 10 // every plan, not the best five passages
			}
			return call("The question sets named things against each other; the knowledge base describes them.", t, args)
		}
	}
	if asksRecommendation(words) {
		if t := pick(p.tools, "search_knowledge", "rag_retriever", "knowledge", "rag"); t != "" {
			args := map[string]any{"query": recommendQuery(q)}
			if t == "search_knowledge" || strings.HasSuffix(t, "__search_knowledge") {
				args["top_k"] = 10 // every plan, not the best five passages
			}
			return call("The question asks which plan fits; the knowledge base describes the plans to reason from.", t, args)
		}
	}
	if expr := arithmetic(q); expr != "" {
		if t := pick(p.tools, "calculate", "calculator", "calc"); t != "" {
			return call("The question is arithmetic; the calculator evaluates it exactly.", t, map[string]any{"expression": expr})
		}
	}
	web := pick(p.tools, "web_search", "web_searcher", "web")
	internal := pick(p.tools, "search_knowledge", "rag_retriever", "knowledge", "rag")
	query := searchQuery(q)
	if asksSeatCost(q, words) {
		query = seatCostQuery(q)
		if internal == "search_knowledge" || strings.HasSuffix(internal, "__search_knowledge") {
			// Every plan, not the best five passages: the one asked about
			// may not take that many seats, and another may.
			return call("The question asks what seats cost on a plan; the knowledge base has its price.", internal, map[string]any{"query": query, "top_k": 10})
		}
	}
	if k := askedKind(tokens(q)); k != kindNone && (internal == "search_knowledge" || strings.HasSuffix(internal, "__search_knowledge")) && !isWebby(words) {
		switch k {
		case kindBegin:
			query = beginQuery(query)
		case kindCount:
			query = countQuery(q, query)
		}
		return call("The question asks a count or a year; the knowledge base has the passages that give one.", internal, map[string]any{"query": query, "top_k": valueTopK})
	}
	switch {
	case isWebby(words) && web != "":
		return call("The question asks for recent or external information, which the web search has.", web, map[string]any{"query": query})
	case isCompany(words) && internal != "":
		return call("The question is about our products, pricing or policies, which the knowledge base covers.", internal, map[string]any{"query": query})
	case internal != "":
		return call("The knowledge base, our own documentation, may have the answer; the web comes next if it does not.", internal, map[string]any{"query": query})
	case web != "":
		return call("A general question: the web search may have the answer.", web, map[string]any{"query": query})
	}
	return supervisor.Decision{Action: supervisor.ActionAnswer, Reasoning: "No tool fits and this demo model knows no facts of its own.",
		Response: "I am an offline demo model: I can only answer from my tools, and none of them fits this question."}
}

func decideWithResults(p prompt, q string, last bool) supervisor.Decision {
	u := userOf(p.conversation, q)
	q = resolve(q, p.conversation)
	if d, ok := decideFromFigures(p, q, last); ok {
		return d
	}
	if d, ok := otherSearch(p); ok {
		return d
	}
	if text, ok := directAnswer(p.results); ok {
		return supervisor.Decision{Action: supervisor.ActionAnswer, Reasoning: "The tool's result is the answer.", Response: withOtherParts(p.question, text, p.results, p.tools)}
	}
	if d, ok := nextPartSearch(p); ok {
		return d
	}
	if text, ok := multiPartAnswer(p.question, p.results, p.tools, u); ok {
		return supervisor.Decision{Action: supervisor.ActionAnswer, Reasoning: "Every question of the message has been searched alone; answering each from its own results.", Response: text}
	}
	q = aboutDocuments(withRewrite(q, p.results), p.results)
	usable := usableResults(p.results)
	if rw, ok := latestRewrite(p.results); ok && len(usable) == 0 && !last {
		// The question was rewritten into search queries: search with them.
		web := pick(p.tools, "web_search", "web_searcher", "web")
		internal := pick(p.tools, "search_knowledge", "rag_retriever", "knowledge", "rag")
		switch words := tokens(rw.External); {
		case isWebby(tokens(q)) && web != "" && rw.External != "":
			return call("The rewritten query asks for external information.", web, map[string]any{"query": rw.External})
		case internal != "" && rw.Internal != "" && (isCompany(words) || web == ""):
			return call("The rewritten query is about our products, pricing or policies.", internal, map[string]any{"query": rw.Internal})
		case web != "" && rw.External != "":
			return call("Searching the web with the rewritten query.", web, map[string]any{"query": rw.External})
		}
	}
	_, missing := cover(q, usable)
	if len(usable) > 0 && relevant(q, usable) {
		return supervisor.Decision{Action: supervisor.ActionAnswer, Reasoning: "The results so far answer the question.", Response: composeFor(q, usable, u)}
	}
	if fromWorkflow(p.results) {
		if len(usable) > 0 {
			return supervisor.Decision{Action: supervisor.ActionAnswer, Reasoning: "The workflow gathered what there is; answering from it.", Response: composeFor(q, usable, u)}
		}
		return supervisor.Decision{Action: supervisor.ActionAnswer, Reasoning: "The workflow found nothing usable.", Response: notFound(q, p.results, p.tools)}
	}
	if !last {
		tried := map[string]bool{}
		for _, r := range p.results {
			tried[r.source] = true
		}
		searches := [][]string{{"search_knowledge", "rag_retriever", "knowledge", "rag"}, {"web_search", "web_searcher", "web"}}
		untried := 0
		for _, names := range searches {
			if t := pick(p.tools, names...); t != "" && !tried[t] {
				untried++
			}
		}
		// A value asked of a named thing that no result gives: search
		// the knowledge base for the thing and the kind of value first.
		if internal := pick(p.tools, "search_knowledge", "rag_retriever", "knowledge", "rag"); internal != "" && len(usable) > 0 {
			if query, ok := narrowQuery(q, p.results, internal); ok {
				return call("The results name no value of the kind asked of "+strings.Join(namedThings(q), ", ")+"; searching for it.", internal, map[string]any{"query": query})
			}
			// The deeper search only when the calls left after it (the
			// last iteration answers) still try every untried search.
			if query, ok := deeperQuery(q, p.results, internal); ok && p.max-p.iteration-1 >= untried {
				return call("The results mention what the question counts but give no count of it; searching deeper.", internal, map[string]any{"query": query, "top_k": deepTopK})
			}
		}
		for _, names := range searches {
			if t := pick(p.tools, names...); t != "" && !tried[t] {
				why := "The results so far do not cover: " + strings.Join(missing, ", ") + "."
				if len(usable) == 0 {
					why = "The calls so far gave nothing usable; trying another source."
				}
				return call(why, t, map[string]any{"query": searchQuery(q)})
			}
		}
	}
	if len(usable) > 0 {
		return supervisor.Decision{Action: supervisor.ActionAnswer, Reasoning: "Every source has been tried and none holds the answer; saying so.", Response: notFound(q, p.results, p.tools)}
	}
	return supervisor.Decision{Action: supervisor.ActionAnswer, Reasoning: "Nothing usable came back and no other source is left.", Response: failure(p.results)}
}

// reflect is the reflection's rule set.
func reflect(p prompt) supervisor.Reflection {
	p = withCorrection(p)
	if q := resolve(p.question, p.conversation); asksSeatCost(q, tokens(q)) && p.iteration < p.max {
		if _, ok := seatCostAnswer(q, p.results); !ok && seatCostExpr(q, usableResults(p.results)) != "" {
			return supervisor.Reflection{Assessment: supervisor.AssessNeedMore, Reasoning: "The results give the price per seat; the cost asked for is still to be computed.",
				Missing: "the cost of the seats, computed from the price"}
		}
	}
	if otherSearchPending(p) {
		return supervisor.Reflection{Assessment: supervisor.AssessNeedMore, Reasoning: "The tool answered one question of the message; another is still to be searched.",
			Missing: "search results for the questions the tool's answer left open"}
	}
	if _, ok := directAnswer(p.results); ok {
		return supervisor.Reflection{Assessment: supervisor.AssessSatisfied, Reasoning: "The tool's result is the answer."}
	}
	if w := tokens(p.question); p.conversation == "" && isFollowUp(w) && seatCount(p.question) > 0 && p.iteration < p.max {
		// "And for 15 editors?": the reflection sees no conversation, so
		// it cannot tell which plan the seats are on; the supervisor,
		// which sees it, decides whether the cost is still to compute.
		return supervisor.Reflection{Assessment: supervisor.AssessNeedMore, Reasoning: "A follow-up about a number of seats; the conversation says what they are priced at.",
			Missing: "the cost of the seats, if the earlier question gives their plan"}
	}
	if w := tokens(p.question); p.conversation == "" && isFollowUp(w) && len(namesIn(p.question)) > 0 && !hasCalculation(p.results) &&
		len(seatPrices(usableResults(p.results))) > 0 && p.iteration < p.max {
		// "What about Starter?" after "and for 12 editors per year?":
		// the seats may be asked in an earlier message, which only the
		// supervisor sees; it decides whether a cost is still to compute.
		return supervisor.Reflection{Assessment: supervisor.AssessNeedMore, Reasoning: "A follow-up naming another plan; the conversation may ask a number of seats on it.",
			Missing: "the cost of the seats, if the earlier questions ask one"}
	}
	if p.conversation == "" && isCorrection(p.question) && p.iteration < p.max {
		// "No, I meant on Business": the reflection sees no conversation,
		// so it cannot tell what the correction corrects, and the words of
		// the correction say nothing of the results; the supervisor, which
		// sees the conversation, decides whether more is needed.
		return supervisor.Reflection{Assessment: supervisor.AssessNeedMore, Reasoning: "A correction of an earlier question; the conversation says what it asks now.",
			Missing: "the answer to the corrected question, if the results do not give it yet"}
	}
	if partsPending(p) && p.iteration < p.max {
		return supervisor.Reflection{Assessment: supervisor.AssessNeedMore, Reasoning: "The message asks several questions and not each has been searched yet.",
			Missing: "search results for the questions not searched yet"}
	}
	if _, ok := multiPartAnswer(p.question, p.results, p.tools, about{}); ok {
		return supervisor.Reflection{Assessment: supervisor.AssessSatisfied, Reasoning: "Each question of the message has been searched alone."}
	}
	if q := resolve(p.question, p.conversation); asksChoice(q) {
		if _, ok := comparePlans(q, usableResults(p.results)); ok {
			return supervisor.Reflection{Assessment: supervisor.AssessSatisfied, Reasoning: "The results describe the plans to compare."}
		}
	} else if x := asksExtremePlan(tokens(q)); x != "" {
		if _, ok := extremePlan(x, usableResults(p.results)); ok {
			return supervisor.Reflection{Assessment: supervisor.AssessSatisfied, Reasoning: "The results describe the plans and their prices."}
		}
	}
	if q := resolve(p.question, p.conversation); asksRecommendation(tokens(q)) {
		if _, ok := recommend(q, usableResults(p.results)); ok {
			return supervisor.Reflection{Assessment: supervisor.AssessSatisfied, Reasoning: "The results describe the plans to choose from."}
		}
	}
	usable := usableResults(p.results)
	last := p.iteration >= p.max
	if _, ok := latestRewrite(p.results); ok && len(usable) == 0 && !last {
		return supervisor.Reflection{Assessment: supervisor.AssessNeedMore, Reasoning: "The question was rewritten into search queries but not searched yet.",
			Missing: "search results for the rewritten query"}
	}
	if len(usable) == 0 {
		if len(p.results) > 0 && !last && anyFailed(p.results) {
			return supervisor.Reflection{Assessment: supervisor.AssessNeedMore, Reasoning: "The calls failed; another source may work.",
				Missing: "a result from a source that works"}
		}
		if len(p.results) > 0 && !last && untriedSearch(searchTools(p.tools), p.results) != "" {
			// Nothing matched in one source: a subject it does not
			// cover may be in another.
			return supervisor.Reflection{Assessment: supervisor.AssessNeedMore, Reasoning: "Nothing matched in the sources tried; another source may cover it.",
				Missing: "passages about " + searchQuery(p.question)}
		}
		blocker := strings.TrimPrefix(failure(p.results), "I could not find an answer: ")
		if len(p.results) > 0 && !anyFailed(p.results) {
			// Every source answered, with nothing that matches: say
			// which sources, and what for.
			var where []string
			for _, r := range p.results {
				if n := sourceName(r.source); !slices.Contains(where, n) {
					where = append(where, n)
				}
			}
			blocker = fmt.Sprintf("nothing in %s matches %q", joinOr(where), searchQuery(p.question))
		}
		return supervisor.Reflection{Assessment: supervisor.AssessBlocked, Reasoning: "Nothing usable came back.", Blocker: blocker}
	}
	q := aboutDocuments(withRewrite(resolve(p.question, p.conversation), p.results), p.results)
	covered, missing := cover(q, usable)
	if relevant(q, usable) || last || fromWorkflow(p.results) {
		return supervisor.Reflection{Assessment: supervisor.AssessSatisfied,
			Reasoning: fmt.Sprintf("The results cover %.0f%% of the question's terms.", covered*100)}
	}
	return supervisor.Reflection{Assessment: supervisor.AssessNeedMore,
		Reasoning: fmt.Sprintf("The results cover only %.0f%% of the question's terms.", covered*100),
		Missing:   "information about " + strings.Join(missing, ", ")}
}

// searchTools are the tools a prompt lists, or, for a prompt that lists
// none (the reflection's), the usual search tools: the supervisor, which
// sees its tools, picks among them.
func searchTools(tools []tool) []tool {
	if len(tools) > 0 {
		return tools
	}
	return []tool{{name: "search_knowledge"}, {name: "web_search"}}
}

// untriedSearch returns a search tool the results do not come from yet,
// knowledge base first, or "".
func untriedSearch(tools []tool, rs []result) string {
	for _, names := range [][]string{{"search_knowledge", "rag_retriever", "knowledge", "rag"}, {"web_search", "web_searcher", "web"}} {
		if t := pick(tools, names...); t != "" && !slices.ContainsFunc(rs, func(r result) bool { return r.source == t }) {
			return t
		}
	}
	return ""
}

// planFor is the planner's rule set: the pricing workflow when it fits, else
// one search step and, when there is one, a synthesis.
func planFor(p prompt) plan.Plan {
	if wf := comparisonWorkflow(p, p.question); wf != nil {
		return *wf
	}
	wf := plan.Plan{Goal: p.question}
	search := pick(p.tools, "rag_retriever", "search_knowledge", "knowledge", "rag", "web_searcher", "web_search", "web")
	if search == "" && len(p.tools) > 0 {
		search = p.tools[0].name
	}
	wf.Steps = append(wf.Steps, plan.Step{ID: "step_1", Name: "Search", Operator: search,
		InputMapping: map[string]any{"query": "{{user_query}}"}})
	if s := pick(p.tools, "synthesizer", "synth"); s != "" {
		wf.Steps = append(wf.Steps, plan.Step{ID: "step_2", Name: "Synthesize", Operator: s,
			InputMapping: map[string]any{"sources": []any{"{{step_1.output}}"}}, DependsOn: []string{"step_1"}})
	}
	return wf
}

// rewrite is the query rewriter: the question's content words, money
// words expanded ("pricing" adds "plans cost"), without the words that
// point at competitors for the internal query.
func rewrite(q string) (internal, external string) {
	words := contentWords(q)
	if isPriceQuestion(words) {
		for _, extra := range []string{"plans", "cost"} {
			if !slices.Contains(words, extra) {
				words = append(words, extra)
			}
		}
	}
	var in []string
	for _, w := range words {
		if !strings.HasPrefix(w, "competitor") && !strings.HasPrefix(w, "rival") {
			in = append(in, w)
		}
	}
	external = strings.Join(words, " ")
	internal = strings.Join(in, " ")
	if internal == "" {
		internal = external
	}
	if external == "" {
		external, internal = q, q
	}
	return internal, external
}

// write is the free-text answer: the draft when there are no results,
// else the results' best sentences, quoted.
func write(p prompt) string {
	p.question = withoutGreeting(p.question)
	if q := resolve(p.question, p.conversation); asksChoice(q) {
		if text, ok := comparePlans(q, usableResults(p.results)); ok {
			return text
		}
	} else if x := asksExtremePlan(tokens(q)); x != "" {
		if text, ok := extremePlan(x, usableResults(p.results)); ok {
			return text
		}
	} else if asksSeatCost(q, tokens(q)) {
		if text, ok := seatCostAnswer(q, p.results); ok {
			return text
		}
	} else if asksRecommendation(tokens(q)) {
		if text, ok := recommend(q, usableResults(p.results)); ok {
			return text
		}
	}
	if text, ok := directAnswer(p.results); ok {
		return withOtherParts(p.question, text, p.results, p.tools)
	}
	u := userOf(p.conversation, p.question)
	if text, ok := multiPartAnswer(p.question, p.results, p.tools, u); ok {
		return text
	}
	usable := usableResults(p.results)
	q := aboutDocuments(withRewrite(resolve(p.question, p.conversation), p.results), p.results)
	switch {
	case len(usable) > 0 && (relevant(q, usable) || p.kind == kindText && p.draft == ""):
		// A synthesis (kindText) quotes what its sources hold; the
		// supervisor's writer answers only from relevant passages.
		return composeFor(q, usable, u)
	case p.draft != "":
		return p.draft
	case len(usable) > 0:
		return notFound(q, p.results, p.tools)
	case len(p.results) > 0:
		return failure(p.results)
	}
	words := tokens(p.question)
	switch {
	case isGreeting(words):
		return greetingFor(nil, u)
	case isThanks(words):
		return "You're welcome!"
	}
	return "I have no information to answer that. (This is an offline demo model: it answers only from the results it is given.)"
}

// code is the coder's answer: a program that says it is a placeholder.
func code(p prompt) string {
	lang := strings.ToLower(p.language)
	msg := strings.ReplaceAll(fmt.Sprintf("offline demo model: cannot write a program for %q", p.question), `"`, `'`)
	switch lang {
	case "go":
		return "```go\npackage main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(\"" + msg + "\") }\n```"
	default:
		return "```" + lang + "\nprint(\"" + msg + "\")\n```"
	}
}

func call(why, t string, args map[string]any) supervisor.Decision {
	return supervisor.Decision{Action: supervisor.ActionCallTool, Reasoning: why, Tool: t, Arguments: args}
}

func clarify(why, question string) supervisor.Decision {
	return supervisor.Decision{Action: supervisor.ActionClarify, Reasoning: why, Question: question}
}

func greeting(tools []tool) string { return greetingFor(tools, about{}) }

// greetingFor greets the user, by name when known.
func greetingFor(tools []tool, u about) string {
	s := "Hello! I'm the offline demo assistant."
	if u.name != "" {
		s = "Hello " + u.name + "! I'm the offline demo assistant."
	}
	var can []string
	if pick(tools, "search_knowledge", "rag_retriever", "knowledge", "rag") != "" {
		can = append(can, "answer questions about our products, pricing and policies")
	}
	if pick(tools, "web_search", "web_searcher", "web") != "" {
		can = append(can, "search the web snapshot")
	}
	if pick(tools, "calculate", "calculator", "calc") != "" {
		can = append(can, "do arithmetic")
	}
	if len(can) > 0 {
		s += " I can " + joinAnd(can) + "."
	}
	return s + " What would you like to know?"
}

func failure(results []result) string {
	var errs []string
	for _, r := range results {
		switch {
		case r.err != "":
			errs = append(errs, r.source+" failed: "+r.err)
		default:
			errs = append(errs, r.source+" found nothing relevant")
		}
	}
	if len(errs) == 0 {
		return "I could not find an answer."
	}
	return "I could not find an answer: " + strings.Join(errs, "; ") + "."
}

// pick returns the first tool whose name equals one of names, else the
// first whose name contains one of them, in the order of names.
func pick(tools []tool, names ...string) string {
	for _, n := range names {
		for _, t := range tools {
			if t.name == n {
				return t.name
			}
		}
	}
	for _, n := range names {
		for _, t := range tools {
			if strings.Contains(strings.ToLower(t.name), n) {
				return t.name
			}
		}
	}
	return ""
}

func usableResults(rs []result) []result {
	var out []result
	for _, r := range rs {
		if r.usable() {
			out = append(out, r)
		}
	}
	return out
}

func anyFailed(rs []result) bool {
	return slices.ContainsFunc(rs, func(r result) bool { return r.err != "" })
}

// cover returns the share of the question's content words found in the
// results (see matches), and the words not found.
func cover(q string, rs []result) (float64, []string) {
	words := contentWords(q)
	if len(words) == 0 {
		return 1, nil
	}
	var toks []string
	for _, r := range rs {
		toks = append(toks, tokens(r.text)...)
	}
	e := expandWords(q, words, toks)
	var missing []string
	for _, w := range words {
		if !matches(w, toks) && !e.sure(w, toks) { // a related word is no cover
			missing = append(missing, w)
		}
	}
	return float64(len(words)-len(missing)) / float64(len(words)), missing
}

// matches reports whether a question word occurs among toks: as
// written, or by the same whole Porter2 stem (see stem and sameStem), so
// "pricing" matches "price" and "plans" matches "plan" but not "planet";
// a name of the documents' own only by its own forms (lexicon.Inflects).
// It also matches by a typing slip, by a hand-made synonym group's
// prefixes, by a hyphenated word's halves, by a number written either
// way, and by an abbreviation. Currency and percent signs are ignored.
func matches(w string, toks []string) bool {
	if categoryOf[w] != nil {
		// A category's token ("paymentprocessor") matches as written
		// or by its products, not by its stem ("payment").
		return slices.Contains(toks, w) || namesMember(w, toks)
	}
	if v, ok := numberValue(w); ok {
		// "four" matches "4" and "12" matches "twelve".
		for _, t := range toks {
			if u, ok := numberValue(t); ok && u == v {
				return true
			}
		}
	}
	own := stem(strings.Trim(w, "$%"))
	// The hand-made groups are prefixes: "pric" is "price", "pricing".
	// A word's own stem is matched whole: "intern" of "international"
	// is no start of "internal", nor "busi" of "busy" of "business".
	var stems []string
	for _, group := range synonyms {
		if inGroup(w, group) {
			stems = group
			break
		}
	}
	for i, t := range toks {
		t = strings.Trim(t, "$%")
		if len(w) >= 5 && oneSlip(w, t) {
			return true // "buisness" is "business", "pricng" "pricing", "trail" "trial"
		}
		if t == w || sameStem(t, own) && (lexicon.Inflects(w, t) || !guards().Name(w) && !guards().Name(t)) {
			// A name shares its stem only with its own forms: "busy"
			// stems as "Business" does, but is no plan.
			return true
		}
		// A hyphenated word is two tokens: "non-profits" matches
		// "nonprofit", "e-mail" matches "email". A word of its own is
		// no half ("an other" is not "another").
		if len(t) > 0 && len(t) < len(own) && i+1 < len(toks) && !stopwords[t] && strings.HasPrefix(own, t) &&
			stem(t+strings.Trim(toks[i+1], "$%")) == own {
			return true
		}
		for _, s := range stems {
			if len(s) <= 3 && t == s || len(s) > 3 && strings.HasPrefix(t, s) {
				return true
			}
			// A hyphenated word is two tokens: "non-profits" matches
			// "nonprofit", "e-mail" matches "email".
			// A word of its own is no half ("an other" is not "another").
			if len(s) > 3 && len(t) > 0 && len(t) < len(s) && i+1 < len(toks) && !stopwords[t] && strings.HasPrefix(s, t) &&
				strings.HasPrefix(toks[i+1], s[len(t):]) {
				return true
			}
		}
	}
	return abbreviates(w, toks) || countedCompound(w, toks) // "sso" is "single sign-on"
}

// inGroup reports whether a word is one of a synonym group's stems:
// "retained" stems to "retai", which "retain" starts with. The word is
// tested as written too: its stem may be shorter than the group's
// ("promise" stems to "prom", "promis" is the group's).
func inGroup(w string, group []string) bool {
	w = strings.Trim(w, "$%")
	s := stem(w)
	return slices.ContainsFunc(group, func(g string) bool {
		return strings.HasPrefix(s, g) || len(s) >= 5 && strings.HasPrefix(g, s) || strings.HasPrefix(w, g)
	})
}

// searchForms are words a search engine finds for a synonym group, by its
// first stem, where the group's stems are no words of their own.
var searchForms = map[string]string{"onpr": "on-premises", "respon": "response", "urgen": "urgent"}

// oneSlip reports whether a and b differ by one typing slip: two
// neighbouring letters swapped ("buisness"), or, in words of six letters
// or more, one letter left out or doubled ("pricng", "bussiness"). A
// letter typed for another is no slip here: "teams" is not "terms".
func oneSlip(a, b string) bool {
	switch d := len(a) - len(b); {
	case a == b || d > 1 || d < -1:
		return false
	case d == 0:
		i := 0
		for i < len(a) && a[i] == b[i] {
			i++
		}
		return i+1 < len(a) && a[i] == b[i+1] && a[i+1] == b[i] && a[i+2:] == b[i+2:]
	default:
		if min(len(a), len(b)) < 6 {
			return false
		}
		if d < 0 {
			a, b = b, a // a is the longer
		}
		i := 0
		for i < len(b) && a[i] == b[i] {
			i++
		}
		return a[i+1:] == b[i:]
	}
}

// synonyms are stems that match each other. A word written with hyphens
// is matched joined ("onprem"), and a passage's split word ("on",
// "premises") by its parts.
var synonyms = [][]string{
	{"onpr", "premis", "selfhos"},
	{"mins", "minut"}, {"hrs", "hour"}, {"secs", "secon"},
	{"pric", "cost", "charg", "fee"},
	{"keep", "kept", "retain", "retention", "stor"},
	{"pay", "paid", "payment"},
	respondWords,
	{"urgen", "critic", "emergen"},
	{"competit", "rival"},
	{"guarant", "commitm", "promis"},
	{"cheap", "inexpens", "low-cost"},
	{"sso", "saml", "oidc"},
	{"choos", "chos", "pick", "select", "decid"},
}

// respondWords are the stems of a response: "how soon will you reply?"
// asks the response target.
var respondWords = []string{"respon", "reply", "replies", "answer", "turnar"}

// placeWords are the stems of where a thing is: "which countries host
// my data?", "which data center locations do you use?" ask for the
// region it stays in. A server or a host is no place ("can we host Acme
// on our own servers?", "do you support SQL Server?"), and the words are
// no synonyms of each other: a sentence about a customer's region does
// not answer one about a country.
var placeWords = []string{"region", "countr", "locat", "resid", "geograph", "datacent", "city", "citie"}

// placeWord reports whether w, a question word, names a kind of place:
// it is a word of placeWords, or one of its WordNet synonyms (see
// lexicon.Synonyms) is a noun of placeKinds or an inflection of one
// ("nation" is "country"), as the answer step matches synonyms. A
// synonym that merely shares a place noun's stem is not: "occupant" is
// "resident", no "residency", and "find" is "locate", no "location";
// nor is one that starts like one: "rest" is "residue".
func placeWord(w string) bool {
	if inGroup(w, placeWords) {
		return true
	}
	if !expandable(w) {
		return false
	}
	return slices.ContainsFunc(lexicon.Synonyms(w), func(x string) bool {
		return slices.ContainsFunc(placeKinds, func(n string) bool { return lexicon.Inflects(x, n) })
	})
}

// placeKinds are the nouns of placeWords' kinds of place, whole: what a
// question word's synonym must be for the word to name a place (see
// placeWord).
var placeKinds = []string{"region", "country", "location", "residency", "geography", "city"}

// placeVerbs are the stems of the words that make "where" ask a place:
// where a thing is stored, hosted, kept, located, lives or is based, or
// where the servers are. A passage that gives the place need not repeat
// them.
var placeVerbs = []string{"stor", "host", "kept", "keep", "locat", "live", "stay", "based", "resid", "server", "datacent", "region", "countr"}

// placeNouns are the things whose place "where" asks, besides
// placeVerbs: "where r ur offices", "where is your headquarters".
var placeNouns = []string{"office", "headquart", "hq"}

// companyPlaceWords are the words of a question that asks where the
// company itself is, not the data: its offices, headquarters, the city
// it is based in.
var companyPlaceWords = []string{"office", "headquart", "hq", "based", "company", "city", "citie"}

// asksCompanyPlace reports whether a question asks where the company is
// ("where r ur offices", "in which city is Acme headquartered?", "where
// is your company based?"), which a sentence naming a city answers,
// rather than where data is kept.
func asksCompanyPlace(q string) bool {
	toks := tokens(q)
	return slices.ContainsFunc(toks, func(w string) bool { return inGroup(w, companyPlaceWords) }) &&
		!slices.ContainsFunc(toks, func(w string) bool { return w == "data" || inGroup(w, dataPlaceVerbs) }) &&
		asksPlace(q)
}

// dataPlaceVerbs are the stems of keeping data somewhere: a question
// with one asks where data is, not the company.
var dataPlaceVerbs = []string{"stor", "kept", "keep", "host"}

// placeNameRE is a place named in a sentence: "in Lisbon", "from
// Toronto", a capitalised word after "in", "at" or "from".
var placeNameRE = regexp.MustCompile(`\b(?:in|at|from)\s+(\p{Lu}\p{Ll}+)`)

// othersPenalty is how much less a competitor's sentence ranks than its
// score when the question is about us (composeFor).
const othersPenalty = 1

// namesPlace reports whether a sentence names a place by its name
// ("founded in 2019 in Lisbon"); a month or a weekday is none, and
// neither is a word of names (thingNames): "included in Business", "data
// from Salesforce".
func namesPlace(s string, names map[string]bool) bool {
	for _, m := range placeNameRE.FindAllStringSubmatch(s, -1) {
		if w := strings.ToLower(m[1]); !monthNames[w] && !weekdays[w] && !names[w] {
			return true
		}
	}
	return false
}

// thingNames returns the proper nouns that name things rather than
// places, in lower case: the company's name, the plans the results
// price (planOffers), the competitors and the products of the
// categories (Salesforce, Slack).
func thingNames(rs []result) map[string]bool {
	names := map[string]bool{"acme": true}
	for _, n := range competitorNames {
		names[n] = true
	}
	for _, ms := range memberWords {
		for _, m := range ms {
			for _, w := range m {
				names[w] = true
			}
		}
	}
	for _, p := range planOffers(rs) {
		for _, w := range tokens(p.name) {
			names[w] = true
		}
	}
	return names
}

// weekdays are the days of the week, which "on"/"from" may name.
var weekdays = map[string]bool{"monday": true, "tuesday": true, "wednesday": true, "thursday": true, "friday": true, "saturday": true, "sunday": true}

// isDataCentre reports whether toks[i] is "centre" or "center" (or
// plural) after "data": a place word in two.
func isDataCentre(toks []string, i int) bool {
	return i > 0 && toks[i-1] == "data" && hasAny(toks[i:i+1], "center", "centre", "centers", "centres")
}

// asksPlace reports whether a question asks where something is: "where"
// with a word of where a thing is ("where is my data stored?", "where r
// ur offices") or "where is/are X" alone ("where is Acme?"), or a word
// of place ("which regions can store my data?"), read whole
// ("self-hosted" is no place). "Where do Team customers get support?"
// or "a plan where ..." ask no place.
func asksPlace(q string) bool {
	words := contentWords(q)
	if slices.ContainsFunc(words, placeWord) {
		return true
	}
	toks := tokens(q)
	i := slices.Index(toks, "where")
	if i < 0 {
		return false
	}
	if slices.ContainsFunc(toks[i+1:], func(w string) bool { return inGroup(w, placeVerbs) || inGroup(w, placeNouns) }) {
		return true
	}
	for j := i + 1; j < len(toks); j++ {
		if isDataCentre(toks, j) {
			return true // "where are your data centres?"
		}
	}
	rest := toks[i+1:]
	return len(rest) >= 1 && len(rest) <= 3 && hasAny(rest[:1], "is", "are", "'s", "r")
}

// askedList returns the thing a question asks the list of, by its stem
// ("plan" of "what plans do you offer?", "which tiers are there?",
// "which products are available?", "which packages can I buy?"): "what"
// or "which" and a plural noun, or a noun and a plural one ("what
// subscription tiers exist?"), then what is there (listVerbs). Of a
// noun and a plain word for choices ("subscription options"), the noun
// is the thing. "" when the question asks no list.
func askedList(toks []string) string {
	for i, t := range toks {
		if t != "what" && t != "which" || i+1 >= len(toks) {
			continue
		}
		j := i + 1
		for j < len(toks) && nounFillers[toks[j]] {
			j++
		}
		if j+1 < len(toks) && !plural(toks[j]) && !stopwords[toks[j]] && plural(toks[j+1]) && listNoun(toks[j+1]) {
			j++ // "subscription tiers"; not "plan includes"
		}
		if j >= len(toks) || !plural(toks[j]) {
			return ""
		}
		k := slices.IndexFunc(toks[j+1:], func(w string) bool { return listVerbs[w] })
		if k < 0 {
			return ""
		}
		// "Which plans include SSO?" asks which of them have a thing,
		// not what there is: the verb has an object.
		if slices.ContainsFunc(toks[j+2+k:], func(w string) bool { return !stopwords[w] && !listVerbs[w] }) {
			return ""
		}
		noun := strings.TrimSuffix(toks[j], "s")
		if choiceWords[noun] && j > i+1 && !nounFillers[toks[j-1]] {
			noun = toks[j-1] // "subscription options": subscriptions
		}
		return noun
	}
	return ""
}

// plural reports whether a word reads as a plural noun: four letters or
// more, ending in one "s".
func plural(w string) bool {
	return len(w) >= 4 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss")
}

// listVerbs are the words after a list question's noun that ask what
// there is: offered, had, sold, bought, chosen, or there at all.
var listVerbs = map[string]bool{"offer": true, "have": true, "has": true, "sell": true, "provide": true, "available": true,
	"there": true, "exist": true, "include": true, "buy": true, "purchase": true, "choose": true, "pick": true,
	"select": true, "sign": true, "subscribe": true, "order": true}

// choiceWords name choices of a kind without naming the kind: "options"
// of "subscription options".
var choiceWords = map[string]bool{"option": true, "choice": true, "level": true, "offering": true, "variant": true}

// listNoun reports whether a plural names a list or a choice (listNouns,
// choiceWords, "kinds", "types"): "tiers" of "subscription tiers", not
// the verb "includes" of "which plan includes SSO".
func listNoun(w string) bool {
	n := strings.TrimSuffix(w, "s")
	if choiceWords[n] || n == "kind" || n == "type" || n == "sort" {
		return true
	}
	for _, g := range listNouns {
		if slices.Contains(g, n) {
			return true
		}
	}
	return false
}

// listNouns are the nouns that name the same kind of list: a pricing
// tier is a plan.
var listNouns = [][]string{{"plan", "tier", "package", "edition", "subscription"}, {"product", "module"}}

// enumerationRE is a list of three or more names: "Starter, Team,
// Business and Enterprise".
var enumerationRE = regexp.MustCompile(`\p{Lu}[\w-]*(?:,\s+\p{Lu}[\w-]*){1,},?\s+(?:and|or)\s+\p{Lu}[\w-]*`)

// enumerates reports whether a sentence lists the things a noun names
// (askedList): it names the noun, or one of the same list (listNouns),
// and a list of three or more names.
func enumerates(sentence, noun string) bool {
	if !enumerationRE.MatchString(sentence) {
		return false
	}
	nouns := []string{noun}
	for _, g := range listNouns {
		if slices.Contains(g, noun) {
			nouns = g
		}
	}
	for _, t := range tokens(sentence) {
		if slices.Contains(nouns, strings.TrimSuffix(t, "s")) {
			return true
		}
	}
	return false
}

// asksDuration reports whether a question (its tokens) asks how long
// something takes: "how fast", "how quickly", "how soon", "how long",
// "how many hours", a turnaround or a response time.
func asksDuration(qwords []string) bool {
	// "fast", "quickly", "soon" ask a duration after "how" or "as" ("how
	// soon", "as fast as"), not elsewhere ("quick question", "coming
	// soon", "fast-growing"); a comparative ("faster help") or a
	// turnaround asks one of help or a reply.
	if hasAny(qwords, "faster", "quicker", "sooner", "turnaround") && asksOfHelp(qwords) {
		return true
	}
	for i := 1; i < len(qwords); i++ {
		switch {
		case hasAny(qwords[i-1:i], "how", "as") && hasAny(qwords[i:i+1], "fast", "quickly", "quick", "soon", "promptly"),
			qwords[i-1] == "how" && qwords[i] == "long",
			// "What is the length of a demo?", "the duration of the
			// trial": a span of time asked by its noun.
			durationNoun(qwords[i-1]) && qwords[i] == "of",
			qwords[i-1] == "many" && measureUnits[unitOf(qwords[i])] && timeUnits[unitOf(qwords[i])],
			qwords[i] == "time" && inGroup(qwords[i-1], respondWords):
			return true
		}
	}
	return false
}

// durationNoun reports whether w is a noun of a span of time that a
// question asks by ("the length of a demo", "the duration of the
// trial"): with "of" after it, it asks a duration (asksDuration).
func durationNoun(w string) bool { return w == "length" || w == "duration" }

// asksResponseTime reports whether a question asks how soon help comes:
// a duration of support, a ticket or an issue ("how fast is support?",
// "how quickly are urgent tickets handled?").
func asksResponseTime(q string) bool {
	w := tokens(q)
	return asksDuration(w) && asksOfHelp(w)
}

// asksOfHelp reports whether a question (its tokens) is about help or a
// reply: support, a ticket, an issue, an emergency, a response. Whole
// words, so that "issued" or "supported" are not.
func asksOfHelp(w []string) bool {
	return hasAny(w, "support", "help", "ticket", "tickets", "issue", "issues", "problem", "problems", "incident", "incidents") ||
		hasPrefix(w, "emergenc", "urgen", "critic") || slices.ContainsFunc(w, func(t string) bool { return inGroup(t, respondWords) })
}

// timeUnits are the units of a duration.
var timeUnits = map[string]bool{"second": true, "minute": true, "hour": true, "day": true, "week": true, "month": true, "year": true}

// namesDuration reports whether a sentence states a duration ("4 hours",
// "one business day", "within 30 days").
func namesDuration(s string) bool {
	return slices.ContainsFunc(quantities(s), func(q quantity) bool { return timeUnits[q.unit] })
}

// askedSections returns, by document, the section the question names:
// "the Business plan" names "pricing § Business" when the results hold
// sections of pricing.
func askedSections(qwords []string, rs []result) map[string]string {
	asked := map[string]string{}
	for _, r := range rs {
		for _, s := range sentencesOf(r.text) {
			doc, sec, ok := strings.Cut(s.where, " § ")
			if !ok {
				continue
			}
			st := tokens(sec)
			if len(st) > 0 && !slices.ContainsFunc(st, func(w string) bool { return !slices.Contains(qwords, w) }) {
				asked[doc] = sec
			}
		}
	}
	return asked
}

// isAboutOthers reports whether words name a competitor or competitors in
// general.
func isAboutOthers(words []string) bool {
	return hasPrefix(words, "competit", "rival", "alternative") || hasPrefix(words, competitorNames...)
}

// isPriceQuestion reports whether the question asks about money, so that
// sentences with amounts score higher.
func isPriceQuestion(words []string) bool {
	return hasPrefix(words, "pric", "cost", "charg", "fee", "cheap", "expens", "pay", "budget", "$")
}

// stem is the Snowball English (Porter2) stem of w (see lexicon.Stem):
// "pricing", "priced" and "prices" are "price", "replies" and "reply"
// "repli", and "started" is "start" while "starter" is "starter".
func stem(w string) string { return lexicon.Stem(w) }

// sameStem reports whether t, a passage's word, has the stem s. A stem
// is its word's first letters but perhaps the last ("happi" of
// "happy"), so t is stemmed only when it starts with them.
func sameStem(t, s string) bool {
	if t == s {
		return true
	}
	n := len(s) - 1
	return n > 0 && len(t) > n && t[:n] == s[:n] && stem(t) == s
}

// compose quotes the sentences of the results that best match the
// question, best first: at most six, at most two from one passage or page,
// each with its source. A sentence scores two points per question word it
// contains and one more when it has a figure; those scoring under half the
// best are left out. Lines that are already quotes (a synthesis being
// written up) keep their quote and source.
//
// The user's style changes how much is quoted: concise, the one or two
// best sentences as prose; detailed, up to ten sentences, more of each
// passage, and the sources listed at the end. A list format numbers the
// quotes or keeps them as bullets.
func compose(q string, rs []result) string { return composeFor(q, rs, about{}) }

func composeFor(q string, rs []result, u about) string {
	// minShare: sentences scoring under this share of the best are left
	// out.
	maxQuotes, perPlace, minShare := 6, 2, 0.5
	switch u.style {
	case cognition.Concise:
		maxQuotes, perPlace, minShare = 2, 1, 1
	case cognition.Detailed:
		maxQuotes, perPlace, minShare = 10, 4, 0.3
	}
	words := contentWords(q)
	money := isPriceQuestion(words)
	// "4 hours" asked finds "a 4-hour response target", and "2 business
	// days" finds "two business days".
	asksQuantities := quantities(q)
	duration, place := asksDuration(tokens(q)), asksPlace(q)
	companyPlace := place && asksCompanyPlace(q)
	valueKind := askedKind(tokens(q)) // a count or a year asked
	noun := askedNoun(q)              // the noun a count is asked of
	var thingsOnce map[string]bool
	things := func() map[string]bool { // thingNames, once asked
		if thingsOnce == nil {
			thingsOnce = thingNames(rs)
		}
		return thingsOnce
	}
	listed := askedList(tokens(q))
	// askedOf: the question names what it asks the place or duration
	// of, besides words of place and frame words ("where are your
	// servers located?" names nothing else).
	// Where the company is asked by its office or headquarters ("where
	// is your head office?") names nothing else either.
	askedOf := slices.ContainsFunc(words, func(w string) bool {
		return !frameWords[w] && !inGroup(w, placeWords) && !inGroup(w, placeVerbs) &&
			!(companyPlace && (inGroup(w, companyPlaceWords) || w == "head"))
	})
	type cand struct {
		text, where string
		score       float64 // a related word adds less than a whole word
		src         int
		quantity    bool // it names a quantity the question asks
		kind        bool // it gives the kind of answer asked: a duration, a place
		subject     bool // it matches a word of the question that is not a frame word ("plan")
		named       bool // it matches a name the question gives ("Forecast", "Team")
		attribute   int  // how many words it matches of what the question asks of the name: neither names nor frame words ("rate limit")
		others      bool // it is about a competitor, and the question about us
	}
	var cands []cand
	top := 0.0
	syn := expandWords(q, words, resultWords(rs))
	qwords := tokens(q)
	aboutOthers := isAboutOthers(qwords)
	asked := askedSections(qwords, rs)
	names := map[string]bool{}
	for _, n := range namesIn(q) {
		// "API", "SLA": what is asked, not of what. Nor is the company's
		// own name, which every document is about ("how many
		// organisations use Acme Analytics?" asks of its customers).
		if !isAcronym(n) && !companyWord(strings.ToLower(n)) {
			names[strings.ToLower(n)] = true
		}
	}
	asks := map[string]bool{} // the words that say what is asked: not "support" of "do you support Snowflake?"
	for _, w := range relevanceWords(q) {
		asks[w] = true
	}
	focus := focusWords(q, words)
	for i, r := range rs {
		for _, s := range sentencesOf(r.text) {
			score, subject, named, attribute := 0.0, false, false, 0
			toks := s.toks
			if !coversFocus(focus, syn, toks, s.heading) {
				continue // it shares only generic or frame words with the question
			}
			// "Free" is a price too: "do viewers cost anything?" is
			// answered by "viewers are always free".
			free := money && slices.Contains(toks, "free")
			if money && (free || strings.Contains(s.text, "$")) {
				attribute++ // a price, asked as "how much"
			}
			// What kind of answer is asked: a duration ("how fast",
			// "turnaround") or a place ("where"). A sentence that gives
			// one says what is asked, over those that merely share the
			// question's nouns ("data" of "where is my data stored?").
			kind := duration && namesDuration(s.text) ||
				place && slices.ContainsFunc(toks, func(t string) bool { return inGroup(t, placeWords) }) ||
				companyPlace && namesPlace(s.text, things()) ||
				valueKind != kindNone && givesKind(valueKind, s.text, focus, noun)
			heading := s.heading
			// A passage whose heading is a place ("Data residency") is
			// where a place asked is: its sentences come before those
			// that only mention a region ("a dedicated cloud region").
			if kind && place && !companyPlace && slices.ContainsFunc(heading, func(t string) bool { return inGroup(t, placeWords) }) {
				score += 2
			}
			// A heading that asks a question ("Is there an on-premises
			// version?") is what its passage answers, even in sentences
			// that do not repeat it ("No.").
			faq := strings.HasSuffix(strings.TrimSpace(s.where), "?")
			for _, w := range words {
				hit := true
				switch {
				case matches(w, toks):
					score += 2
				case faq && matches(w, heading):
					score += 2
				case matches(w, heading):
					score++ // the passage is about it
				case syn.match(w, toks), syn.match(w, heading):
					score += max(syn.credit(w, toks), syn.credit(w, heading)) // another word for it: below the word itself
				default:
					hit = false
				}
				subject = subject || hit && !frameWords[w]
				// A name is matched as written, not by its stem: "Every
				// plan starts" does not name Starter.
				named = named || hit && names[w] && (slices.Contains(toks, w) || slices.Contains(heading, w) || slices.Contains(toks, w+"s"))
				if hit && !names[w] && !frameWords[w] && asks[w] {
					attribute++
				}
			}
			// "What plans do you offer?": the sentence that lists them
			// ("four pricing tiers: Starter, Team, Business and
			// Enterprise") answers it, in whatever words it says them.
			if listed != "" && enumerates(s.text, listed) {
				score += 4
				subject = true
				kind = true
			}
			// The kind of answer counts in a sentence that is about the
			// question's subject too: "in the customer's region" names
			// a place, but not of what "where do customers get support?"
			// asks.
			kind = kind && (subject || !askedOf)
			if kind {
				score += 2
				attribute++
			}
			if score == 0 && len(words) > 0 {
				continue
			}
			if len(toks) > 0 && slices.ContainsFunc(words, func(w string) bool { return matches(w, toks[:1]) }) {
				score++ // the sentence is about what was asked: it is its subject
			}
			if doc, sec, ok := strings.Cut(s.where, " § "); ok && asked[doc] != "" && asked[doc] != sec {
				score -= 2 // a sibling section: the question names another one of the document
			}
			others := !aboutOthers && (isAboutOthers(toks) || isAboutOthers(heading))
			if others {
				score -= 3 // about a competitor, when the question is about us
			}
			if free {
				score += 3 // as much as a figure in dollars
			}
			if strings.ContainsAny(s.text, "0123456789") {
				score++
				if money && strings.Contains(s.text, "$") {
					score += 2
				}
			}
			quantity := sharesQuantity(s.text, asksQuantities)
			if quantity {
				score += 3 // the quantity asked about, however written
			}
			if score <= 0 {
				continue
			}
			where := s.where
			if !s.quoted {
				where = r.source
				if s.where != "" {
					where += ": " + s.where
				}
			}
			cands = append(cands, cand{s.text, where, score, i, quantity, kind, subject, named, attribute, others})
			top = max(top, score)
		}
	}
	// A sentence quoted must share what is asked, not just a word of the
	// question: once one names the quantity asked ("every 5 minutes" for
	// "5 mins"), those that do not ("a 14-day free trial") are left out,
	// once one gives the kind of answer asked (a place for "where", a
	// duration for "how fast"), those that do not are,
	// and once one matches the subject, those that match only a frame
	// word ("plan") are. Then, when the question names something ("How
	// much does Forecast cost?", "and for the Team plan?" after a question
	// about rate limits), those that do not name it are left out, and of
	// the rest those that say nothing of what is asked about it ("Team
	// costs $49" for its rate limit).
	for _, keep := range []func(c cand) bool{
		func(c cand) bool { return c.quantity },
		func(c cand) bool { return c.kind },
		func(c cand) bool { return c.subject },
	} {
		if slices.ContainsFunc(cands, keep) {
			cands = slices.DeleteFunc(cands, func(c cand) bool { return !keep(c) })
		}
	}
	// A question that refers back with a pronoun ("is it billed
	// annually?") names, through the conversation, what it is asked of,
	// not what is asked: it keeps every sentence that matches.
	pronoun := hasAny(qwords, "it", "its", "they", "them", "their")
	if most := slices.MaxFunc(append(cands, cand{}), func(a, b cand) int { return a.attribute - b.attribute }).attribute; most > 0 && len(names) > 0 && !pronoun {
		// What is asked comes first: the sentences that match at least
		// half as many of the asked words as the best ("Team costs $49
		// ... no editor limit" says little of a rate limit), and of
		// those, the ones that name what it is asked of, if any do
		// ("Non-profits get 40% off Team and Business" answers a
		// discount on Starter, though it does not name Starter).
		cands = slices.DeleteFunc(cands, func(c cand) bool { return 2*c.attribute < most })
		if slices.ContainsFunc(cands, func(c cand) bool { return c.named }) {
			cands = slices.DeleteFunc(cands, func(c cand) bool { return !c.named })
		}
	}
	// A question about us ("you", or no other company named) is
	// answered from our own sources first within a band: a
	// competitor's sentence ranks as if it scored othersPenalty less (on
	// top of the penalty above) and after our own at the same rank, so
	// "viewers are always free" comes before a competitor's price of
	// viewers; but a sentence marked as a competitor's that answers far
	// better than any of ours is not buried under a weak one of ours, as
	// the competitor words ("alternatives", "rival") may be wrong.
	rank := func(c cand) float64 {
		if c.others {
			return c.score - othersPenalty
		}
		return c.score
	}
	top = 0
	for i, c := range cands {
		if i == 0 || rank(c) > top {
			top = rank(c)
		}
	}
	better := func(a, b cand) bool {
		if ra, rb := rank(a), rank(b); ra != rb {
			return ra > rb
		}
		return !a.others && b.others
	}
	sort.SliceStable(cands, func(i, j int) bool { return better(cands[i], cands[j]) })
	var b strings.Builder
	b.WriteString("Here is what I found:\n")
	// Every source gets its best sentence in first, then the best of the
	// rest fill up.
	var picked []cand
	perWhere := map[string]int{}
	seen := map[string]bool{}
	take := func(c cand) {
		perWhere[c.where]++
		seen[c.text] = true
		picked = append(picked, c)
	}
	for i := range rs {
		for _, c := range cands {
			if c.src == i && len(picked) < maxQuotes && (u.style != cognition.Concise || rank(c) == top) {
				take(c)
				break
			}
		}
	}
	for _, c := range cands {
		if len(picked) == maxQuotes || c.score < minShare*top {
			break
		}
		if perWhere[c.where] < perPlace && !seen[c.text] {
			take(c)
		}
	}
	sort.SliceStable(picked, func(i, j int) bool { return better(picked[i], picked[j]) })
	if len(picked) == 0 {
		return notFound(q, rs, nil)
	}
	if u.style == cognition.Concise && u.format == "" {
		// Prose: the sentences, then where they are from.
		var texts, wheres []string
		for _, c := range picked {
			texts = append(texts, strings.TrimSpace(c.text))
			if !slices.Contains(wheres, c.where) {
				wheres = append(wheres, c.where)
			}
		}
		return strings.Join(texts, " ") + " (" + strings.Join(wheres, "; ") + ")"
	}
	if u.style == cognition.Detailed {
		b.Reset()
		fmt.Fprintf(&b, "Here is what I found, in detail (%d passages):\n", len(picked))
	}
	for i, c := range picked {
		if u.format == "numbered lists" {
			fmt.Fprintf(&b, "\n%d. %q (%s)", i+1, c.text, c.where)
			continue
		}
		fmt.Fprintf(&b, "\n- %q (%s)", c.text, c.where)
	}
	if u.style == cognition.Detailed {
		var wheres []string
		for _, c := range picked {
			if !slices.Contains(wheres, c.where) {
				wheres = append(wheres, c.where)
			}
		}
		fmt.Fprintf(&b, "\n\nSources: %s.", strings.Join(wheres, "; "))
	}
	return b.String()
}

// sentence is a sentence of a result and the passage or page it is from;
// quoted is true for a line that was already a quote with its full source.
type sentence struct {
	text, where string
	quoted      bool
	// words are tokens(text + " " + where), cut once when the result is
	// (the rules read every sentence's words several times a turn);
	// toks and heading are its text's and its where's.
	words, toks, heading []string
}

var (
	passageLabelRE = regexp.MustCompile(`^\[\d+\]\s+(.*?)(?:\s+\(score [\d.]+\))?$`)
	listLabelRE    = regexp.MustCompile(`^\d+\.\s+(.+)$`)
	urlRE          = regexp.MustCompile(`^https?://\S+$`)
	sentenceEndRE  = regexp.MustCompile(`([.!?])\s+`)
	headingRE      = regexp.MustCompile(`^#{1,6}\s+(.+)$`)
	quoteLineRE    = regexp.MustCompile(`^- ("(?:[^"\\]|\\.)*") \((.*)\)$`)
)

// sentencesOf cuts a result into sentences, remembering the passage label
// ("[1] pricing § Team") or page title each comes from. The same result is
// read by several rules in a turn (and by the reflection and the writer),
// so the cut is remembered per text; the slice returned is shared and
// must not be modified.
func sentencesOf(text string) []sentence { return sentenceMemo.get(text, cutSentences) }

// sentenceMemo holds the sentences of recent results: up to 512 texts or
// 4 MiB of them.
var sentenceMemo = memo[[]sentence]{maxEntries: 512, maxBytes: 4 << 20}

// cutSentences is sentencesOf without the memo. Each line is tried only
// against the patterns its first bytes allow.
func cutSentences(text string) []sentence {
	var out []sentence
	var where string
	var para []string
	flush := func() {
		if len(para) == 0 {
			return
		}
		joined := strings.Join(para, " ")
		para = para[:0]
		for s := range sentenceSplits(joined) {
			if s = strings.TrimSpace(s); len(s) > 2 {
				out = append(out, sentence{text: s, where: where})
			}
		}
	}
	for line := range strings.SplitSeq(text, "\n") {
		t := strings.TrimSpace(line)
		if t == "" {
			flush()
			continue
		}
		if m := submatchIf(strings.HasPrefix(t, `- "`), quoteLineRE, t); m != nil {
			flush()
			if text, err := strconv.Unquote(m[1]); err == nil {
				out = append(out, sentence{text: text, where: m[2], quoted: true})
			}
		} else if strings.HasPrefix(t, "Here is what I found:") {
			flush()
		} else if m := submatchIf(t[0] == '#', headingRE, t); m != nil {
			flush()
			where = m[1]
		} else if m := submatchIf(t[0] == '[', passageLabelRE, t); m != nil {
			flush()
			where = m[1]
		} else if m := submatchIf('0' <= t[0] && t[0] <= '9' && !strings.HasSuffix(t, "."), listLabelRE, t); m != nil {
			flush()
			where = m[1]
		} else if strings.HasPrefix(t, "http") && urlRE.MatchString(t) {
			flush()
			where += " <" + t + ">"
		} else if strings.HasSuffix(t, ":") && strings.Contains(t, "passages for") || strings.HasPrefix(t, "Web results for") {
			// a result list's heading
		} else {
			para = append(para, t)
		}
	}
	flush()
	for i := range out {
		s := &out[i]
		s.words = tokens(s.text + " " + s.where)
		n := len(tokens(s.text))
		s.words = s.words[:len(s.words):len(s.words)]
		s.toks, s.heading = s.words[:n:n], s.words[n:]
	}
	return slices.Clip(out)
}

// submatchIf is re's submatches in s when may is true (a cheap test that
// s can match at all), nil otherwise.
func submatchIf(may bool, re *regexp.Regexp, s string) []string {
	if !may {
		return nil
	}
	return re.FindStringSubmatch(s)
}

// sentenceSplits cuts s after every '.', '!' or '?' followed by
// white space (the white space dropped) and at NUL bytes.
func sentenceSplits(s string) iter.Seq[string] {
	return func(yield func(string) bool) {
		start := 0
		for i := 0; i < len(s); i++ {
			switch c := s[i]; {
			case c == 0:
				if !yield(s[start:i]) {
					return
				}
				start = i + 1
			case (c == '.' || c == '!' || c == '?') && i+1 < len(s) && isSpaceByte(s[i+1]):
				if !yield(s[start : i+1]) {
					return
				}
				j := i + 1
				for j < len(s) && isSpaceByte(s[j]) {
					j++
				}
				start, i = j, j-1
			}
		}
		yield(s[start:])
	}
}

// isSpaceByte is regexp's \s: tab, newline, form feed, carriage return
// and space.
func isSpaceByte(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r'
}

var (
	emailRE   = regexp.MustCompile(`[\w.+-]+@[\w-]+\.[\w.-]+`)
	dateRE    = regexp.MustCompile(`\b\d{4}-\d{1,2}-\d{1,2}\b|\b\d{1,2}/\d{1,2}/\d{2,4}\b`)
	timeRE    = regexp.MustCompile(`\b\d{1,2}:\d{2}\b`)
	versionRE = regexp.MustCompile(`\bv?\d+\.\d+\.\d+\b`)
	// roundTheClockRE is availability around the clock ("24/7 support",
	// "24x7", "24/7/365"), no division.
	roundTheClockRE = regexp.MustCompile(`\b24\s*[/x]\s*7(?:\s*/\s*365)?\b`)
)

// tokens are the words of s in lower case: runs of ASCII letters, digits,
// '$' and '%', each with an apostrophe and the letters after it ("don't").
// The rules call it for every sentence of every result, so it is a
// scanner rather than a regular expression.
func tokens(s string) []string {
	s = strings.ToLower(s)
	var out []string
	for i := 0; i < len(s); {
		if !isWordByte(s[i]) {
			i++
			continue
		}
		j := i + 1
		for j < len(s) && isWordByte(s[j]) {
			j++
		}
		if j+1 < len(s) && s[j] == '\'' && 'a' <= s[j+1] && s[j+1] <= 'z' {
			j += 2
			for j < len(s) && 'a' <= s[j] && s[j] <= 'z' {
				j++
			}
		}
		if out == nil {
			out = make([]string, 0, 8)
		}
		out = append(out, s[i:j])
		i = j
	}
	return out
}

func isWordByte(c byte) bool {
	return 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '$' || c == '%'
}

// stopwords are the function words of a question (see lexicon.StopWord),
// a map for the many lookups of this package.
var stopwords = map[string]bool{}

func init() {
	for _, w := range lexicon.StopWords() {
		stopwords[w] = true
	}
}

// contentWords are the question's words that carry meaning. A word
// written with hyphens ("on-prem", "e-mail", "self-hosted") is one word,
// as the question means it, not its parts ("e" and "mail"); matches finds
// it in a passage written either way.
func contentWords(q string) []string {
	return contentWordsOf(q, func() bool { return asksConnecting(q) })
}

// contentWordsOf is contentWords with whether the question asks about
// connecting (withCategories) said by connecting: a part of a question
// is read as the whole question is.
func contentWordsOf(q string, connecting func() bool) []string {
	if strings.IndexByte(q, '-') >= 0 {
		q = joinCompounds(q)
	}
	// Both patterns need a word of theirs, which a cheap test finds
	// first.
	if containsFold(q, "own") {
		q = replaceAll(ownServersRE, q, "selfhost$1")
	}
	if containsFold(q, "back") {
		q = replaceAll(getBackRE, q, "reply")
	}
	if containsFold(q, "work") || containsFold(q, "employed") {
		q = replaceAll(workingRE, q, "employees")
	}
	return withCategories(wordsOf(q), connecting)
}

// ownServersRE is running a thing on one's own servers ("can we host
// Acme on our own servers?", "run it on my own hardware"), which is
// self-hosting it: the words alone ("host", "server") say nothing of it.
var ownServersRE = regexp.MustCompile(`(?i)\b(?:host|run|install|deploy)(?:s|ing|ed)?((?:\s+[^\s.?!]+){0,3}?)\s+on\s+(?:our|my|its|their|your)\s+own\s+(?:servers?|hardware|infrastructure|machines?)\b`)

// workingRE is the people who work at a place ("how many people work at
// Acme?", "folks working for you"), its employees: the words alone
// ("people", "work") say nothing of them.
var workingRE = regexp.MustCompile(`(?i)\b(?:people|persons|folks|individuals)\s+(?:who\s+|that\s+)?(?:work|works|working|are\s+employed|employed)\b`)

// getBackRE is "get back to" someone or "hear back", said for a reply,
// whose words alone ("back") mean nothing of it; "get back a deleted
// dashboard" or "get back my money" are no reply.
var getBackRE = regexp.MustCompile(`(?i)\b(?:(?:get|gets|getting|got)\s+back\s+to\s+(?:me|us|you|them|him|her)|(?:hear|hears|hearing|heard)\s+back)\b`)

// wordsOf are the words of s that carry meaning, a hyphenated word as
// its parts.
func wordsOf(q string) []string {
	var out []string
	seen := map[string]bool{}
	for _, w := range tokens(q) {
		if len(w) < 2 && (w < "1" || w > "9") || stopwords[w] || seen[w] {
			continue // a single digit counts: "4 data sources"
		}
		seen[w] = true
		out = append(out, w)
	}
	return out
}

// compoundRE is a word of letters written with hyphens: "on-prem",
// "e-mail", "drag-and-drop". A number and a unit ("4-hour") are not one.
var compoundRE = regexp.MustCompile(`\b[A-Za-z]+(?:-[A-Za-z]+)+\b`)

// joinCompounds writes the hyphenated words of s as one word: "on-prem"
// is "onprem", "e-mail" is "email".
func joinCompounds(s string) string {
	return replaceAllFunc(compoundRE, s, func(c string) string { return strings.ReplaceAll(c, "-", "") })
}

// searchQuery is the question without filler words, for a search tool,
// a hyphenated word as its parts (as a search engine indexes it),
// followed by the search forms of the synonyms its words have ("on-prem"
// also searches "on-premises", which a search engine does not find from
// "prem").
func searchQuery(q string) string {
	w := wordsOf(q)
	if len(w) == 0 {
		return q
	}
	for _, x := range w {
		// A number as the passages may write it: "four" as "4", "3" as
		// "three".
		if v, ok := numberValue(x); ok {
			for _, f := range []string{v, spelledNumber(v)} {
				if f != "" && !slices.Contains(w, f) {
					w = append(w, f)
				}
			}
		}
	}
	for _, x := range contentWords(q) {
		for _, g := range synonyms {
			if f := searchForms[g[0]]; f != "" && inGroup(x, g) && !slices.Contains(w, f) {
				w = append(w, f)
			}
		}
		// "Do you integrate with a CRM?" finds the passages that name
		// Salesforce or HubSpot.
		if c := categoryOf[x]; c != nil {
			for _, m := range c.members {
				if !slices.Contains(w, m) {
					w = append(w, m)
				}
			}
		}
	}
	if asksResponseTime(q) && !slices.Contains(w, "response") {
		w = append(w, "response") // "how fast is support?" asks its response target
	}
	if workingRE.MatchString(q) && !slices.Contains(w, "employees") {
		w = append(w, "employees") // "how many people work at Acme?" asks of its employees
	}
	if place := asksPlace(q); place && asksCompanyPlace(q) {
		// "Where r ur offices?" finds where the company was founded,
		// is based and has its people.
		for _, x := range []string{"company", "founded", "based", "offices", "employees"} {
			if !slices.Contains(w, x) {
				w = append(w, x)
			}
		}
	} else if place && !slices.Contains(w, "region") {
		w = append(w, "region") // "which countries host my data?" asks its region
	}
	// "What plans do you offer?" finds the sentence that lists the
	// tiers.
	if listed := askedList(tokens(q)); listed != "" {
		for _, g := range listNouns {
			if slices.Contains(g, listed) {
				for _, n := range g {
					if n != listed && !slices.Contains(w, n+"s") {
						w = append(w, n+"s")
					}
				}
			}
		}
	}
	return strings.Join(w, " ")
}

func hasAny(words []string, any ...string) bool {
	for _, w := range words {
		if slices.Contains(any, w) {
			return true
		}
	}
	return false
}

func hasPrefix(words []string, prefixes ...string) bool {
	for _, w := range words {
		for _, p := range prefixes {
			if strings.HasPrefix(w, p) {
				return true
			}
		}
	}
	return false
}

// isGreeting reports whether w only greets: a greeting word ("hi", "good
// morning"), then at most who it greets ("hi there", "hello team") and
// a "how are you" ("hi, how are you today?"), or a "how are you" alone.
// A greeting with anything else ("Hey, I need an invoice", "Hi, refund
// policy?") asks something.
func isGreeting(w []string) bool {
	if len(w) == 0 || len(w) > 8 {
		return false
	}
	s := strings.Join(w, " ")
	var rest []string
	switch {
	case hasAny(w[:1], "hi", "hello", "hey", "hiya", "greetings", "howdy", "yo"):
		rest = w[1:]
	case strings.HasPrefix(s, "good morning") || strings.HasPrefix(s, "good afternoon") || strings.HasPrefix(s, "good evening"):
		rest = w[2:]
	default:
		return isSmalltalk(w)
	}
	if len(rest) > 0 && greetedListeners[rest[0]] {
		rest = rest[1:] // "hi all", "hello team": whom, right after the greeting
	}
	for len(rest) > 0 && greetingFillers[rest[0]] {
		rest = rest[1:]
	}
	return len(rest) == 0 || isSmalltalk(rest)
}

// greetedListeners are words an English greeting names its listeners
// with right after its greeting word ("hi all", "hello team"); elsewhere
// they carry a question ("Thanks! And Team?").
var greetedListeners = map[string]bool{"all": true, "team": true, "y'all": true}

// isSmalltalk reports whether w is a "how are you", perhaps of today
// ("how are you doing today").
func isSmalltalk(w []string) bool {
	for len(w) > 1 && hasAny(w[len(w)-1:], "today", "tonight") {
		w = w[:len(w)-1]
	}
	return smalltalk[strings.Join(w, " ")]
}

// isThanks reports whether w only thanks or takes leave: a thanks word
// ("thanks", "cheers") or "ok bye", and otherwise only the words thanks
// are said with ("thank you so much", "thanks a lot for your help"). A
// thanks with a question or anything else ("thanks, but what about SSO?",
// "Cheers, what does Team cost?") asks it.
func isThanks(w []string) bool {
	if len(w) == 0 || len(w) > 8 || !hasAny(w, "thanks", "thank", "thx", "cheers") && strings.Join(w, " ") != "ok bye" {
		return false
	}
	for _, x := range w {
		if !thanksWords[x] {
			return false
		}
	}
	return true
}

// thanksWords are the words a message that only thanks or takes leave is
// made of.
var thanksWords = map[string]bool{"thanks": true, "thank": true, "thx": true, "cheers": true, "you": true, "so": true,
	"much": true, "very": true, "a": true, "lot": true, "many": true, "again": true, "ok": true, "okay": true, "bye": true,
	"goodbye": true, "great": true, "perfect": true, "awesome": true, "cool": true, "nice": true, "for": true, "the": true,
	"your": true, "help": true, "that's": true, "that": true, "all": true, "really": true, "appreciate": true, "it": true,
	"got": true, "thats": true, "helpful": true, "super": true, "mate": true}

// isVague: too short to act on, or an action on an object it does not name.
func isVague(w []string) bool {
	for len(w) > 1 && hasAny(w[:1], "can", "could", "would", "will", "please", "you", "just", "pls", "kindly") {
		w = w[1:]
	}
	content := 0
	for _, x := range w {
		if !stopwords[x] {
			content++
		}
	}
	if content == 0 || (len(w) < 2 && !isCompany(w) && !strings.ContainsAny(strings.Join(w, ""), "0123456789")) {
		return true
	}
	verbs := []string{"update", "change", "fix", "edit", "delete", "remove", "send", "check", "redo", "improve", "do", "handle", "finish", "continue"}
	vagueObjects := []string{"it", "that", "this", "them", "document", "doc", "file", "thing", "stuff", "one", "report"}
	if len(w) <= 4 && hasAny(w[:1], verbs...) && hasAny(w[1:], vagueObjects...) {
		return true
	}
	// "I need help with something", "can you sort this out for me": every
	// word that carries meaning is a general verb or an object that names
	// nothing.
	generic := map[string]bool{"help": true, "need": true, "want": true, "something": true, "anything": true,
		"everything": true, "sort": true, "out": true, "look": true, "deal": true, "work": true, "question": true,
		"problem": true, "issue": true, "task": true, "things": true, "thing": true, "stuff": true, "matter": true}
	for _, x := range verbs {
		generic[x] = true
	}
	for _, x := range vagueObjects {
		generic[x] = true
	}
	if len(w) > 8 {
		return false
	}
	for _, x := range w {
		if !stopwords[x] && !generic[x] {
			return false
		}
	}
	return hasAny(w, "something", "anything", "everything", "this", "that", "it", "stuff", "thing", "things", "matter", "problem", "issue", "question", "task")
}

// isFollowUp reports whether a question leans on the previous one: it
// starts with "and", "what about" or "how about", or refers to it with a
// pronoun.
func isFollowUp(w []string) bool {
	if len(w) == 0 {
		return false
	}
	s := strings.Join(w, " ")
	return w[0] == "and" || strings.HasPrefix(s, "what about") || strings.HasPrefix(s, "how about") ||
		(len(w) <= 8 && hasAny(w, "it", "that", "those", "them", "this", "these", "they"))
}

// refersBack reports whether a short question refers to something said
// before with a pronoun ("is it billed annually?", "what about its price?").
func refersBack(w []string) bool {
	return len(w) <= 8 && hasAny(w, "it", "its", "that", "those", "them", "this", "these", "they", "their")
}

// resolve returns q, preceded by the user's previous message when q is a
// follow-up that leans on it.
func resolve(q, conversation string) string {
	if c := corrected(q, conversation); c != "" {
		return c
	}
	if prev := followUpFrame(conversation, q); prev != "" && (isFollowUp(tokens(q)) || refersBack(tokens(q))) {
		return prev + " " + q
	}
	return q
}

// withRewrite returns q followed by the internal query of the latest
// query rewrite among the results, which names what q's pronouns refer to.
func withRewrite(q string, rs []result) string {
	if rw, ok := latestRewrite(rs); ok && rw.Internal != "" {
		return q + " " + rw.Internal
	}
	return q
}

// latestRewrite returns the last query rewrite among the results.
func latestRewrite(rs []result) (rewriteOutput, bool) {
	for i := len(rs) - 1; i >= 0; i-- {
		if rw, ok := rewriteOf(rs[i].text); ok && rs[i].err == "" {
			return rw, true
		}
	}
	return rewriteOutput{}, false
}

// previousQuestion finds the user's previous message in a transcript of
// "user: ..." lines, skipping the current question, without the greeting
// it opens with (see withoutGreeting).
func previousQuestion(conversation, current string) string {
	lines := strings.Split(conversation, "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if msg, ok := strings.CutPrefix(strings.TrimSpace(lines[i]), "user:"); ok {
			if msg = strings.TrimSpace(msg); msg != "" && msg != strings.TrimSpace(current) {
				return withoutGreeting(msg)
			}
		}
	}
	return ""
}

// vagueQuestion asks about the object a vague request leaves open.
func vagueQuestion(w []string) string {
	for _, x := range w[min(1, len(w)):] {
		switch x {
		case "it", "that", "this", "them", "one":
			return "What exactly do you mean by \"" + x + "\", and what would you like me to do?"
		case "document", "doc", "file", "report", "thing", "stuff":
			return "Which " + x + " do you mean, and what would you like me to do with it?"
		case "something", "anything", "everything", "problem", "issue", "question", "task", "things":
			return "Happy to help. What is it about? For example a product, a plan or its price, a policy, a calculation, or a chart of some figures."
		}
	}
	return "Could you tell me a bit more about what you need, for example which product, plan or figure you mean?"
}

func isWebby(w []string) bool {
	return hasAny(w, "latest", "news", "recent", "recently", "today", "current", "currently", "web", "internet", "online", "trending", "announced", "2025", "2026") ||
		hasPrefix(w, "competitor", "rival", "northwind", "contoso", "fabrikam")
}

func isCompany(w []string) bool {
	return hasPrefix(w, "pric", "cost", "plan", "tier", "subscri", "discount", "trial", "refund", "polic", "secur", "complian",
		"gdpr", "soc", "sla", "uptime", "support", "product", "feature", "integrat", "api", "limit", "retention", "onboard",
		"acme", "release", "seat", "editor", "bill", "invoice", "insights", "pipelines", "forecast", "enterprise", "starter",
		"business", "team", "contract", "encrypt", "sso", "saml", "data") || hasAny(w, "our", "we", "us", "you", "your")
}

// arithmetic finds an arithmetic expression in the question and writes it
// in the calculator's syntax, or returns "".
func arithmetic(q string) string {
	s := strings.ToLower(q)
	// Dates, times, e-mail addresses, phone-like and version numbers are
	// not expressions.
	for _, re := range []*regexp.Regexp{emailRE, dateRE, timeRE, versionRE, roundTheClockRE} {
		s = replaceAll(re, s, " ")
	}
	// Thousands separators go first, so that every rule below reads
	// "2,340" as one number; then scale words ("3.5 million", "12k").
	s = replaceAllFunc(thousandsRE, s, func(m string) string { return strings.ReplaceAll(m, ",", "") })
	// Arithmetic asked in German, French or Spanish ("was ist 12 mal 7?")
	// is written with symbols.
	s = foreignArithmetic(s)
	scale := func(m string) string {
		g := scaleRE.FindStringSubmatch(m)
		return "(" + g[1] + "*" + scales[g[2]] + ")"
	}
	s = replaceAllFunc(scaleRE, s, scale)
	// Then spelled-out numbers ("seven times six", "three dozen") and
	// percentages in words ("20 percent of 85").
	s = replaceAllFunc(scaleRE, spellNumbers(s), scale)
	s = replaceAll(percentWordRE, s, "%")
	words := s
	if expr := temperature(s); expr != "" {
		return expr
	}
	if expr := conversion(s); expr != "" {
		return expr
	}
	for _, r := range []struct{ from, to string }{
		{"multiplied by", "*"}, {"divided by", "/"}, {"times", "*"}, {"plus", "+"}, {"minus", "-"},
		{"×", "*"}, {"÷", "/"}, {"**", "^"}, {"square root of", "sqrt"}, {"to the power of", "^"},
		{"modulo", "%"}, {" mod ", " % "},
	} {
		s = strings.ReplaceAll(s, r.from, r.to)
	}
	for _, r := range verbArithmetic {
		s = replaceAll(r.re, s, r.to)
	}
	s = replaceAllFunc(fractionWordRE, s, func(m string) string {
		g := fractionWordRE.FindStringSubmatch(m)
		n := g[1]
		if n == "a" || n == "an" || n == "one" {
			n = "1"
		}
		return n + "/" + denominators[strings.TrimSuffix(g[2], "s")] + " of"
	})
	s = replaceAll(fractionOfRE, s, "($1/$2*$3)")
	s = replaceAll(unitPriceRE, s, "$1 * $2")
	s = replaceAll(percentOffRE, s, "($2-$1/100*$2)")
	s = replaceAll(percentOfRE, s, "($1/100*$2)")
	s = replaceAll(sqrtRE, s, "sqrt($1)")
	s = replaceAll(xTimesRE, s, "$1*$2")
	best := ""
	for _, m := range exprRE.FindAllString(s, -1) {
		m = strings.TrimSpace(m)
		if len(m) > len(best) && opRE.MatchString(m) && balanced(m) {
			best = m
		}
	}
	return periodArithmetic(best, words)
}

// wantsProgramWritten reports whether the message asks for a program to be
// written (and perhaps run) from a description.
func wantsProgramWritten(w []string) bool {
	return hasAny(w, "program", "script", "code", "function", "snippet") && hasAny(w, "write", "create", "generate", "build", "implement")
}

// verbArithmetic are arithmetic said with verbs: "multiply 19 by 21",
// "divide 10 by 4", "add 3 and 4", "subtract 5 from 9", "the sum of 2
// and 3", "the product of 6 and 7", "12 squared".
var verbArithmetic = []struct {
	re *regexp.Regexp
	to string
}{
	// Word problems: "4 friends split a $96 bill", "split $96 between 4
	// people", "pens at $3 each. How much do 17 pens cost?"
	{regexp.MustCompile(`(\d+)\s+(?:[a-z]+\s+){0,2}(?:split|share)s?\s+(?:a|an|the)?\s*\$?(\d+(?:\.\d+)?)`), "$2 / $1"},
	{regexp.MustCompile(`(?:split|share|divide)s?\s+(?:a|an|the)?\s*(?:[a-z]+\s+)?\$?(\d+(?:\.\d+)?)\s*(?:[a-z]+\s+){0,2}(?:among|between|across)\s+(\d+)`), "$1 / $2"},
	{regexp.MustCompile(`\$(\d+(?:\.\d+)?)\s+(?:each|apiece|a piece)\b[^\d$]*?(\d+)\s+[a-z]+`), "$2 * $1"},
	{regexp.MustCompile(`multiply\s+(\d+(?:\.\d+)?)\s+(?:by|and|with)\s+(\d+(?:\.\d+)?)`), "$1 * $2"},
	{regexp.MustCompile(`divide\s+(\d+(?:\.\d+)?)\s+(?:by|into)\s+(\d+(?:\.\d+)?)`), "$1 / $2"},
	{regexp.MustCompile(`(?:add|sum of|total of)\s+(\d+(?:\.\d+)?)\s+(?:and|to|plus)\s+(\d+(?:\.\d+)?)`), "$1 + $2"},
	{regexp.MustCompile(`subtract\s+(\d+(?:\.\d+)?)\s+from\s+(\d+(?:\.\d+)?)`), "$2 - $1"},
	{regexp.MustCompile(`product of\s+(\d+(?:\.\d+)?)\s+and\s+(\d+(?:\.\d+)?)`), "$1 * $2"},
	{regexp.MustCompile(`difference between\s+(\d+(?:\.\d+)?)\s+and\s+(\d+(?:\.\d+)?)`), "$1 - $2"},
	{regexp.MustCompile(`(?:double|twice)\s+(?:of\s+)?(\d+(?:\.\d+)?)`), "2 * $1"},
	{regexp.MustCompile(`(?:triple|thrice)\s+(?:of\s+)?(\d+(?:\.\d+)?)`), "3 * $1"},
	{regexp.MustCompile(`(?:half of|halve)\s+(\d+(?:\.\d+)?)`), "$1 / 2"},
	{regexp.MustCompile(`(?:^|\s)square\s+(\d+(?:\.\d+)?)`), " $1 ^ 2"},
	{regexp.MustCompile(`(\d+(?:\.\d+)?)\s+squared`), "$1 ^ 2"},
	{regexp.MustCompile(`(\d+(?:\.\d+)?)\s+cubed`), "$1 ^ 3"},
}

// fractionWordRE is a fraction in words before "of": "3 quarters of",
// "a third of", "two fifths of" (after spelled-out numbers became digits).
var fractionWordRE = regexp.MustCompile(`\b(\d+|a|an|one)\s+(thirds?|quarters?|fourths?|fifths?|sixths?|eighths?|tenths?|hundredths?)\s+of\b`)

// denominators are the fraction words' denominators.
var denominators = map[string]string{"third": "3", "quarter": "4", "fourth": "4", "fifth": "5", "sixth": "6", "eighth": "8", "tenth": "10", "hundredth": "100"}

// scales are the multipliers of scale words after a number.
var scales = map[string]string{"thousand": "1000", "k": "1000", "million": "1000000",
	"billion": "1000000000", "bn": "1000000000", "trillion": "1000000000000", "dozen": "12"}

// units are the sizes of units in their dimension's base unit: a
// conversion between two units of one dimension is a multiplication.
var units = map[string]struct {
	dim  string
	size float64
}{
	"second": {"time", 1}, "minute": {"time", 60}, "hour": {"time", 3600}, "day": {"time", 86400},
	"week": {"time", 604800}, "fortnight": {"time", 1209600},
	"millimeter": {"length", 0.001}, "millimetre": {"length", 0.001}, "mm": {"length", 0.001},
	"centimeter": {"length", 0.01}, "centimetre": {"length", 0.01}, "cm": {"length", 0.01},
	"meter": {"length", 1}, "metre": {"length", 1}, "kilometer": {"length", 1000}, "kilometre": {"length", 1000},
	"km": {"length", 1000}, "inch": {"length", 0.0254}, "foot": {"length", 0.3048}, "feet": {"length", 0.3048},
	"yard": {"length", 0.9144}, "mile": {"length", 1609.344},
	"milligram": {"mass", 0.001}, "mg": {"mass", 0.001}, "gram": {"mass", 1}, "kilogram": {"mass", 1000},
	"kg": {"mass", 1000}, "pound": {"mass", 453.59237}, "ounce": {"mass", 28.349523125},
	"byte": {"data", 1}, "kilobyte": {"data", 1000}, "megabyte": {"data", 1e6}, "gigabyte": {"data", 1e9},
	"terabyte": {"data", 1e12}, "kb": {"data", 1000}, "mb": {"data", 1e6}, "gb": {"data", 1e9}, "tb": {"data", 1e12},
}

// unit returns w's unit, singular or plural.
func unit(w string) (string, bool) {
	for _, c := range []string{w, strings.TrimSuffix(w, "s"), strings.TrimSuffix(w, "es")} {
		if _, ok := units[c]; ok {
			return c, true
		}
	}
	if w == "inches" {
		return "inch", true
	}
	return "", false
}

// conversion writes a unit conversion ("how many days are in 3 weeks",
// "convert 5 km to meters", "2.5 hours in minutes") as a multiplication,
// or returns "".
func conversion(s string) string {
	var n, from, to string
	if g := howManyRE.FindStringSubmatch(s); g != nil {
		to, n, from = g[1], g[2], g[3]
		if n == "a" || n == "an" || n == "one" {
			n = "1"
		}
	} else if g := convertRE.FindStringSubmatch(s); g != nil {
		n, from, to = g[1], g[2], g[3]
	} else {
		return ""
	}
	f, okf := unit(from)
	t, okt := unit(to)
	if !okf || !okt || units[f].dim != units[t].dim || f == t {
		return ""
	}
	factor := strconv.FormatFloat(units[f].size/units[t].size, 'g', 12, 64)
	return n + " * " + factor
}

var (
	scaleRE   = regexp.MustCompile(`(\d+(?:\.\d+)?)\s*(thousand|million|billion|trillion|bn|k|dozen)\b`)
	howManyRE = regexp.MustCompile(`how many (\w+)\s+(?:are\s+|is\s+|make\s+up\s+|does it take to make\s+)?(?:there\s+)?(?:in|per)\s+(\d+(?:\.\d+)?|an?|one)\s*(\w+)`)
	convertRE = regexp.MustCompile(`(\d+(?:\.\d+)?)\s*(\w+)\s+(?:in|into|to|as)\s+(\w+)\b`)
)

var (
	percentOfRE = regexp.MustCompile(`(\d+(?:\.\d+)?)\s*%\s*of\s*\$?(\d+(?:\.\d+)?)`)
	// "15% off 80 dollars", "20% off of $85": the price less the share.
	percentOffRE = regexp.MustCompile(`(\d+(?:\.\d+)?)\s*%\s*(?:off|discount on|discount off)\s*(?:of\s*|on\s*)?(?:an?\s+|the\s+)?(?:\w+\s+)?(?:of\s+)?\$?(\d+(?:\.\d+)?)`)
	// "1/3 of 90": a fraction of a number.
	fractionOfRE = regexp.MustCompile(`\b(\d+)\s*/\s*(\d+)\s+of\s+\$?(\d+(?:\.\d+)?)`)
	// "3 dozen eggs at 2 dollars each", "5 seats at $49 per seat": a
	// count times a unit price.
	unitPriceRE   = regexp.MustCompile(`(\(\d+(?:\.\d+)?\*\d+\)|\d+(?:\.\d+)?)\s+(?:[a-z]+\s+){0,3}(?:at|for|costing)\s+\$?(\d+(?:\.\d+)?)\s*(?:[a-z]+\s+)?(?:each|apiece|a piece|per [a-z]+)\b`)
	percentWordRE = regexp.MustCompile(`\s*\b(?:percent|per cent|pct)\b`)
	sqrtRE        = regexp.MustCompile(`sqrt\s+(\d+(?:\.\d+)?)`)
	thousandsRE   = regexp.MustCompile(`\d{1,3}(?:,\d{3})+`)
	xTimesRE      = regexp.MustCompile(`(\d)\s*x\s*(\d)`)
	exprRE        = regexp.MustCompile(`(?:sqrt|[\d(])(?:sqrt|[\d\s.+\-*/^%()])*[\d)]`)
	opRE          = regexp.MustCompile(`\d\s*[-+*/^%]\s*[\d(]|\)\s*[-+*/^%]|sqrt\(`)
)

func balanced(s string) bool {
	depth := 0
	for _, r := range s {
		switch r {
		case '(':
			depth++
		case ')':
			depth--
			if depth < 0 {
				return false
			}
		}
	}
	return depth == 0
}

func joinAnd(s []string) string {
	switch len(s) {
	case 0:
		return ""
	case 1:
		return s[0]
	}
	return strings.Join(s[:len(s)-1], ", ") + " and " + s[len(s)-1]
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
