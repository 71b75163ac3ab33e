package chatbot_test

import (
	"strings"
	"testing"

	"github.com/agentgraph/agentgraph/examples/chatbot"
)

// heldOutCases are phrasings of every kind that the offline demo model's
// rules were not tuned on: they were written before the rules, and are
// kept apart from demoCases so that their pass rate measures how the rules
// generalise rather than what they memorised.
var heldOutCases = []demoCase{
	{kind: "compute", say: "Could you work out 7 times 8 minus 5 for me?", tools: []string{"calculate"}, want: []string{"51"}, notTools: []string{"search_knowledge", "web_search"}},
	{kind: "compute", say: "How much is 1,250 divided by 5?", tools: []string{"calculate"}, want: []string{"250"}, notTools: []string{"search_knowledge", "web_search"}},
	{kind: "compute", say: "what's 3 to the power of 4", tools: []string{"calculate"}, want: []string{"81"}},
	{kind: "compute", say: "If I split a $600 bill between 4 people, how much does each pay? That is 600/4.", tools: []string{"calculate"}, want: []string{"150"}},
	{kind: "compute", say: "Please evaluate 5 / (3 - 3)", tools: []string{"calculate"}, want: []string{"zero"}, notWant: []string{"Here is what I found"}},

	{kind: "lookup", say: "Tell me what the Business plan costs per editor.", tools: []string{"search_knowledge"}, want: []string{"$89"}},
	{kind: "lookup", say: "How long do you keep backups?", tools: []string{"search_knowledge"}, want: []string{"30 days"}},
	{kind: "lookup", say: "Which uptime does the Enterprise SLA promise?", tools: []string{"search_knowledge"}, want: []string{"99.95%"}},
	{kind: "lookup", say: "Is there a discount for schools?", tools: []string{"search_knowledge"}, want: []string{"40%"}},

	{kind: "nothing-found", say: "What is your policy on bringing pets to the office?", want: []string{"find"}, notWant: []string{"Here is what I found", `\"`, "score"}},
	{kind: "nothing-found", say: "Do you offer a student hackathon sponsorship programme?", want: []string{"find"}, notWant: []string{"Here is what I found", `\"`, "score"}},
	{kind: "nothing-found", say: "How many parking spaces does your headquarters have?", want: []string{"find"}, notWant: []string{"Here is what I found", `\"`, "score"}},
	{kind: "nothing-found", say: "What's the warranty on your hardware appliances?", want: []string{"find"}, notWant: []string{"Here is what I found", `\"`, "score"}},

	{kind: "recall", before: []string{"How much does the Starter plan cost?"}, say: "Remind me, what was my first question?", want: []string{"Starter plan"}, noTools: true},
	{kind: "recall", before: []string{"What is 6 times 7?", "Hello!"}, say: "What did I ask you at the start of this chat?", want: []string{"6 times 7"}, noTools: true},
	{kind: "recall", before: []string{"Is there a free trial?"}, say: "Can you repeat my previous question?", want: []string{"free trial"}, noTools: true},
	{kind: "recall", before: []string{"Hi there", "What is 2+2?"}, say: "What have we talked about so far?", want: []string{"2+2"}, noTools: true},

	{kind: "chart", say: "Draw a bar chart of sales: north 40, south 25, east 30", tools: []string{"chart"}},
	{kind: "chart", say: "Can you plot these numbers? Jan 3, Feb 5, Mar 9", tools: []string{"chart"}},
	{kind: "chart", say: "Visualise apples 12, pears 7 and plums 4 as a graph", tools: []string{"chart"}},
	{kind: "chart", say: "make a chart with q1=100 q2=140 q3=90", tools: []string{"chart"}},

	{kind: "code", say: "Run this code: print(sum([4, 5, 6]))", tools: []string{"run_code"}, want: []string{"15"}},
	{kind: "code", say: "Execute the following Python snippet:\n```python\nx = 12\nprint(x * 3)\n```", tools: []string{"run_code"}, want: []string{"36"}},
	{kind: "code", say: "can you run `print(len(\"hello world\"))` for me", tools: []string{"run_code"}, want: []string{"11"}},
	{kind: "code", say: "Write and run a program that computes 17 * 23", tools: []string{"run_code"}, want: []string{"391"}},

	{kind: "self", say: "What are you capable of?", tools: []string{"list_capabilities"}},
	{kind: "self", say: "Tell me about yourself.", tools: []string{"self_info"}},
	{kind: "self", say: "Which version are you running?", tools: []string{"self_info"}},
	{kind: "self", say: "Which tools can you use?", tools: []string{"list_tools"}},

	{kind: "workflow", say: "How does our pricing compare with Northwind's?", actions: []string{"workflow"}},
	{kind: "workflow", say: "Are we cheaper than the competition?", actions: []string{"workflow"}},
	{kind: "workflow", say: "Contrast our SLA with what competitors offer", actions: []string{"workflow"}},
	{kind: "workflow", say: "Give me a side-by-side of our plans and rival products", actions: []string{"workflow"}},

	{kind: "vague", say: "Can you fix that?", actions: []string{"clarify"}},
	{kind: "vague", say: "Do the thing", actions: []string{"clarify"}},
	{kind: "vague", say: "Change it", actions: []string{"clarify"}},
	{kind: "vague", say: "help", actions: []string{"clarify"}},

	{kind: "general", say: "What is JavaScript?", actions: []string{"answer"}, noTools: true, want: []string{"JavaScript"}},
	{kind: "general", say: "Explain what an API is", actions: []string{"answer"}, noTools: true, want: []string{"API"}},
	{kind: "general", say: "What is machine learning?", actions: []string{"answer"}, noTools: true, want: []string{"machine learning"}},
	{kind: "general", say: "Define recursion", actions: []string{"answer"}, noTools: true, want: []string{"ecursion"}},
}

