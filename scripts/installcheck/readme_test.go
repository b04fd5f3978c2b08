package main

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Every line of every Go snippet in README.md exists in an Example function
// of a test file of the repository, so a snippet cannot drift from code that
// compiles (and, for most, runs in CI). Blank lines, comments and lines made
// only of brackets are not looked up; trailing comments are ignored.
func TestREADMEGoSnippetsAreExamples(t *testing.T) {
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile(filepath.Join(repo, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	missing := missingLines(goSnippets(string(readme)), exampleLines(t, repo))
	for _, m := range missing {
		t.Errorf("README.md: %s is in no Example", m)
	}
}

// The check finds a line no Example holds, and ignores what is not code.
func TestMissingLinesFindsDrift(t *testing.T) {
	readme := "text\n```go\nx := 1 // a comment\n}\n// only a comment\ny := 2\n```\n```sh\nz\n```\n"
	got := missingLines(goSnippets(readme), map[string]bool{"x := 1": true})
	if len(got) != 1 || got[0] != `line 6: "y := 2"` {
		t.Fatalf("missingLines = %q, want only y := 2 at line 6", got)
	}
}

// missingLines lists the code lines of snippets that examples lacks.
func missingLines(snippets []snippet, examples map[string]bool) []string {
	var out []string
	for _, sn := range snippets {
		for i, line := range sn.lines {
			if code := codeOf(line); code != "" && !examples[code] {
				out = append(out, fmt.Sprintf("line %d: %q", sn.start+i, code))
			}
		}
	}
	return out
}

// snippet is one ```go block of the README: its first line's number and its
// lines.
type snippet struct {
	start int
	lines []string
}

func goSnippets(readme string) []snippet {
	var out []snippet
	var cur *snippet
	for i, line := range strings.Split(readme, "\n") {
		switch {
		case cur == nil && strings.TrimSpace(line) == "```go":
			cur = &snippet{start: i + 2}
		case cur != nil && strings.TrimSpace(line) == "```":
			out = append(out, *cur)
			cur = nil
		case cur != nil:
			cur.lines = append(cur.lines, line)
		}
	}
	return out
}

var bracketsOnly = regexp.MustCompile(`^[\s{}()\[\],;]*$`)

// codeOf is line without its trailing comment and surrounding space; "" for
// a line that holds no code worth looking up.
func codeOf(line string) string {
	if i := strings.Index(line, "//"); i >= 0 && !strings.Contains(line[:i], `"`) && !strings.Contains(line[:i], "`") {
		line = line[:i]
	}
	line = strings.TrimSpace(line)
	if bracketsOnly.MatchString(line) {
		return ""
	}
	return line
}

// exampleLines returns the code of every line of the repository's test files
// that hold an Example function, as codeOf gives it.
func exampleLines(t *testing.T, repo string) map[string]bool {
	t.Helper()
	lines := map[string]bool{}
	err := filepath.WalkDir(repo, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil || !strings.Contains(string(src), "\nfunc Example") {
			return err
		}
		sc := bufio.NewScanner(strings.NewReader(string(src)))
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			if code := codeOf(sc.Text()); code != "" {
				lines[code] = true
			}
		}
		return sc.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	return lines
}
