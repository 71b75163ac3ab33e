package guard

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
)

// LoadTokens reads bearer tokens for [Config.Tokens] the way a command
// takes them: "principal token" lines of the file at path (when path is
// not empty; blank lines and lines starting with # are skipped), then the
// comma-separated "principal=token" pairs of pairs, which came from the
// environment variable named source (named in errors). It returns the
// tokens mapped to their principals, or nil when there are none; a line or
// pair without both parts, or a token given twice, is an error naming
// where it stands. On systems other than Windows a file that its group
// or others may read or write (mode&0o077 not zero) is refused: its
// tokens let anyone act as their principals.
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
		data, err := readPrivate(path)
		if err != nil {
			return nil, err
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

// readPrivate reads the tokens file at path, refusing one whose mode
// lets the group or others at it (but on Windows, which has no such
// bits): its mode is checked on the file read, not on the path.
func readPrivate(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("-tokens: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("-tokens: %w", err)
	}
	if perm := st.Mode().Perm(); runtime.GOOS != "windows" && perm&0o077 != 0 {
		return nil, fmt.Errorf("-tokens %s: its mode %v lets other users of this machine at its tokens, with which they would act as their principals; "+
			"make it its owner's only (chmod 600 %s)", path, perm, path)
	}
	data, err := io.ReadAll(f)
	if err != nil {
		return nil, fmt.Errorf("-tokens: %w", err)
	}
	return data, nil
}
