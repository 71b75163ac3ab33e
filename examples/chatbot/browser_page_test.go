package chatbot_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/agentgraph/agentgraph/event"
	"github.com/agentgraph/agentgraph/examples/chatbot"
)

// eval runs a JavaScript expression in the page and returns its value.
func eval[T any](t *testing.T, ctx context.Context, js string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](js))
	if err != nil {
		t.Fatalf("%s: %v", js, err)
	}
	return v
}

// TestPageConversations lists the conversations in the sidebar: a new
// conversation starts empty, the list holds both, switching back loads the
// first one's transcript from the server, and so does a reload.
func TestPageConversations(t *testing.T) {
	ctx := browser(t)
	_, srv := newServer(t, chatbot.Config{})
	err := chromedp.Do(ctx,
		chromedp.Navigate(srv.URL+"/"),
		chromedp.WaitVisible(chromedp.CSS("#demo")),
		chromedp.SendKeys(chromedp.CSS("#message"), "What is 15% of 240?"),
		chromedp.Click(chromedp.CSS("#send")),
		chromedp.WaitVisible(chromedp.CSS(".turn:nth-of-type(1) .usage:not(:empty)")),
		chromedp.WaitVisible(chromedp.CSS(`#conversations li.current`)),
	)
	if err != nil {
		t.Fatal(err)
	}
	first := eval[string](t, ctx, `sessionStorage.getItem("conversation")`)
	err = chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS("#new")),
		chromedp.WaitNotPresent(chromedp.CSS(".turn")),
		chromedp.SendKeys(chromedp.CSS("#message"), "What is 2 + 2?"),
		chromedp.Click(chromedp.CSS("#send")),
		chromedp.WaitVisible(chromedp.CSS(".turn:nth-of-type(1) .usage:not(:empty)")),
		chromedp.WaitVisible(chromedp.CSS(`#conversations li:nth-child(2)`)),
		// The list is fetched again once the turn has ended: wait until
		// the new conversation has its title from the server.
		chromedp.Poll[chromedp.Void](`!document.querySelector("#conversations").textContent.includes("New conversation")`),
	)
	if err != nil {
		t.Fatal(err)
	}
	if n := eval[int](t, ctx, `document.querySelectorAll(".turn").length`); n != 1 {
		t.Errorf("the new conversation shows %d turns, want its own 1", n)
	}
	list := text(t, ctx, "#conversations")
	if !strings.Contains(list, "What is 15% of 240?") || !strings.Contains(list, "What is 2 + 2?") {
		t.Errorf("conversation list %q lacks a conversation", list)
	}
	err = chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`#conversations li[data-id="`+first+`"] button`)),
		chromedp.WaitVisible(chromedp.CSS(`.turn[data-history] .answer`)),
	)
	if err != nil {
		t.Fatal(err)
	}
	check := func(when string) {
		t.Helper()
		if u := text(t, ctx, ".turn:nth-of-type(1) .user"); u != "What is 15% of 240?" {
			t.Errorf("%s: first turn's question %q", when, u)
		}
		if a := text(t, ctx, ".turn:nth-of-type(1) .answer"); !strings.Contains(a, "36") {
			t.Errorf("%s: first turn's answer %q", when, a)
		}
		if cur := text(t, ctx, "#conversations li.current"); !strings.Contains(cur, "15%") {
			t.Errorf("%s: current conversation %q", when, cur)
		}
	}
	check("after switching back")
	if err := chromedp.Do(ctx, chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS(`.turn[data-history] .answer`))); err != nil {
		t.Fatal(err)
	}
	check("after a reload")
}

