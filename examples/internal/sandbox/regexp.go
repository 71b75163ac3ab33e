package sandbox

import (
	"fmt"
	"regexp"
	"strings"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"
)

// This file is the re module (Options.Modules Regexp). It runs in the
// worker, like the rest of the interpreter: a pattern that takes seconds
// or a result that takes gigabytes stops at the worker's limits, not in
// the host.

// MaxRegexpMatches bounds the matches one call of re.findall, re.sub or
// re.split goes through; more fail the call with an error naming the
// limit.
const MaxRegexpMatches = 100_000

// regexpItemCost is what each item of a list re.findall or re.split
// returns counts against Config.MaxResult besides its text: the memory of
// a string value and its slot in the list.
const regexpItemCost = 16

// regexpModule returns the re module of r: findall, search, match,
// fullmatch, sub and split, over Go's RE2 syntax.
func (r *run) regexpModule() *starlarkstruct.Module {
	fn := func(name string, f func(*starlark.Thread, *starlark.Builtin, starlark.Tuple, []starlark.Tuple) (starlark.Value, error)) *starlark.Builtin {
		return starlark.NewBuiltin("re."+name, f)
	}
	return &starlarkstruct.Module{Name: "re", Members: starlark.StringDict{
		"findall":   fn("findall", r.reFindall),
		"search":    fn("search", r.reSearch(false, false)),
		"match":     fn("match", r.reSearch(true, false)),
		"fullmatch": fn("fullmatch", r.reSearch(true, true)),
		"sub":       fn("sub", r.reSub),
		"split":     fn("split", r.reSplit),
	}}
}

// reCompile compiles a pattern of the function fn, saying in its error
// which syntax patterns use.
func reCompile(fn, pattern string) (*regexp.Regexp, error) {
	re, err := regexp.Compile(pattern)
	if err != nil {
		return nil, fmt.Errorf("%s: pattern %q: %v (patterns use Go's RE2 syntax: no backreferences or lookaround)", fn, pattern, err)
	}
	return re, nil
}

// reBudget is the bytes one call may produce: Config.MaxResult, the most
// a run can send back anyway.
func (r *run) reBudget() int {
	if r.opts.MaxResult > 0 {
		return r.opts.MaxResult
	}
	return DefaultMaxResult
}

// reMatches finds at most MaxRegexpMatches matches of re in s, and at
// most limit when it is above 0, counting each as an execution step. With
// groups each match holds the indices of every group, else only those of
// the whole match: a caller that needs no group asks for none, since
// matches times groups ints are held at once. The search's own time is
// bounded by Config.CPUTime and Options.Timeout, not Options.MaxSteps.
func (r *run) reMatches(thread *starlark.Thread, fn string, re *regexp.Regexp, s string, limit int, groups bool) ([][]int, error) {
	n := MaxRegexpMatches + 1
	if limit > 0 {
		n = min(n, limit)
	}
	var ms [][]int
	if groups {
		ms = re.FindAllStringSubmatchIndex(s, n)
	} else {
		ms = re.FindAllStringIndex(s, n)
	}
	if len(ms) > MaxRegexpMatches {
		return nil, fmt.Errorf("%s: more than %d matches (MaxRegexpMatches); match fewer, or work on a part of the string", fn, MaxRegexpMatches)
	}
	thread.Steps += uint64(len(ms))
	if (r.opts.MaxSteps > 0 && thread.Steps >= r.opts.MaxSteps) || r.ctx.Err() != nil {
		return nil, errStopped
	}
	return ms, nil
}