// heldOutCasesB are a second held-out list, written after the first
// round of rules and before the second: the first list's failures were
// studied then, so these measure the rules afresh.
var heldOutCasesB = []demoCase{
	{kind: "compute", say: "What do you get when you multiply 19 by 21?", tools: []string{"calculate"}, want: []string{"399"}},
	{kind: "compute", say: "Compute (250 + 750) / 8 please", tools: []string{"calculate"}, want: []string{"125"}},
	{kind: "compute", say: "what is 9 mod 0", tools: []string{"calculate"}, want: []string{"zero"}, notWant: []string{"Here is what I found"}},

	{kind: "lookup", say: "What payment methods do you accept?", tools: []string{"search_knowledge"}, want: []string{"Credit cards"}},
	{kind: "lookup", say: "How quickly does support respond on the Business plan?", tools: []string{"search_knowledge"}, want: []string{"4 hours"}},

	{kind: "nothing-found", say: "Where can I buy your branded t-shirts?", want: []string{"find"}, notWant: []string{"Here is what I found", `\"`, "score"}},
	{kind: "nothing-found", say: "What is the CEO's favourite football team?", want: []string{"find"}, notWant: []string{"Here is what I found", `\"`, "score"}},

	{kind: "recall", before: []string{"How much is the Business plan?", "What about Enterprise?"}, say: "What was the very first thing I asked?", want: []string{"Business plan"}, noTools: true},
	{kind: "recall", before: []string{"Do you have an API?"}, say: "what did i say before this?", want: []string{"API"}, noTools: true},

	{kind: "chart", say: "Could you chart cats 4, dogs 6, birds 2?", tools: []string{"chart"}},
	{kind: "chart", say: "Plot the following: Monday 10, Tuesday 14, Wednesday 8", tools: []string{"chart"}},

	{kind: "code", say: "Please execute: print(max([3, 9, 4]))", tools: []string{"run_code"}, want: []string{"9"}},
	{kind: "code", say: "Run a script that prints 100 - 58", tools: []string{"run_code"}, want: []string{"42"}},

	{kind: "self", say: "What's your name?", tools: []string{"self_info"}},
	{kind: "self", say: "What kinds of things can you help me with?", tools: []string{"list_capabilities"}},

	{kind: "workflow", say: "Compare our support with Globex", actions: []string{"workflow"}},
	{kind: "workflow", say: "Is Initech more expensive than us?", actions: []string{"workflow"}},

	{kind: "vague", say: "Send it", actions: []string{"clarify"}},
	{kind: "vague", say: "Could you improve this one?", actions: []string{"clarify"}},

	{kind: "general", say: "What is SQL?", actions: []string{"answer"}, noTools: true, want: []string{"SQL"}},
	{kind: "general", say: "What is a neural network?", actions: []string{"answer"}, noTools: true, want: []string{"neural network"}},
}