// TestPageStop stops a turn that waits for an answer with the stop
// button: the server cancels the turn (its stream ends with an error of
// code "cancelled"), and the page shows it stopped.
func TestPageStop(t *testing.T) {
	ctx := browser(t)
	_, srv := newServer(t, chatbot.Config{})
	err := chromedp.Do(ctx,
		chromedp.Navigate(srv.URL+"/"),
		chromedp.WaitVisible(chromedp.CSS("#demo")),
		chromedp.SendKeys(chromedp.CSS("#message"), "I would like to book a demo"),
		chromedp.Click(chromedp.CSS("#send")),
		chromedp.WaitVisible(chromedp.CSS(`form.elicit`)),
		chromedp.WaitVisible(chromedp.CSS(`#stop`)),
		chromedp.Click(chromedp.CSS("#stop")),
		chromedp.WaitVisible(chromedp.CSS(`.turn[data-state="cancelled"]`)),
		chromedp.WaitNotVisible(chromedp.CSS(`#stop`)),
	)
	if err != nil {
		t.Fatal(err)
	}
	id := eval[string](t, ctx, `document.querySelector(".turn").dataset.requestId`)
	resp, evs := resume(t, srv.URL, id, "")
	resp.Body.Close()
	if len(evs) == 0 {
		t.Fatalf("the stopped turn's stream: %s, no events", resp.Status)
	}
	if e, ok := evs[len(evs)-1].Payload.(event.Error); !ok || e.Code != "cancelled" {
		t.Errorf("the turn's last event %+v, want an error with code cancelled", evs[len(evs)-1])
	}
	if a := text(t, ctx, ".turn .answer"); !strings.Contains(a, "Stopped") {
		t.Errorf("answer %q, want it shown stopped", a)
	}
	if code, body := status(t, srv, http.MethodGet, "/api/v1/elicitation/pending", "", ""); code != http.StatusOK || !strings.Contains(body, `"pending":[]`) {
		t.Errorf("pending after the stop: %d %s", code, body)
	}
}

// TestPageMarkdown renders an answer as markdown: formatting, lists and
// code show as such; http(s) links are clickable, open in a new tab with
// rel=noopener; markup and script in the answer, and javascript: links,
// stay inert text. The copy button copies the answer's text.
func TestPageMarkdown(t *testing.T) {
	ctx := browser(t)
	_, srv := newServer(t, chatbot.Config{})
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/"), chromedp.WaitVisible(chromedp.CSS("#demo"))); err != nil {
		t.Fatal(err)
	}
	const answer = "**Bold** and *it* with `code` <img src=x onerror=\"window.pwned=1\">\n" +
		"<script>window.pwned=2</script>\n\n" +
		"- [docs](https://example.org/docs)\n- [bad](javascript:window.pwned=3)\n- see http://example.com/x.\n\n" +
		"```\n<b>raw</b>\n```"
	type result struct {
		Strong, Em, Code, Items, Pre, Imgs, Scripts int
		Hrefs, Rels, Targets                        []string
		Pwned                                       bool
		Text                                        string
	}
	got := eval[result](t, ctx, `(() => {
  Object.defineProperty(navigator, "clipboard", {value: {writeText: async s => { window.copied = s; }}});
  const t = newTurn("markdown");
  t.handle({type: "response.chunk", content: `+"`"+strings.ReplaceAll(answer, "`", "\\`")+"`"+`});
  t.handle({type: "response.done"});
  const a = t.querySelector(".answer");
  const links = [...a.querySelectorAll("a")];
  return {Strong: a.querySelectorAll("strong").length, Em: a.querySelectorAll("em").length,
    Code: a.querySelectorAll("code").length, Items: a.querySelectorAll("li").length, Pre: a.querySelectorAll("pre").length,
    Imgs: a.querySelectorAll("img").length, Scripts: a.querySelectorAll("script").length,
    Hrefs: links.map(l => l.href), Rels: links.map(l => l.rel), Targets: links.map(l => l.target),
    Pwned: window.pwned !== undefined, Text: a.textContent};
})()`)
	if got.Strong != 1 || got.Em != 1 || got.Items != 3 || got.Pre != 1 || got.Code != 2 {
		t.Errorf("formatting: %+v", got)
	}
	if got.Imgs != 0 || got.Scripts != 0 || got.Pwned {
		t.Errorf("markup in the answer became elements or ran: %+v", got)
	}
	if !strings.Contains(got.Text, "<script>window.pwned=2</script>") || !strings.Contains(got.Text, "<b>raw</b>") {
		t.Errorf("markup not shown as text: %q", got.Text)
	}
	want := []string{"https://example.org/docs", "http://example.com/x"}
	if strings.Join(got.Hrefs, " ") != strings.Join(want, " ") {
		t.Errorf("links %q, want %q (no javascript: link)", got.Hrefs, want)
	}
	for i := range got.Rels {
		if !strings.Contains(got.Rels[i], "noopener") || got.Targets[i] != "_blank" {
			t.Errorf("link %s: rel %q target %q", got.Hrefs[i], got.Rels[i], got.Targets[i])
		}
	}
	_ = eval[bool](t, ctx, `document.querySelector(".turn .copy").click(), true`)
	if copied := eval[string](t, ctx, `window.copied`); copied != answer {
		t.Errorf("copied %q, want the answer's text", copied)
	}
}

