package cortexr_test

import (
	"strings"
	"testing"

	"github.com/agentgraph/agentgraph/agent/llmtest"
	"github.com/agentgraph/agentgraph/examples/cortexr"
)

// Plans as real models write them: prose before a fenced block, async def,
// await, imports of available modules, and re.
func TestPlansRealModelsWrite(t *testing.T) {
	for _, c := range []struct{ name, reply, want string }{
		{"async and await after prose", "Here is the plan:\n\n```python\nimport json\nasync def solve():\n    numbers = await strings_to_chars_to_int(string=\"INDIA\")\n    return \"FINAL_ANSWER: \" + json.encode(numbers)\n```\nThis converts the string.", "[73,78,68,73,65]"},
		{"re findall and search", "```python\nimport re\ndef solve():\n    text = \"order 12 costs 40 and 2\"\n    nums = [int(x) for x in re.findall(r\"\\d+\", text)]\n    m = re.search(r\"costs (\\d+)\", text)\n    total = add(a=nums[0], b=int(m.group(1)))\n    return \"FINAL_ANSWER: \" + str(total)\n```", "52"},
		{"re sub and split", "def solve():\n    s = re.sub(r\"(\\w+)@(\\w+)\", r\"\\2 at \\1\", \"bob@example\")\n    return \"FINAL_ANSWER: \" + s + \"|\" + \",\".join(re.split(r\"\\s*;\\s*\", \"a ; b;c\"))\n", "example at bob|a,b,c"},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := llmtest.New().
				On("perception engine", llmtest.Text(mathPerception)).
				On("Write a Starlark function", llmtest.Text(c.reply))
			a := newAgent(t, cortexr.Config{Model: scripted(t, m), Servers: mathOnly(), Lifelines: -1})
			_, ans := run(t, a, "q")
			if ans.Outcome != cortexr.OutcomeAnswered || ans.Text != c.want {
				t.Fatalf("answer %+v, want %q", ans, c.want)
			}
		})
	}
}

// Plans that cannot run fail with an error that says what was wrong.
func TestPlanErrorsSayWhatWasWrong(t *testing.T) {
	for _, c := range []struct{ name, reply, want string }{
		{"other import", "import requests\ndef solve():\n    return \"FINAL_ANSWER: x\"\n", "imports requests; plans cannot import modules"},
		{"no solve", "I would add the numbers.", "does not define solve()"},
		{"bad result", "def solve():\n    return 42\n", "must start with FINAL_ANSWER:"},
		{"bad regexp", "def solve():\n    return \"FINAL_ANSWER: \" + str(re.findall(r\"(?<=a)b\", \"ab\"))\n", "RE2 syntax"},
		{"unknown tool in try_call", "def solve():\n    r = try_call(tool=\"nosuch\", args={})\n    return \"FINAL_ANSWER: x\"\n", `"nosuch" is not one of this plan's tools`},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := llmtest.New().
				On("perception engine", llmtest.Text(mathPerception)).
				On("Write a Starlark function", llmtest.Text(c.reply))
			a := newAgent(t, cortexr.Config{Model: scripted(t, m), Servers: mathOnly(), Lifelines: -1})
			_, ans := run(t, a, "q")
			if ans.Outcome != cortexr.OutcomeFailed || !strings.Contains(ans.Text, c.want) {
				t.Fatalf("answer %+v, want failed with %q", ans, c.want)
			}
		})
	}
}

// The tool call limit holds for plans that also use re.
func TestToolCallLimitWithRe(t *testing.T) {
	plan := "def solve():\n    for i in range(10):\n        re.findall(r\"a\", \"aaa\")\n        add(a=i, b=1)\n    return \"FINAL_ANSWER: x\"\n"
	m := llmtest.New().
		On("perception engine", llmtest.Text(mathPerception)).
		On("Write a Starlark function", llmtest.Text(plan))
	a := newAgent(t, cortexr.Config{Model: scripted(t, m), Servers: mathOnly(), Lifelines: -1, Limits: cortexr.Limits{MaxToolCalls: 3}})
	_, ans := run(t, a, "q")
	if ans.Outcome != cortexr.OutcomeFailed || !strings.Contains(ans.Text, "more than 3 tool calls") {
		t.Fatalf("answer %+v", ans)
	}
}
