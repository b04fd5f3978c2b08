package httplimit

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/keyfuncs"
)

// precompute builds every header value and body of t that does not change
// between requests, once, and sets its store timeout.
func (t *tier) precompute(timeout time.Duration) error {
	t.timeout = timeout
	local := false
	if ls, ok := t.lim.Store().(localStore); ok && ls.Local() {
		t.timeout, local = 0, true
	}
	t.timed = t.p.observer != nil && !local
	t.inflight = inflightAnswers(t)
	return t.setLimitHeaders(t.lim.Limits())
}

// setLimitHeaders builds what never changes for limits: each one's
// X-RateLimit-Limit value, RateLimit prefix and 429 answers, and the tier's
// RateLimit-Policy.
func (t *tier) setLimitHeaders(limits []core.Limit) error {
	t.perLimit = make([]limitHeaders, len(limits))
	text := []byte("Too Many Requests\n")
	var policy strings.Builder
	for i, l := range limits {
		if err := checkFieldName(l.Name); err != nil {
			return err
		}
		q, w := l.Rate, ceilSeconds(l.Period)
		lh := &t.perLimit[i]
		lh.limitVals = []string{strconv.FormatInt(q, 10)}
		lh.rlPrefix = `"` + l.Name + `";r=`
		json := DeniedProblem(core.Decision{Limit: l}).JSON()
		lh.denied = [2][2]*Response{
			{{429, ContentTypeTextPlain, text}, {429, ContentTypeTextPlain, nil}},
			{{429, ContentTypeProblemJSON, json}, {429, ContentTypeProblemJSON, nil}},
		}
		if i > 0 {
			policy.WriteString(", ")
		}
		if l.IsCalendar() {
			// A calendar window has no one length (a month is 28 to 31 days):
			// the draft's w is left out, and RateLimit's t tells the boundary.
			fmt.Fprintf(&policy, `"%s";q=%d`, l.Name, q)
		} else {
			fmt.Fprintf(&policy, `"%s";q=%d;w=%d`, l.Name, q, w)
		}
	}
	t.policyVals = []string{policy.String()}
	return nil
}

// precomputeFixed sets the answers shared by every request: those of every
// policy (built once per process: a rules reload builds a thousand policies),
// and a 503 of the policy's own Retry-After when it is not the default.
func (p *Policy) precomputeFixed() {
	a := sharedAnswers()
	p.passOutcome, p.keyOutcomes, p.peerOutcomes, p.failOutcomes = a.pass, a.key, a.peer, a.fail
	if ceilSeconds(p.unavailableRetry) != ceilSeconds(DefaultUnavailableRetryAfter) {
		p.failOutcomes = fixedOutcomes(UnavailableProblem(), strconv.FormatInt(ceilSeconds(p.unavailableRetry), 10))
	}
}

// fixedAnswers are the read-only outcomes that carry nothing of a policy.
type fixedAnswers struct {
	pass            *outcome
	key, peer, fail [2][2]*outcome
}

// sharedAnswers returns the fixed answers every policy shares.
var sharedAnswers = sync.OnceValue(func() *fixedAnswers {
	return &fixedAnswers{
		pass: &outcome{action: actionPass},
		key:  fixedOutcomes(KeyErrorProblem(keyfuncs.ErrKey), ""),
		peer: fixedOutcomes(KeyErrorProblem(keyfuncs.ErrPeerNotIP), ""),
		fail: fixedOutcomes(UnavailableProblem(), strconv.FormatInt(ceilSeconds(DefaultUnavailableRetryAfter), 10)),
	}
})

// fixedOutcomes returns the shared answers for pd, indexed [JSON][HEAD], with
// a Retry-After of retryAfter seconds unless it is empty.
func fixedOutcomes(pd ProblemDetails, retryAfter string) [2][2]*outcome {
	mk := func(contentType string, body []byte) *outcome {
		o := &outcome{action: actionRespond, response: &Response{pd.Status, contentType, body}}
		if retryAfter != "" {
			// The value lies off buf (spilled): a Header map copies the string.
			o.spilled = true
			o.addHeader(hRetryAfter, o.addValue(retryAfter, 0))
		}
		return o
	}
	return [2][2]*outcome{
		{mk(ContentTypeTextPlain, pd.Text()), mk(ContentTypeTextPlain, nil)},
		{mk(ContentTypeProblemJSON, pd.JSON()), mk(ContentTypeProblemJSON, nil)},
	}
}

// checkFieldName reports a limit name that cannot be written as a structured
// field string in a header or as a JSON string without escaping.
func checkFieldName(name string) error {
	for i := 0; i < len(name); i++ {
		if c := name[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			return fmt.Errorf("%w: limit name %q: only printable ASCII without quotes or backslashes fits in a RateLimit header", core.ErrInvalidOption, truncate(name))
		}
	}
	return nil
}

// answersJSON reports whether the policy's own answer to r carries problem
// details rather than plain text: as WithBodyFormat fixes it, else as r's
// Accept header asks, read only then.
func (p *Policy) answersJSON(r keyfuncs.Request) bool {
	if p.bodies == NegotiatedBody {
		return acceptsJSON(accept(r))
	}
	return p.bodies == ProblemJSONBody
}

// acceptsJSON reports whether an Accept header names a JSON media type
// (application/json, application/problem+json, any +json type, or
// application/*) with a non-zero quality. A missing Accept, or one that only
// says */*, gets plain text.
func acceptsJSON(accept string) bool {
	for accept != "" {
		var rng string
		rng, accept, _ = strings.Cut(accept, ",")
		media, params, _ := strings.Cut(rng, ";")
		media = strings.TrimSpace(media)
		if !strings.EqualFold(media, "application/json") && !strings.EqualFold(media, "application/*") &&
			(len(media) < 5 || !strings.EqualFold(media[len(media)-5:], "+json")) {
			continue
		}
		if !zeroQuality(params) {
			return true
		}
	}
	return false
}

// zeroQuality reports whether media-range parameters carry q=0.
func zeroQuality(params string) bool {
	for params != "" {
		var kv string
		kv, params, _ = strings.Cut(params, ";")
		k, v, _ := strings.Cut(kv, "=")
		if strings.EqualFold(strings.TrimSpace(k), "q") {
			v = strings.TrimSpace(v)
			return strings.Trim(v, "0.") == "" && v != ""
		}
	}
	return false
}

// truncate keeps error messages short when the input is long or hostile.
func truncate(s string) string {
	if len(s) > 64 {
		return s[:64] + "..."
	}
	return s
}
