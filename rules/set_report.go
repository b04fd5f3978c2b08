package rules

import "log/slog"

// What a Set tells of its reloads: its log and its reload hook
// (WithReloadHook). Load and Replace report every document they take or
// refuse; a source of documents (WatchFile, WatchRedis, or an application's
// own) reports through the same three methods what it could not read.

// Logger returns the logger the Set reports through: WithLogger's, else
// slog.Default() as it is at the call. A source of documents logs there.
func (s *Set) Logger() *slog.Logger { return s.cfg.log() }

// ReportRefusal tells of a document from source that could not be read or
// taken (err), as Load does of one it refuses: it logs the refusal at Error
// with the version and digest in force, and tells the reload hook. The rules
// in force stay. A nil err is ignored.
func (s *Set) ReportRefusal(source string, err error) {
	if err != nil {
		s.report(source, err)
	}
}

// TellReloadHook tells the reload hook, if any, that err kept source's
// document out, and logs nothing: for a source that logs its failures in its
// own words. The Reload carries the version and digest in force. A nil err
// is ignored.
func (s *Set) TellReloadHook(source string, err error) {
	if err != nil && s.cfg.reloadHook != nil {
		id := s.Identity()
		s.cfg.reloadHook(Reload{Source: source, Version: id.Version, Digest: id.Digest, Err: err})
	}
}

// report tells the reload hook, and the log for a refusal.
func (s *Set) report(source string, err error) {
	_, id := s.identity()
	if err != nil {
		s.cfg.log().Error("ratewarden: rules refused; the rules in force stay",
			"source", source, "version_in_force", id.Version, "digest_in_force", ShortDigest(id.Digest), "err", err)
	}
	if s.cfg.reloadHook != nil {
		s.cfg.reloadHook(Reload{Source: source, Version: id.Version, Digest: id.Digest, Err: err})
	}
}