// heldOutCasesC are a third held-out list, for comparisons of plans,
// seat caps, a calculation with a lookup, quantities written with units
// and hyphenated words: written before the rules for those kinds and run
// only once they were done.
var heldOutCasesC = []demoCase{
	{kind: "compare-plans", say: "Which costs more, Business or Team?", want: []string{"$89", "$49"}, notWant: []string{"Here is what I found", "I could not find"}},
	{kind: "compare-plans", say: "Team or Starter for a group of 8 editors?", want: []string{"Team", "at most 5"}, notWant: []string{"Here is what I found"}},
	{kind: "compare-plans", say: "Is Team more expensive than Starter?", want: []string{"$19", "$49"}, notWant: []string{"Here is what I found"}},

	{kind: "limit", say: "What is the price of the Starter plan for 7 users?", tools: []string{"calculate"}, want: []string{"133", "do not fit", "$343"}},
	{kind: "limit", say: "How much would 6 editors on Starter cost monthly?", tools: []string{"calculate"}, want: []string{"114", "do not fit", "$294"}},

	{kind: "calc-lookup", say: "Calculate 30 divided by 4, and what is the uptime SLA for Business?", tools: []string{"calculate", "search_knowledge"}, want: []string{"7.5", "99.9%"}, notWant: []string{"one question at a time"}},
	{kind: "calc-lookup", say: "what's 25 + 17? also, which identity providers work with single sign-on?", tools: []string{"calculate", "search_knowledge"}, want: []string{"42", "Okta"}, notWant: []string{"one question at a time"}},

	{kind: "units", say: "Which tier offers a 1-hour response for urgent issues?", want: []string{"1 hour for urgent issues on Enterprise"}},
	{kind: "units", say: "Which plan syncs every 5 mins?", want: []string{"every 5 minutes on the Business tier"}, notWant: []string{"14-day free trial"}},

	{kind: "hyphen", say: "do you have an on premises edition?", want: []string{"cloud service only"}},
	{kind: "hyphen", say: "Is a self-hosted deployment possible?", want: []string{"cloud service only"}},
	{kind: "hyphen", say: "Can reports be delivered via email?", want: []string{"delivered by email"}},
	{kind: "hyphen", say: "Is sign in with Google Workspace supported?", want: []string{"Google Workspace"}},
}

// TestDemoHeldOut runs the held-out phrasings and reports the pass rate
// per kind. It fails only when the overall rate falls below the floor:
// the rate, not each phrasing, is what it measures.
func TestDemoHeldOut(t *testing.T) {
	const floor = 0.7
	rate := runDemoCases(t, append(append(append([]demoCase(nil), heldOutCases...), heldOutCasesB...), heldOutCasesC...), false)
	if rate < floor {
		t.Errorf("held-out pass rate %.0f%%, want at least %.0f%%", rate*100, floor*100)
	}
}

// TestCorrectionAfterSummary checks that a correction finds the question
// it corrects once that question has left the window of recent messages
// and is only in the conversation's summary (a window of one message),
// and that a greeting or a calculation in between is not what it
// corrects.
func TestCorrectionAfterSummary(t *testing.T) {
	_, srv := newServer(t, chatbot.Config{Window: 1})
	for _, c := range []struct {
		conv          string
		before        []string
		say           string
		want, notWant []string
	}{
		{"sum-1", []string{"How much does the Team plan cost?"}, "no, I meant the Business plan", []string{"$89"}, []string{"Non-profits", "$49"}},
		{"sum-2", []string{"What is the uptime SLA on Enterprise?", "What is 2+2?", "Hello"}, "sorry, I meant Business", []string{"99.9%"}, []string{"Hello"}},
		{"sum-3", []string{"How much do 4 Team seats cost?", "Thanks!"}, "sorry, I meant 6", []string{"294"}, nil},
	} {
		for _, m := range c.before {
			chat(t, srv, c.conv, m)
		}
		ans := chat(t, srv, c.conv, c.say).answer()
		for _, w := range c.want {
			if !strings.Contains(ans, w) {
				t.Errorf("%v then %q: answer lacks %q:\n%s", c.before, c.say, w, ans)
			}
		}
		for _, w := range c.notWant {
			if strings.Contains(ans, w) {
				t.Errorf("%v then %q: answer has %q:\n%s", c.before, c.say, w, ans)
			}
		}
	}
}