// reFindall is re.findall(pattern, string): the matches, each the whole
// match for a pattern without groups, the group for a pattern with one,
// and a tuple of the groups for more ("" for a group that did not take
// part).
func (r *run) reFindall(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var pattern, s string
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "pattern", &pattern, "string", &s); err != nil {
		return nil, err
	}
	re, err := reCompile(b.Name(), pattern)
	if err != nil {
		return nil, err
	}
	groups := re.NumSubexp()
	budget := r.reBudget()
	// Each group of each match costs at least regexpItemCost of the
	// budget: one match more than it allows is enough to fail.
	ms, err := r.reMatches(thread, b.Name(), re, s, budget/(regexpItemCost*max(1, groups))+1, groups > 0)
	if err != nil {
		return nil, err
	}
	used := 0
	text := func(m []int, g int) starlark.String {
		if m[2*g] < 0 {
			used += regexpItemCost
			return ""
		}
		used += regexpItemCost + m[2*g+1] - m[2*g]
		return starlark.String(s[m[2*g]:m[2*g+1]])
	}
	out := make([]starlark.Value, 0, len(ms))
	for _, m := range ms {
		switch groups {
		case 0:
			out = append(out, text(m, 0))
		case 1:
			out = append(out, text(m, 1))
		default:
			t := make(starlark.Tuple, groups)
			for g := range t {
				t[g] = text(m, g+1)
			}
			out = append(out, t)
		}
		if used > budget {
			return nil, fmt.Errorf("%s: the matches come to more than %d bytes, the sandbox's result limit (Config.MaxResult)", b.Name(), budget)
		}
	}
	return starlark.NewList(out), nil
}

// reSearch returns re.search (anchored false), re.match (anchored at the
// start) or re.fullmatch (anchored at both ends): None, or a match object.
func (r *run) reSearch(start, end bool) func(*starlark.Thread, *starlark.Builtin, starlark.Tuple, []starlark.Tuple) (starlark.Value, error) {
	return func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		var pattern, s string
		if err := starlark.UnpackArgs(b.Name(), args, kwargs, "pattern", &pattern, "string", &s); err != nil {
			return nil, err
		}
		// The pattern must compile alone: wrapped, "a)|(?:b" would.
		if _, err := reCompile(b.Name(), pattern); err != nil {
			return nil, err
		}
		full := pattern
		if start {
			full = `\A(?:` + full + ")"
		}
		if end {
			full += `\z`
		}
		re, err := reCompile(b.Name(), full)
		if err != nil {
			return nil, err
		}
		thread.Steps++
		m := re.FindStringSubmatchIndex(s)
		if m == nil {
			return starlark.None, nil
		}
		return &reMatch{s: s, idx: m, names: re.SubexpNames()}, nil
	}
}

// reSub is re.sub(pattern, repl, string, count=0): string with the
// matches (the first count of them, all when count is 0) replaced by
// repl, in which \1 and \g<name> stand for groups.
func (r *run) reSub(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var pattern, repl, s string
	count := 0
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "pattern", &pattern, "repl", &repl, "string", &s, "count?", &count); err != nil {
		return nil, err
	}
	re, err := reCompile(b.Name(), pattern)
	if err != nil {
		return nil, err
	}
	if count < 0 {
		return nil, fmt.Errorf("%s: count is %d; it must be 0 (replace all) or more", b.Name(), count)
	}
	tmpl := goTemplate(repl)
	// Groups are needed only when the template refers to one.
	ms, err := r.reMatches(thread, b.Name(), re, s, count, strings.Contains(strings.ReplaceAll(tmpl, "$$", ""), "$"))
	if err != nil {
		return nil, err
	}
	budget := r.reBudget()
	var out []byte
	last := 0
	for _, m := range ms {
		out = append(out, s[last:m[0]]...)
		out = re.ExpandString(out, tmpl, s, m)
		last = m[1]
		if len(out) > budget {
			return nil, fmt.Errorf("%s: the result comes to more than %d bytes, the sandbox's result limit (Config.MaxResult)", b.Name(), budget)
		}
	}
	if len(out)+len(s)-last > budget {
		return nil, fmt.Errorf("%s: the result comes to more than %d bytes, the sandbox's result limit (Config.MaxResult)", b.Name(), budget)
	}
	out = append(out, s[last:]...)
	return starlark.String(out), nil
}

