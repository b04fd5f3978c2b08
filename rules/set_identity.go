package rules

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Errors of a document refused for its identity: the rules in force stay.
var (
	// ErrVersionConflict reports a document whose version is the one in
	// force (or the one Redis holds) with other rules: another digest. Two
	// documents of one version must be the same rules, so that the version
	// an instance reports says which rules it runs; raise the version.
	ErrVersionConflict = errors.New("ratewarden: same rules version, other rules")
	// ErrDowngrade reports a document older than the one in force, refused
	// unless a downgrade is allowed (AllowDowngrade, WithFileDowngrades).
	ErrDowngrade = errors.New("ratewarden: rules version older than the one in force")
)

// Identity names a rules document: its version and its content digest
// (Document.Digest).
type Identity struct {
	// Version is the document's version.
	Version int64
	// Digest is the document's digest, 64 hex digits; "" when unknown
	// (rules pushed to Redis by a ratewarden that stored no digest).
	Digest string
}

// String returns "version 7, digest 3f2a9c1b7e04" (the short digest), or
// "version 7" when the digest is unknown.
func (id Identity) String() string {
	if id.Digest == "" {
		return "version " + strconv.FormatInt(id.Version, 10)
	}
	return "version " + strconv.FormatInt(id.Version, 10) + ", digest " + ShortDigest(id.Digest)
}

// stamp is the identity as Redis keeps it beside the text (the field
// digest) and as a push announces it: "7:<digest>".
func (id Identity) stamp() string {
	return strconv.FormatInt(id.Version, 10) + ":" + id.Digest
}

// parseStamp reads a stamp; ok is false when s is not one.
func parseStamp(s string) (id Identity, ok bool) {
	v, d, found := strings.Cut(s, ":")
	n, err := strconv.ParseInt(v, 10, 64)
	if !found || err != nil || n < 1 || !isDigest(d) {
		return Identity{}, false
	}
	return Identity{Version: n, Digest: d}, true
}

// isDigest reports whether s is 64 lower-case hex digits.
func isDigest(s string) bool {
	if len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// RulesObserver is implemented by an observer (WithObserver) that wants to
// know which document is in force: a Set calls ObserveRules with the
// version and digest of the document it was built with, and again after
// every document that takes effect, on the goroutine that loaded it. The
// metrics modules' observers implement it (a gauge of the version, labelled
// with the short digest). It must not block, and must not call the Set.
type RulesObserver interface {
	ObserveRules(version int64, digest string)
}

// LoadOption configures one Set.Load or Set.Replace.
type LoadOption func(*loadConfig) error

// loadConfig is what the load options set.
type loadConfig struct {
	// downgrade admits a document older than the one in force.
	downgrade bool
	// follow admits any document, saying so when its identity disagrees
	// with the one in force: what a RedisWatcher does (Redis is the truth).
	follow bool
	// initial admits any document: a watcher's first load, which takes its
	// source's rules whatever the Set was built with.
	initial bool
	// rest admits a document of the version in force with other rules: a
	// file rewritten in place right after a load, whose first writes parsed.
	rest bool
}

// AllowDowngrade lets Set.Load or Set.Replace swap in a document older than
// the one in force, which they refuse otherwise (ErrDowngrade): an
// operator's deliberate return to an older file. A document of the version
// in force with other rules is refused still (ErrVersionConflict).
func AllowDowngrade() LoadOption {
	return func(c *loadConfig) error {
		c.downgrade = true
		return nil
	}
}

// follow and initial are the watchers' load modes (see loadConfig).
func follow() LoadOption  { return func(c *loadConfig) error { c.follow = true; return nil } }
func initial() LoadOption { return func(c *loadConfig) error { c.initial = true; return nil } }

// rest is the file watcher's mode right after a load (see loadConfig).
func rest(on bool) LoadOption { return func(c *loadConfig) error { c.rest = on; return nil } }

// newLoadConfig applies opts.
func newLoadConfig(opts []LoadOption) (loadConfig, error) {
	var c loadConfig
	for _, o := range opts {
		if o == nil {
			return c, nilOption("load option")
		}
		if err := o(&c); err != nil {
			return c, err
		}
	}
	return c, nil
}

// admit says whether doc, with digest, may replace the document in force,
// whose identity is cur: the same version with another digest is refused
// (ErrVersionConflict), and so is an older version unless downgrades are
// allowed (ErrDowngrade). Following (Redis), both are admitted and logged.
// It runs with the Set's swap lock held.
func (s *Set) admit(doc *Document, digest, source string, cur Identity, c loadConfig) error {
	next := Identity{Version: doc.Version, Digest: digest}
	conflict := next.Version == cur.Version && next.Digest != cur.Digest
	older := next.Version < cur.Version
	switch {
	case c.initial || !(conflict || older):
		return nil
	case c.rest && !older:
		s.cfg.log().Warn("ratewarden: the rules file changed again right after a load, under the same version; taking it for the rest of one write",
			"source", source, "in_force", cur.String(), "loaded", next.String())
		return nil
	case c.follow:
		s.cfg.log().Warn("ratewarden: the rules in force differ from the rules in "+source+"; following "+source,
			"in_force", cur.String(), source, next.String())
		return nil
	case conflict:
		return fmt.Errorf("%w: %s: version %d is the version in force, with other rules (digest %s in force, %s here): raise the version to change the rules",
			ErrVersionConflict, source, next.Version, ShortDigest(cur.Digest), ShortDigest(next.Digest))
	case !c.downgrade:
		return fmt.Errorf("%w: %s: version %d is older than version %d in force (digest %s): raise the version, or allow the downgrade (rules.AllowDowngrade, rules.WithFileDowngrades)",
			ErrDowngrade, source, next.Version, cur.Version, ShortDigest(cur.Digest))
	}
	return nil
}

// identity returns the document in force and its digest, computed once per
// document.
func (s *Set) identity() (*Document, Identity) {
	c := s.cur.Load()
	if id := s.id.Load(); id != nil && id.doc == c.doc {
		return c.doc, id.Identity
	}
	return c.doc, Identity{Version: c.doc.Version, Digest: c.doc.Digest()}
}

// docIdentity is a document and its identity, as the Set caches it.
type docIdentity struct {
	doc *Document
	Identity
}

// Digest returns the digest of the document in force (Document.Digest).
func (s *Set) Digest() string {
	_, id := s.identity()
	return id.Digest
}

// Identity returns the version and digest of the document in force, which
// belong to one document even while a reload runs.
func (s *Set) Identity() Identity {
	_, id := s.identity()
	return id
}

// observeRules tells the observers that implement RulesObserver of the
// document in force.
func (s *Set) observeRules(id Identity) {
	for _, o := range s.cfg.observers {
		if ro, ok := o.(RulesObserver); ok {
			ro.ObserveRules(id.Version, id.Digest)
		}
	}
}
