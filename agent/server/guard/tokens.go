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
// where it stands. On systems other than Windows a file that others may
// read, or its group or others may write (mode&0o026 not zero), is
// refused, as is one owned by a user other than this process's
// (effective) user and root: its tokens let anyone act as their
// principals. Group read is allowed, as a Kubernetes secret volume with
// an fsGroup gives it (mode 0440).
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
		data, err := readPrivate(path, source)
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
// lets others read it or its group or others write it, or that another
// user owns (but on Windows, which has no such bits): its mode and owner
// are checked on the file read, not on the path. source names the
// environment variable that may hold the tokens instead.
func readPrivate(path, source string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("-tokens: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("-tokens: %w", err)
	}
	fix := fmt.Sprintf("make it readable by its owner (and group) only and writable by its owner only (chmod 600 %s; in Kubernetes a secret volume's defaultMode 0400), "+
		"or give the tokens in %s instead", path, source)
	if perm := st.Mode().Perm(); runtime.GOOS != "windows" && perm&0o026 != 0 {
		return nil, fmt.Errorf("-tokens %s: its mode %v lets other users of this machine read or change its tokens, with which they would act as their principals; %s", path, perm, fix)
	}
	if uid, mine := ownedHere(st); !mine {
		return nil, fmt.Errorf("-tokens %s: it is owned by user %d, neither this process's user (%d) nor root, who could change its tokens; "+
			"give it to this user (chown %d %s), or give the tokens in %s instead", path, uid, os.Geteuid(), os.Geteuid(), path, source)
	}
	data, err := io.ReadAll(f)
	if err != nil {
		return nil, fmt.Errorf("-tokens: %w", err)
	}
	return data, nil
}