// TestPageTurnDisplay checks what a turn looks like: mid-turn an activity
// indicator and no empty answer card; the steps folded once the answer is
// there; a clarifying question's options as buttons that ask them; tool
// widgets (a sortable table, a chart, a form) and an image's alt text.
func TestPageTurnDisplay(t *testing.T) {
	ctx := browser(t)
	_, srv := newServer(t, chatbot.Config{})
	err := chromedp.Do(ctx,
		chromedp.Navigate(srv.URL+"/"),
		chromedp.WaitVisible(chromedp.CSS("#demo")),
		chromedp.SendKeys(chromedp.CSS("#message"), "I would like to book a demo"),
		chromedp.Click(chromedp.CSS("#send")),
		chromedp.WaitVisible(chromedp.CSS(`form.elicit`)),
	)
	if err != nil {
		t.Fatal(err)
	}
	type midTurn struct{ Activity, AnswerCard, StepsOpen bool }
	mid := eval[midTurn](t, ctx, `(() => { const t = document.querySelector(".turn");
  const shown = e => e.getClientRects().length > 0;
  return {Activity: shown(t.querySelector(".activity")), AnswerCard: shown(t.querySelector(".answer")), StepsOpen: t.querySelector("details.steps").open}; })()`)
	if !mid.Activity || mid.AnswerCard || !mid.StepsOpen {
		t.Errorf("mid-turn: %+v, want the activity indicator, no answer card, the steps open", mid)
	}
	err = chromedp.Do(ctx,
		chromedp.SendKeys(chromedp.CSS(`form.elicit input[name="email"]`), "ada@example.com"),
		chromedp.SetValue(chromedp.CSS(`form.elicit input[name="date"]`), nextWeekday()),
		chromedp.Click(chromedp.CSS(`form.elicit button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(".turn:nth-of-type(1) .usage:not(:empty)")),
		chromedp.WaitVisible(chromedp.CSS(`.turn:nth-of-type(1)[data-state="done"]`)),
	)
	if err != nil {
		t.Fatal(err)
	}
	done := eval[midTurn](t, ctx, `(() => { const t = document.querySelector(".turn");
  const shown = e => e.getClientRects().length > 0;
  return {Activity: shown(t.querySelector(".activity")), AnswerCard: shown(t.querySelector(".answer")), StepsOpen: t.querySelector("details.steps").open}; })()`)
	if done.Activity || !done.AnswerCard || done.StepsOpen {
		t.Errorf("after the answer: %+v, want no activity indicator, the answer, the steps folded", done)
	}
	if p := strings.ToLower(text(t, ctx, ".turn .progress")); !strings.Contains(p, "call_tool") || !strings.Contains(p, "you replied") {
		t.Errorf("folded steps lack the decision or the answer to the question: %s", p)
	}

	type widgets struct {
		Sorted, Chart, FormFields int
		Order                     []string
		Alt                       string
	}
	got := eval[widgets](t, ctx, `(() => {
  const t = newTurn("widgets");
  t.handle({type: "tool.content", tool: "chart", content_type: "application/vnd.mcp.widget+json",
    data: JSON.stringify({widget_type: "data_table", columns: ["name", "value"], rows: [["b", 10], ["a", 2], ["c", 30]], sortable: true})});
  t.handle({type: "tool.content", tool: "chart", content_type: "application/vnd.mcp.widget+json",
    data: {widget_type: "chart", labels: ["x", "y"], values: [1, 2]}});
  t.handle({type: "tool.content", tool: "crm", content_type: "application/vnd.mcp.widget+json",
    data: {widget_type: "form", title: "Contact", schema: {properties: {email: {type: "string"}, phone: {type: "string"}}}}});
  t.handle({type: "tool.content", tool: "chart", content_type: "image/png", encoding: "base64",
    data: "iVBORw0KGgo=", metadata: {_meta: {alt_text: "Bar chart of sales"}}});
  const th = t.querySelectorAll("th")[1];
  th.click();
  const order = [...t.querySelectorAll("tbody tr td:first-child")].map(td => td.textContent);
  th.click();
  order.push(...[...t.querySelectorAll("tbody tr td:first-child")].map(td => td.textContent));
  return {Sorted: t.querySelectorAll("th[aria-sort]").length, Order: order, Chart: t.querySelectorAll(".chart .row").length,
    FormFields: t.querySelectorAll("fieldset input").length, Alt: t.querySelector("img").alt};
})()`)
	if strings.Join(got.Order, "") != "abccba" || got.Sorted != 1 {
		t.Errorf("sorting by value: %q (%d sorted headings), want a b c then c b a", got.Order, got.Sorted)
	}
	if got.Chart != 2 || got.FormFields != 2 {
		t.Errorf("chart rows %d, form fields %d: want 2 and 2", got.Chart, got.FormFields)
	}
	if got.Alt != "Bar chart of sales" {
		t.Errorf("image alt %q", got.Alt)
	}

	_ = eval[bool](t, ctx, `(() => { const t = newTurn("vague"); t.setStatus("done");
  t.handle({type: "clarify.request", question: "Which calculation?", options: ["What is 2 + 2?", "What is 3 * 3?"]}); return true; })()`)
	err = chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(".turn:nth-of-type(3) .options button")),
		chromedp.WaitVisible(chromedp.CSS(".turn:nth-of-type(4) .usage:not(:empty)")),
	)
	if err != nil {
		t.Fatal(err)
	}
	if u := text(t, ctx, ".turn:nth-of-type(4) .user"); u != "What is 2 + 2?" {
		t.Errorf("the option asked %q", u)
	}
	if a := text(t, ctx, ".turn:nth-of-type(4) .answer"); !strings.Contains(a, "4") {
		t.Errorf("the option's answer %q", a)
	}
}

// TestPageFormValidated shows the demo booking's form with its required
// fields marked and date and email inputs; sending it empty is refused in
// the page with a message, and nothing is sent.
func TestPageFormValidated(t *testing.T) {
	ctx := browser(t)
	_, srv := newServer(t, chatbot.Config{})
	err := chromedp.Do(ctx,
		chromedp.Navigate(srv.URL+"/"),
		chromedp.WaitVisible(chromedp.CSS("#demo")),
		chromedp.SendKeys(chromedp.CSS("#message"), "I would like to book a demo"),
		chromedp.Click(chromedp.CSS("#send")),
		chromedp.WaitVisible(chromedp.CSS(`form.elicit`)),
	)
	if err != nil {
		t.Fatal(err)
	}
	type form struct {
		EmailType, DateType string
		Required            []string
		Marks               int
	}
	f := eval[form](t, ctx, `(() => { const f = document.querySelector("form.elicit");
  return {EmailType: f.querySelector("[name=email]").type, DateType: f.querySelector("[name=date]").type,
    Required: [...f.querySelectorAll("[required]")].map(i => i.name).sort(), Marks: f.querySelectorAll(".req").length}; })()`)
	if f.EmailType != "email" || f.DateType != "date" || strings.Join(f.Required, ",") != "date,email" || f.Marks != 2 {
		t.Errorf("form %+v, want email and date inputs, both required and marked", f)
	}
	_ = eval[bool](t, ctx, `(() => { window.posted = 0; const f = window.fetch;
  window.fetch = (url, init) => { if (String(url).includes("elicitation/respond")) window.posted++; return f(url, init); }; return true; })()`)
	err = chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`form.elicit button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`form.elicit .form-error:not(:empty)`)),
	)
	if err != nil {
		t.Fatal(err)
	}
	if msg := text(t, ctx, "form.elicit .form-error"); !strings.Contains(msg, "required") {
		t.Errorf("message %q, want it to say what is required", msg)
	}
	if n := eval[int](t, ctx, `window.posted`); n != 0 {
		t.Errorf("the empty form was sent %d times", n)
	}
	if code, body := status(t, srv, http.MethodGet, "/api/v1/elicitation/pending", "", ""); code != http.StatusOK || strings.Contains(body, `"pending":[]`) {
		t.Errorf("the question is no longer pending: %d %s", code, body)
	}
	// Filled in, the form is sent and the demo booked.
	err = chromedp.Do(ctx,
		chromedp.SendKeys(chromedp.CSS(`form.elicit input[name="email"]`), "ada@example.com"),
		chromedp.SetValue(chromedp.CSS(`form.elicit input[name="date"]`), nextWeekday()),
		chromedp.Click(chromedp.CSS(`form.elicit button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(".turn:nth-of-type(1) .usage:not(:empty)")),
	)
	if err != nil {
		t.Fatal(err)
	}
	if a := text(t, ctx, ".turn .answer"); !strings.Contains(a, "DEMO-") {
		t.Errorf("booking answer %q", a)
	}
}

// TestPageFragmentTokenAsks: a link's #token= is never taken silently,
// in a new tab (sessionStorage empty) as in one holding a token: the page
// asks, warning that the tab would act as the token's owner; "Ignore"
// keeps what the tab had, "Use" takes the link's token. Either way the
// token leaves the address bar.
func TestPageFragmentTokenAsks(t *testing.T) {
	ctx := browser(t)
	_, srv := newServer(t, chatbot.Config{Tokens: twoPrincipals})
	err := chromedp.Do(ctx,
		chromedp.Navigate(srv.URL+"/#token="+aliceToken),
		chromedp.WaitVisible(chromedp.CSS("#linktoken")),
	)
	if err != nil {
		t.Fatal(err)
	}
	if tok := eval[any](t, ctx, `sessionStorage.getItem("token")`); tok != nil {
		t.Fatalf("a new tab took %v from the link before the user said so", tok)
	}
	if warning := text(t, ctx, "#linktoken"); !strings.Contains(warning, "whoever that token belongs to") {
		t.Errorf("the question does not say whose the tab would be: %q", warning)
	}
	if url := eval[string](t, ctx, `location.href`); strings.Contains(url, "token") {
		t.Errorf("the link's token stayed in the address bar: %s", url)
	}
	err = chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS("#linktoken-use")),
		chromedp.WaitNotVisible(chromedp.CSS("#linktoken")),
	)
	if err != nil {
		t.Fatal(err)
	}
	if tok := eval[string](t, ctx, `sessionStorage.getItem("token")`); tok != aliceToken {
		t.Fatalf("the tab's token after Use: %q, want alice's", tok)
	}
	// Another document (the query differs), so the page's script runs again.
	err = chromedp.Do(ctx,
		chromedp.Navigate(srv.URL+"/?again=1#token="+bobToken),
		chromedp.WaitVisible(chromedp.CSS("#linktoken")),
		chromedp.Click(chromedp.CSS("#linktoken-ignore")),
		chromedp.WaitNotVisible(chromedp.CSS("#linktoken")),
	)
	if err != nil {
		t.Fatal(err)
	}
	if tok := eval[string](t, ctx, `sessionStorage.getItem("token")`); tok != aliceToken {
		t.Errorf("the tab's token after ignoring a link with bob's: %q, want alice's kept", tok)
	}
	if url := eval[string](t, ctx, `location.href`); strings.Contains(url, "token") {
		t.Errorf("the link's token stayed in the address bar: %s", url)
	}
}

// TestPageDeletesConversation: at Config.MaxConversations the page shows
// the 429's message, pointing at the list's ×; a conversation's × (clicked
// twice, to confirm) deletes it with the tab's token, which makes room.
func TestPageDeletesConversation(t *testing.T) {
	ctx := browser(t)
	_, srv := newServer(t, chatbot.Config{Tokens: twoPrincipals, MaxConversations: 1})
	err := chromedp.Do(ctx,
		chromedp.Navigate(srv.URL+"/#token="+aliceToken),
		chromedp.Click(chromedp.CSS("#linktoken-use")),
		chromedp.WaitNotVisible(chromedp.CSS("#linktoken")),
		chromedp.SendKeys(chromedp.CSS("#message"), "Hello!"),
		chromedp.Click(chromedp.CSS("#send")),
		chromedp.WaitVisible(chromedp.CSS(".turn:nth-of-type(1) .usage:not(:empty)")),
		chromedp.Click(chromedp.CSS("#new")),
		chromedp.WaitNotPresent(chromedp.CSS(".turn")),
		chromedp.SendKeys(chromedp.CSS("#message"), "Hello!"),
		chromedp.Click(chromedp.CSS("#send")),
		chromedp.WaitVisible(chromedp.CSS(".turn:nth-of-type(1) .error")),
	)
	if err != nil {
		t.Fatal(err)
	}
	if e := text(t, ctx, ".turn:nth-of-type(1) .error"); !strings.Contains(e, "Config.MaxConversations") || !strings.Contains(e, "×") {
		t.Errorf("the refused turn shows %q, want the limit and the list's ×", e)
	}
	first := listed(t, srv, aliceToken)
	if len(first) != 1 {
		t.Fatalf("alice's list: %v, want her first conversation", first)
	}
	other := `#conversations li[data-id="` + first[0] + `"] button.delete`
	err = chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(other)),
		chromedp.WaitVisible(chromedp.CSS(other+".confirm")),
	)
	if err != nil {
		t.Fatal(err)
	}
	if got := listed(t, srv, aliceToken); len(got) != 1 {
		t.Fatalf("one click deleted the conversation: list %v", got)
	}
	err = chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(other)),
		chromedp.WaitNotPresent(chromedp.CSS(`#conversations li[data-id="`+first[0]+`"]`)),
		chromedp.SendKeys(chromedp.CSS("#message"), "Hello!"),
		chromedp.Click(chromedp.CSS("#send")),
		chromedp.WaitVisible(chromedp.CSS(".turn:nth-of-type(2) .usage:not(:empty)")),
	)
	if err != nil {
		t.Fatal(err)
	}
	if code, _ := status(t, srv, "GET", "/api/v1/chat/"+first[0]+"/history", aliceToken, ""); code != http.StatusNotFound {
		t.Errorf("the deleted conversation's history: %d, want 404", code)
	}
	// The open conversation's × deletes it and opens a new one.
	current := eval[string](t, ctx, `sessionStorage.getItem("conversation")`)
	err = chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`#conversations li.current button.delete`)),
		chromedp.Click(chromedp.CSS(`#conversations li.current button.delete.confirm`)),
		chromedp.WaitNotPresent(chromedp.CSS(".turn")),
	)
	if err != nil {
		t.Fatal(err)
	}
	if now := eval[string](t, ctx, `sessionStorage.getItem("conversation")`); now == current {
		t.Errorf("the page still has the deleted conversation %s open", now)
	}
	if got := listed(t, srv, aliceToken); len(got) != 0 {
		t.Errorf("alice's list after deleting both: %v, want none", got)
	}
}
