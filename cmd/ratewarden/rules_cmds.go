package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/ratewarden/ratewarden/rules"
)

var cmdValidate = &command{
	name: "rules validate", args: []string{"FILE"},
	short: "check a rules file",
	long: `Checks the rules file FILE (YAML or JSON) as every instance would, and
prints "FILE: valid" with its version, its digest and its policies, or every
problem, each with its line and column, on standard error (exit 1). It needs
no Redis.

The digest is the first 12 hex digits of the SHA-256 of the rules' canonical
form: the same rules in YAML or JSON, commented or not, have one digest, and
every instance reports the digest of the rules it runs (its log, the
ratewarden_rules_version metric). Two files of one version must have one
digest.`,
	run: func(e *env, args []string) error {
		doc, _, err := e.parseFile(args[0])
		if err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "%s: valid: %s, %d polic%s\n", args[0], identity(doc), len(doc.Policies), pluralY(len(doc.Policies)))
		return nil
	},
}

var cmdDiff = &command{
	name: "rules diff", args: []string{"FILE"}, redis: true,
	short: "compare a rules file with the rules in Redis",
	long: `Compares the rules file FILE with the rules Redis holds, policy by policy:
the policies added and removed, and each changed field, old -> new. Exits as
diff(1) does: 0 when they are the same, 1 when they differ, 2 on trouble
(FILE is invalid, Redis fails) or bad usage. Redis holding no rules yet counts
as a difference: every policy is added. After the differences, what the push
would do to the counters of each policy, tier and override whose counters do
not simply stay: re-expressed (its limits edited: what clients have used stays
used under the new figures), restarted (another algorithm or number of
limits), new or dropped.`,
	run: runDiff,
}

var cmdPush = &command{
	name: "rules push", args: []string{"FILE"}, redis: true,
	short: "validate a rules file and store it in Redis",
	long: `Validates the rules file FILE and stores it in Redis, in one atomic step
that also announces it to every watching instance, which loads it at once
(and, should the announcement be lost, at its next poll). The push is refused
(exit 1) unless the file's version is newer than the one Redis holds, which
the message names: an older version, or the version Redis holds with other
rules (another digest), which every instance would take for the rules it
already runs. Pushing the very rules Redis holds again (the same version and
digest) changes nothing and announces them again (exit 0), so that a
deployment may push on every run. It prints the version and digest pushed,
then what the push did to the counters that do not simply stay (as rules diff
says them: re-expressed, restarted, new, dropped).`,
	run: runPush,
}

var cmdShow = &command{
	name: "rules show", redis: true,
	short: "print the rules in Redis",
	long: `Prints the rules document Redis holds, exactly as it was pushed, on
standard output, and its version and digest on standard error (what every
instance that follows Redis reports once it has loaded them). Exits 1 when Redis holds
no rules, or holds something no push writes (the text is printed when it can
be read).`,
	run: runShow,
}

// parseFile reads and parses the rules file path; its problems are written
// to standard error.
func (e *env) parseFile(path string) (*rules.Document, []byte, error) {
	raw, err := readFile(path)
	if err != nil {
		return nil, nil, fmt.Errorf("ratewarden: %w", err)
	}
	doc, err := rules.Parse(raw, path)
	if err != nil {
		e.problems(path, err)
		return nil, nil, errFound
	}
	return doc, raw, nil
}

// problems writes a document's problems, and how many, to standard error.
func (e *env) problems(source string, err error) {
	fmt.Fprintln(e.stderr, err)
	var p *rules.Problems
	if errors.As(err, &p) {
		n := len(p.List) + p.Omitted
		fmt.Fprintf(e.stderr, "%s: %d problem%s\n", source, n, plural(n))
	}
}

// readFile reads a rules file: one byte more than rules.Parse takes at most,
// so that it can say the file is too large.
func readFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	raw, err := io.ReadAll(io.LimitReader(f, rules.MaxDocumentSize+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return raw, nil
}

func runPush(e *env, args []string) error {
	doc, raw, err := e.parseFile(args[0])
	if err != nil {
		return err
	}
	held := e.heldRules() // to say what the push does to the counters
	_, err = e.pushRules(raw)
	if errors.Is(err, rules.ErrStaleRules) || errors.Is(err, rules.ErrVersionConflict) {
		fmt.Fprintln(e.stderr, err)
		return errFound
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "pushed %s: %s is in %s, announced on %s{rules}:announce\n", args[0], identity(doc), e.docKey(), e.prefix)
	for _, l := range counterLines(held, doc) {
		fmt.Fprintln(e.stdout, l)
	}
	return nil
}

// heldRules returns the rules Redis holds, nil when it holds none or cannot
// give them (the push that follows says why, if it matters).
func (e *env) heldRules() *rules.Document {
	raw, _, err := e.fetchRules()
	if err != nil {
		return nil
	}
	held, err := rules.Parse(raw, rules.RedisSource)
	if err != nil {
		return nil
	}
	return held
}

func runShow(e *env, _ []string) error {
	raw, _, err := e.fetchRules()
	if raw != nil {
		_, _ = e.stdout.Write(raw)
	}
	if err != nil {
		return err
	}
	doc, err := rules.Parse(raw, rules.RedisSource)
	if err != nil {
		return err // FetchRules parsed it already
	}
	fmt.Fprintf(e.stderr, "%s holds %s\n", e.docKey(), identity(doc))
	return nil
}

// identity writes doc's version and short digest: "version 7, digest
// 3f2a9c1b7e04".
func identity(doc *rules.Document) string {
	return rules.Identity{Version: doc.Version, Digest: doc.Digest()}.String()
}

func runDiff(e *env, args []string) error {
	lines, err := e.diffLines(args[0])
	if err != nil {
		return fmt.Errorf("%w: %w", err, errTrouble) // diff(1)'s 2
	}
	if len(lines) == 0 {
		return nil
	}
	for _, l := range lines {
		fmt.Fprintln(e.stdout, l)
	}
	return errFound
}

// diffLines returns the lines that say how the rules file path differs from
// the rules Redis holds, none when they are the same (after saying so).
func (e *env) diffLines(path string) ([]string, error) {
	doc, _, err := e.parseFile(path)
	if err != nil {
		return nil, err
	}
	var held *rules.Document
	raw, _, err := e.fetchRules()
	switch {
	case errors.Is(err, rules.ErrNoRules):
		fmt.Fprintf(e.stdout, "%s holds no rules: every policy of %s is added\n", e.docKey(), path)
	case err != nil:
		return nil, err
	default:
		if held, err = rules.Parse(raw, "redis"); err != nil {
			return nil, err // FetchRules parsed it already
		}
	}
	lines := diffDocuments(held, doc)
	if len(lines) == 0 {
		fmt.Fprintf(e.stdout, "no difference: %s holds %s (%s)\n", e.docKey(), path, identity(doc))
		return nil, nil
	}
	return append(lines, counterLines(held, doc)...), nil
}

// counterLines says what a reload from held to doc does to the counters of
// each policy, tier and override whose counters do not simply stay: those
// re-expressed under edited limits, restarted, new and dropped. None when
// held is nil (a first push: every counter is new) or every counter stays.
func counterLines(held, doc *rules.Document) []string {
	if held == nil {
		return nil
	}
	var lines []string
	for _, c := range rules.CounterChanges(held, doc) {
		if c.Fate != rules.CountersKept {
			lines = append(lines, "  "+c.String())
		}
	}
	if len(lines) == 0 {
		return nil
	}
	return append([]string{"counters (what clients have used):"}, lines...)
}

func pluralY(n int) string {
	if n == 1 {
		return "y"
	}
	return "ies"
}