// goTemplate turns a Python replacement (\1, \g<1>, \g<name>, \n, \t,
// \\, \0 and \0nn octal escapes) into one for Regexp.Expand. Unlike
// Python, an unknown escape is kept as is rather than refused, and a
// reference to a group the pattern lacks expands to "".
func goTemplate(repl string) string {
	var b strings.Builder
	for i := 0; i < len(repl); i++ {
		c := repl[i]
		switch {
		case c == '$':
			b.WriteString("$$")
		case c != '\\' || i+1 == len(repl):
			b.WriteByte(c)
		case repl[i+1] == '0':
			// Python's octal escape: \0 is NUL, \0nn the byte nn.
			j, v := i+2, 0
			for j < len(repl) && j < i+4 && repl[j] >= '0' && repl[j] <= '7' {
				v = v*8 + int(repl[j]-'0')
				j++
			}
			b.WriteByte(byte(v))
			i = j - 1
		case repl[i+1] >= '1' && repl[i+1] <= '9':
			j := i + 1
			for j < len(repl) && j < i+3 && repl[j] >= '0' && repl[j] <= '9' {
				j++
			}
			b.WriteString("${" + repl[i+1:j] + "}")
			i = j - 1
		case repl[i+1] == 'g' && i+2 < len(repl) && repl[i+2] == '<':
			if k := strings.IndexByte(repl[i+3:], '>'); k >= 0 {
				b.WriteString("${" + repl[i+3:i+3+k] + "}")
				i += 3 + k
				continue
			}
			b.WriteByte(c)
		default:
			i++
			switch repl[i] {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case '\\':
				b.WriteByte('\\')
			default:
				b.WriteByte('\\')
				b.WriteByte(repl[i])
			}
		}
	}
	return b.String()
}

// reSplit is re.split(pattern, string, maxsplit=0): the parts of string
// between the matches (at most maxsplit splits when it is above 0), as
// Go's Regexp.Split makes them.
func (r *run) reSplit(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var pattern, s string
	maxsplit := 0
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "pattern", &pattern, "string", &s, "maxsplit?", &maxsplit); err != nil {
		return nil, err
	}
	re, err := reCompile(b.Name(), pattern)
	if err != nil {
		return nil, err
	}
	if s == "" {
		return starlark.NewList([]starlark.Value{starlark.String("")}), nil
	}
	limit := 0
	if maxsplit > 0 {
		// maxsplit splits need maxsplit matches, and one more when
		// the first is the empty match at the start, which splits nothing.
		limit = min(maxsplit+1, MaxRegexpMatches+1)
	}
	if limit == 0 {
		// Each part costs regexpItemCost of the budget.
		limit = min(r.reBudget()/regexpItemCost+2, MaxRegexpMatches+1)
	}
	ms, err := r.reMatches(thread, b.Name(), re, s, limit, false)
	if err != nil {
		return nil, err
	}
	budget := r.reBudget()
	used := 0
	var out []starlark.Value
	add := func(part string) error {
		used += regexpItemCost + len(part)
		if used > budget {
			return fmt.Errorf("%s: the parts come to more than %d bytes, the sandbox's result limit (Config.MaxResult)", b.Name(), budget)
		}
		out = append(out, starlark.String(part))
		return nil
	}
	beg, end := 0, 0
	for _, m := range ms {
		if maxsplit > 0 && len(out) == maxsplit {
			break
		}
		end = m[0]
		if m[1] != 0 {
			if err := add(s[beg:end]); err != nil {
				return nil, err
			}
		}
		beg = m[1]
	}
	if end != len(s) {
		if err := add(s[beg:]); err != nil {
			return nil, err
		}
	}
	return starlark.NewList(out), nil
}

