package swarm

import (
	"regexp"
	"strings"
)

// Bound on the citations taken from one tool output.
const maxCitations = 10

var (
	passageRe  = regexp.MustCompile(`^\[\d+\] (.+?)(?: \(score [^)]*\))?$`)
	webTitleRe = regexp.MustCompile(`^\d+\. (.+)$`)
	urlRe      = regexp.MustCompile(`^https?://\S+$`)
)

// citations reads the sources of a tool's output: ranked passages
// ("[1] pricing § Team (score 1.20)") name their document and section,
// numbered web results their title and URL. Any other output is cited as
// the tool call itself, its locator the path, URL or query it was given,
// so every successful tool result can be traced to where it came from.
func citations(server, tool string, args map[string]any, output string) []Citation {
	var out []Citation
	lines := strings.Split(output, "\n")
	for i := 0; i < len(lines) && len(out) < maxCitations; i++ {
		line := strings.TrimSpace(lines[i])
		if m := passageRe.FindStringSubmatch(line); m != nil {
			src, loc, _ := strings.Cut(m[1], " § ")
			out = append(out, Citation{Source: strings.TrimSpace(src), Locator: strings.TrimSpace(loc)})
			continue
		}
		if m := webTitleRe.FindStringSubmatch(line); m != nil && i+1 < len(lines) {
			if u := strings.TrimSpace(lines[i+1]); urlRe.MatchString(u) {
				out = append(out, Citation{Source: u, Locator: m[1]})
				i++
			}
		}
	}
	if len(out) > 0 {
		return out
	}
	c := Citation{Source: server + "." + tool}
	for _, k := range []string{"path", "paths", "uri", "url", "file", "query", "expression"} {
		if v, ok := args[k]; ok {
			if s, ok := v.(string); ok {
				c.Locator = s
			} else {
				c.Locator = mustJSON(v)
			}
			break
		}
	}
	if c.Locator == "" && len(args) > 0 {
		c.Locator = mustJSON(args)
	}
	return []Citation{c}
}
