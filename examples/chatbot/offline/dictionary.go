package offline

import (
	"bufio"
	"os"
	"strings"
	"sync"
)

// SystemDictionary is the word list the model reads, when the system has
// one (Debian's wamerican package installs it; macOS ships it): one word
// a line. A word it holds is spelled right, so it is never read as a
// typing slip of another word ("trail" is not "trial", "diary" not
// "dairy"). Without the list, a slip is any word one swap, or one letter
// left out or doubled, from a word of the results.
const SystemDictionary = "/usr/share/dict/words"

// maxDictionaryWords bounds the words read from the dictionary.
const maxDictionaryWords = 1 << 20

var (
	dictionaryOnce sync.Once
	dictionary     map[string]bool
)

// spelledRight reports whether w is a word of the system dictionary.
func spelledRight(w string) bool {
	dictionaryOnce.Do(func() { dictionary = readDictionary(SystemDictionary) })
	return dictionary[w]
}

// readDictionary returns the lower-case words of the word list at path,
// at most maxDictionaryWords of them, or nil when there is none.
func readDictionary(path string) map[string]bool {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	words := map[string]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() && len(words) < maxDictionaryWords {
		if w := strings.ToLower(strings.TrimSpace(sc.Text())); w != "" && !strings.Contains(w, "'") {
			words[w] = true
		}
	}
	return words
}