// reMatch is a match of re.search, re.match or re.fullmatch: group(),
// groups(), start(), end() and span() as in Python, a group that did not
// take part being None.
type reMatch struct {
	s     string
	idx   []int
	names []string
}

var _ starlark.HasAttrs = (*reMatch)(nil)

// String describes the match as Python does.
func (m *reMatch) String() string {
	return fmt.Sprintf("<re.Match object; span=(%d, %d), match=%s>", m.idx[0], m.idx[1], starlark.String(m.s[m.idx[0]:m.idx[1]]).String())
}

// Type is "re.Match".
func (m *reMatch) Type() string { return "re.Match" }

// Freeze does nothing: a match is immutable.
func (m *reMatch) Freeze() {}

// Truth is true, as in Python.
func (m *reMatch) Truth() starlark.Bool { return true }

// Hash fails: matches are not hashable.
func (m *reMatch) Hash() (uint32, error) { return 0, fmt.Errorf("unhashable type: re.Match") }

// AttrNames lists the match's methods.
func (m *reMatch) AttrNames() []string { return []string{"end", "group", "groups", "span", "start"} }

// Attr returns the method name.
func (m *reMatch) Attr(name string) (starlark.Value, error) {
	var f func(*starlark.Thread, *starlark.Builtin, starlark.Tuple, []starlark.Tuple) (starlark.Value, error)
	switch name {
	case "group":
		f = m.group
	case "groups":
		f = m.groups
	case "start", "end", "span":
		f = m.span
	default:
		return nil, nil
	}
	return starlark.NewBuiltin(name, f).BindReceiver(m), nil
}

// index returns the number of group g, an int or a name.
func (m *reMatch) index(fn string, g starlark.Value) (int, error) {
	switch g := g.(type) {
	case starlark.Int:
		if i, ok := g.Int64(); ok && i >= 0 && int(i) < len(m.idx)/2 {
			return int(i), nil
		}
	case starlark.String:
		for i, n := range m.names {
			if n != "" && n == string(g) {
				return i, nil
			}
		}
	}
	return 0, fmt.Errorf("%s: no such group: %s (the pattern has %d groups)", fn, g, len(m.idx)/2-1)
}

// text returns group i's text, or None when it did not take part.
func (m *reMatch) text(i int) starlark.Value {
	if m.idx[2*i] < 0 {
		return starlark.None
	}
	return starlark.String(m.s[m.idx[2*i]:m.idx[2*i+1]])
}

func (m *reMatch) group(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if len(kwargs) > 0 {
		return nil, fmt.Errorf("group: takes groups by position, as in m.group(1)")
	}
	if len(args) == 0 {
		return m.text(0), nil
	}
	out := make(starlark.Tuple, len(args))
	for k, g := range args {
		i, err := m.index("group", g)
		if err != nil {
			return nil, err
		}
		out[k] = m.text(i)
	}
	if len(out) == 1 {
		return out[0], nil
	}
	return out, nil
}

func (m *reMatch) groups(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var def starlark.Value = starlark.None
	if err := starlark.UnpackArgs("groups", args, kwargs, "default?", &def); err != nil {
		return nil, err
	}
	out := make(starlark.Tuple, len(m.idx)/2-1)
	for i := range out {
		if out[i] = m.text(i + 1); out[i] == starlark.None {
			out[i] = def
		}
	}
	return out, nil
}

// span is start, end and span, by b's name.
func (m *reMatch) span(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var g starlark.Value = starlark.MakeInt(0)
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "group?", &g); err != nil {
		return nil, err
	}
	i, err := m.index(b.Name(), g)
	if err != nil {
		return nil, err
	}
	start, end := starlark.MakeInt(m.idx[2*i]), starlark.MakeInt(m.idx[2*i+1])
	switch b.Name() {
	case "start":
		return start, nil
	case "end":
		return end, nil
	}
	return starlark.Tuple{start, end}, nil
}
