package guard

import (
	"fmt"
	"os"
	"strings"
)

// LoadTokens reads bearer tokens for [Config.Tokens] the way a command
// takes them: "principal token" lines of the file at path (when path is
// not empty; blank lines and lines starting with # are skipped), then the
// comma-separated "principal=token" pairs of pairs, which came from the
// environment variable named source (named in errors). It returns the
// tokens mapped to their principals, or nil when there are none; a line or
// pair without both parts, or a token given twice, is an error naming
// where it stands.
func LoadTokens(path, pairs, source string) (map[string]string, error) {
	tokens := map[string]string{}
	add := func(where, principal, token string) error {
		if principal == "" || token == "" {
			return fmt.Errorf("%s: want a principal and a token", where)
		}
		if _, dup := tokens[token]; dup {
			return fmt.Errorf("%s: the token of %q is given twice", where, principal)
		}
		tokens[token] = principal
		return nil
	}
	if path != "" {
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("-tokens: %w", err)
		}
		for i, line := range strings.Split(string(data), "\n") {
			if line = strings.TrimSpace(line); line == "" || strings.HasPrefix(line, "#") {
				continue
			}
			f := strings.Fields(line)
			where := fmt.Sprintf("-tokens %s:%d", path, i+1)
			if len(f) != 2 {
				return nil, fmt.Errorf("%s: want \"principal token\"", where)
			}
			if err := add(where, f[0], f[1]); err != nil {
				return nil, err
			}
		}
	}
	for _, pair := range strings.Split(pairs, ",") {
		if pair = strings.TrimSpace(pair); pair == "" {
			continue
		}
		p, tok, _ := strings.Cut(pair, "=")
		if err := add(source, strings.TrimSpace(p), strings.TrimSpace(tok)); err != nil {
			return nil, fmt.Errorf("%w (%s holds principal=token pairs, comma-separated)", err, source)
		}
	}
	if len(tokens) == 0 {
		return nil, nil
	}
	return tokens, nil
}
