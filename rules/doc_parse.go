package rules

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v4"
)

// Bounds on a rules document. Parse refuses a document beyond any of them
// with a problem, before it can cost much memory or time: a document comes
// from a file or from Redis, written by a person or by a program that may be
// wrong.
const (
	// MaxDocumentSize is the largest document Parse reads, in bytes (4 MiB),
	// checked before any parsing.
	MaxDocumentSize = 4 << 20
	// MaxDepth is the deepest nesting of mappings and lists a document may
	// have (a real one needs about 6).
	MaxDepth = 64
	// MaxAliasNodes is the most nodes a document's YAML aliases may stand
	// for in total, counted as they are expanded, so that an alias bomb (the
	// "billion laughs") is refused after this much work. The text of the
	// scalars they stand for is bounded too, by MaxDocumentSize.
	MaxAliasNodes = 100_000
	// MaxPolicies is the most policies a document may have.
	MaxPolicies = 10_000
	// MaxOverrides is the most overrides a document may have, counting
	// every policy's.
	MaxOverrides = 100_000
	// MaxKeyLength is the longest override key, in bytes: a key is what a
	// key function produces, such as an API key or an IP's /64.
	MaxKeyLength = 256
	// MaxNameLength is the longest policy or tier name, in bytes.
	MaxNameLength = 40
)

// Parse reads a rules document, YAML or JSON (read as the YAML it is), as
// docs/rules.md describes it: it decodes every field, applies the defaults
// block to every policy, and validates the whole (see Document.Validate). It
// returns the Document, or an error of type *Problems wrapping
// ErrInvalidRules that lists every problem found, each with its line and
// column, its path in the document and a message; source (a file name,
// "redis") prefixes every line: "rules.yaml:12:14: policies[1].limits[0]:
// ...". Limits are read by core.ParseLimit and checked by the policy's
// algorithm, exactly as limits written in Go. Parse never panics, and the
// bounds above (MaxDocumentSize and the rest) keep its time and memory in
// proportion to a legitimate document's.
func Parse(data []byte, source string) (*Document, error) {
	d := &decoder{}
	if len(data) > MaxDocumentSize {
		d.add(Pos{Line: 1}, nil, nil, "the document is %d bytes: the most a rules document may be is %d (4 MiB)", len(data), MaxDocumentSize)
		return nil, d.problems(source)
	}
	top, ok := readYAML(d, data)
	if !ok {
		return nil, d.problems(source)
	}
	if !guard(d, top) || !schemaReadable(d, top) {
		return nil, d.problems(source)
	}
	dr := d.document(top)
	v := &validator{f: &d.findings, locate: locator(top), failed: dr.failed, parsed: true}
	v.document(&dr.doc)
	if !d.empty() {
		return nil, d.problems(source)
	}
	doc := dr.doc
	return &doc, nil
}

// readYAML parses data into its top node: the one document's content. An
// empty document, a YAML syntax error, a second document and a top level that
// is no mapping are problems. A panic of the YAML parser (a bug of its own)
// is turned into one too.
func readYAML(d *decoder, data []byte) (top *yaml.Node, ok bool) {
	defer func() {
		if r := recover(); r != nil {
			d.add(Pos{Line: 1}, nil, nil, "the YAML parser failed on this document: %v", r)
			top, ok = nil, false
		}
	}()
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			d.add(Pos{Line: 1}, nil, nil, "the document is empty")
		} else {
			yamlProblem(d, err)
		}
		return nil, false
	}
	if !soleDocument(d, dec) {
		return nil, false
	}
	top = &doc
	if doc.Kind == yaml.DocumentNode && len(doc.Content) == 1 {
		top = doc.Content[0]
	}
	switch n := deref(top); {
	case isNull(n):
		d.add(Pos{Line: 1}, nil, nil, "the document is empty")
		return nil, false
	case n.Kind != yaml.MappingNode:
		d.add(posOf(n), nil, nil, "want a mapping with schema, version and policies, got %s", kindName(n))
		return nil, false
	}
	return top, true
}

