package rules

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// ErrInvalidRules is what every error of Parse and Document.Validate wraps:
// the document fails validation. The error is a *Problems, which lists why.
var ErrInvalidRules = errors.New("ratewarden: invalid rules")

// MaxProblems is the most problems a *Problems lists; beyond it they are
// only counted (Problems.Omitted), so that the error of a hostile document
// stays small.
const MaxProblems = 1000

// Problem is one thing wrong with a rules document: where it is and what it
// is.
type Problem struct {
	// Pos is where the problem is in the document. Parse always gives a line
	// (1 or more); Column is 0 when only the line is known (an error of the
	// YAML syntax, a document too large). For a Document built in Go
	// (Document.Validate), it is the policy's or the override's Pos, the zero
	// Pos when they have none.
	Pos Pos
	// Path is the part of the document at fault, as
	// "policies[3].limits[0]"; empty for the document as a whole.
	Path string
	// Message says what is wrong, for a person to act on.
	Message string
	// Err is the error behind Message when there is one, such as the
	// core.ErrInvalidLimit of a limit that does not parse; nil otherwise.
	Err error
}

// String returns the problem as one line without its source:
// "12:14: policies[1].limits[0]: message".
func (p Problem) String() string {
	var b strings.Builder
	p.write(&b, "")
	return b.String()
}

// write writes the problem as one line, prefixed by source when it is set.
func (p Problem) write(b *strings.Builder, source string) {
	start := b.Len()
	if source != "" {
		b.WriteString(source)
		b.WriteByte(':')
	}
	if p.Pos.Line > 0 {
		b.WriteString(strconv.Itoa(p.Pos.Line))
		b.WriteByte(':')
		if p.Pos.Column > 0 {
			b.WriteString(strconv.Itoa(p.Pos.Column))
			b.WriteByte(':')
		}
	}
	if b.Len() > start {
		b.WriteByte(' ')
	}
	if p.Path != "" {
		b.WriteString(p.Path)
		b.WriteString(": ")
	}
	b.WriteString(p.Message)
}

// Problems is the error of a document that fails validation: every problem
// found (up to MaxProblems), in document order. It wraps ErrInvalidRules and
// the errors behind its problems, so errors.Is(err, ErrInvalidRules) holds,
// as does errors.Is(err, core.ErrInvalidLimit) when a limit is at fault;
// errors.As finds the *Problems.
type Problems struct {
	// Source names where the document came from ("rules.yaml", "redis");
	// it prefixes every line of Error.
	Source string
	// List holds the problems, sorted by position.
	List []Problem
	// Omitted counts the problems found beyond MaxProblems, not listed.
	Omitted int
}

// Error returns one line per problem, as a compiler writes them:
// "rules.yaml:12:14: policies[1].limits[0]: message".
func (e *Problems) Error() string {
	var b strings.Builder
	for i, p := range e.List {
		if i > 0 {
			b.WriteByte('\n')
		}
		p.write(&b, e.Source)
	}
	if e.Omitted > 0 {
		b.WriteByte('\n')
		if e.Source != "" {
			b.WriteString(e.Source + ": ")
		}
		fmt.Fprintf(&b, "and %d more problems", e.Omitted)
	}
	if b.Len() == 0 {
		return ErrInvalidRules.Error()
	}
	return b.String()
}

// Unwrap returns ErrInvalidRules and the errors behind the problems.
func (e *Problems) Unwrap() []error {
	errs := []error{ErrInvalidRules}
	for _, p := range e.List {
		if p.Err != nil {
			errs = append(errs, p.Err)
		}
	}
	return errs
}

// finding is a problem on its way to a Problem: where and what.
type finding struct {
	pos Pos
	at  *path // the part at fault
	msg string
	err error
}

// maxMessage bounds a problem's message, which may quote the document.
const maxMessage = 512

// findings collects the problems of one document, keeping at most
// MaxProblems.
type findings struct {
	list    []finding
	omitted int
	n       int
}

// add records a problem at pos, about the part at.
func (f *findings) add(pos Pos, at *path, err error, format string, args ...any) {
	f.n++
	if len(f.list) >= MaxProblems {
		f.omitted++
		return
	}
	msg := fmt.Sprintf(format, args...)
	if len(msg) > maxMessage {
		msg = cutUTF8(msg, maxMessage) + "..."
	}
	f.list = append(f.list, finding{pos: pos, at: at, msg: msg, err: err})
}

// count records a problem beyond MaxProblems, which is only counted.
func (f *findings) count() {
	f.n++
	f.omitted++
}

// empty reports whether no problem was found.
func (f *findings) empty() bool { return f.n == 0 }

// full reports whether the list holds MaxProblems already: a caller may skip
// the work of locating a problem that would only be counted.
func (f *findings) full() bool { return len(f.list) >= MaxProblems }

// problems builds the error: the findings in the order of their positions.
func (f *findings) problems(source string) *Problems {
	out := &Problems{Source: source, List: make([]Problem, len(f.list)), Omitted: f.omitted}
	for i, fd := range f.list {
		out.List[i] = Problem{Pos: fd.pos, Path: fd.at.String(), Message: fd.msg, Err: fd.err}
	}
	slices.SortStableFunc(out.List, func(a, b Problem) int {
		return cmp.Or(cmp.Compare(a.Pos.Line, b.Pos.Line), cmp.Compare(a.Pos.Column, b.Pos.Column))
	})
	return out
}