// soleDocument reads the rest of the stream: a second document with content
// ("---" and more) is a problem, as its rules would be silently ignored.
func soleDocument(d *decoder, dec *yaml.Decoder) bool {
	for {
		var more yaml.Node
		err := dec.Decode(&more)
		switch {
		case errors.Is(err, io.EOF):
			return true
		case err != nil:
			yamlProblem(d, err)
			return false
		}
		if len(more.Content) == 1 && !isNull(more.Content[0]) {
			d.add(posOf(more.Content[0]), nil, nil, "a second YAML document (after \"---\"): a rules file holds one document")
			return false
		}
	}
}

// yamlProblem records a YAML syntax error at the offending token: the
// position yaml's LoadError marks (the problem, not the construct around it),
// else the line its text names ("yaml: line 3: ..."), else line 1.
func yamlProblem(d *decoder, err error) {
	var le *yaml.LoadError
	if errors.As(err, &le) && le.Mark.Line >= 1 {
		msg := le.Message
		if le.ContextMsg != "" && le.ContextMark.Line >= 1 && le.ContextMark != le.Mark {
			msg += fmt.Sprintf(" (%s that starts at %d:%d)", le.ContextMsg, le.ContextMark.Line, le.ContextMark.Column)
		}
		d.add(Pos{Line: le.Mark.Line, Column: max(le.Mark.Column, 0)}, nil, err, "not valid YAML: %s", msg)
		return
	}
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	pos := Pos{Line: 1}
	if rest, ok := strings.CutPrefix(msg, "line "); ok {
		if num, after, ok := strings.Cut(rest, ": "); ok {
			if n, err := strconv.Atoi(num); err == nil && n >= 1 {
				pos.Line, msg = n, after
			}
		}
	}
	d.add(pos, nil, err, "not valid YAML: %s", msg)
}

// schemaReadable refuses, alone, a document written for a newer schema: its
// other problems would be noise (it may use fields this version does not
// know).
func schemaReadable(d *decoder, top *yaml.Node) bool {
	for _, e := range mappingEntries(deref(top), nil) {
		k, v := deref(e.key), deref(e.value)
		if k.Kind != yaml.ScalarNode || k.Value != "schema" || v.Kind != yaml.ScalarNode || v.Tag != tagInt {
			continue
		}
		if s, err := strconv.ParseInt(strings.ReplaceAll(v.Value, "_", ""), 0, 64); err == nil && s > SchemaVersion {
			d.add(posOf(v), (*path)(nil).dot("schema"), nil, "%s", schemaProblem(s))
			return false
		}
	}
	return true
}

// schemaProblem says what is wrong with a schema version, or "".
func schemaProblem(s int64) string {
	switch {
	case s > SchemaVersion:
		return fmt.Sprintf("written for rules schema %d; this library reads schema %d", s, SchemaVersion)
	case s < 1:
		return fmt.Sprintf("schema %d: this library reads schema %d", s, SchemaVersion)
	}
	return ""
}

// ReadFile reads and parses the rules file at path, as WatchFile reads it: at
// most MaxDocumentSize bytes (a larger file is refused by Parse), and never a
// FIFO or a device, which could block or never end. Problems name the file
// ("rules.yaml:12:14: ..."). An unreadable file is an error wrapping
// ErrFileUnreadable.
func ReadFile(path string) (*Document, error) {
	raw, err := readDocumentFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(raw, path)
}

// readDocumentFile reads at most MaxDocumentSize+1 bytes of the regular file at
// path (following symlinks): one byte more than the parser takes, so that it
// refuses the file as too large.
func readDocumentFile(path string) ([]byte, error) {
	// A FIFO or a device would block or never end: refuse before opening.
	info, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrFileUnreadable, err)
	}
	if !info.Mode().IsRegular() {
		return nil, fmt.Errorf("%w: %s: not a regular file (%v)", ErrFileUnreadable, path, info.Mode().Type())
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrFileUnreadable, err)
	}
	defer f.Close()
	raw, err := io.ReadAll(io.LimitReader(f, MaxDocumentSize+1))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrFileUnreadable, err)
	}
	return raw, nil
}
