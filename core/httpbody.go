package core

import (
	"fmt"
	"strconv"
	"strings"
)

// Bodies that never change. None holds request data or error text.
const (
	textTooMany      = "Too Many Requests\n"
	titleTooMany     = "Request cannot be satisfied as assigned quota has been exceeded"
	textUnauthorized = "Unauthorized\n"
	jsonUnauthorized = `{"type":"about:blank","title":"Unauthorized","status":401}`
	textUnavailable  = "Service Unavailable\n"
	jsonUnavailable  = `{"type":"about:blank","title":"Service Unavailable","status":503}`
)

// precompute builds every header value and body that does not change between
// requests, once.
func (p *HTTPPolicy) precompute() error {
	limits := p.lim.limits
	p.perLimit = make([]limitHeaders, len(limits))
	var policy strings.Builder
	for i, l := range limits {
		if err := checkFieldName(l.Name); err != nil {
			return err
		}
		q, w := l.Rate, ceilSeconds(l.Period)
		p.perLimit[i] = limitHeaders{
			limitField: constHeader(hXLimit, strconv.FormatInt(q, 10)),
			rlPrefix:   `"` + l.Name + `";r=`,
			jsonBody: fmt.Appendf(nil, `{"type":%q,"title":%q,"status":429,"violated-policies":[%q]}`,
				ProblemTypeQuotaExceeded, titleTooMany, l.Name),
		}
		if i > 0 {
			policy.WriteString(", ")
		}
		fmt.Fprintf(&policy, `"%s";q=%d;w=%d`, l.Name, q, w)
	}
	p.policyField = constHeader(hPolicy, policy.String())
	p.textBody = []byte(textTooMany)
	p.passOutcome = &HTTPOutcome{Action: HTTPPass}
	for head := range 2 {
		p.keyOutcome[head] = fixedOutcome(401, ContentTypeTextPlain, textUnauthorized, head == 1)
		p.keyOutcomeJSON[head] = fixedOutcome(401, ContentTypeProblemJSON, jsonUnauthorized, head == 1)
		p.failOutcome[head] = fixedOutcome(503, ContentTypeTextPlain, textUnavailable, head == 1)
		p.failOutcomeJSON[head] = fixedOutcome(503, ContentTypeProblemJSON, jsonUnavailable, head == 1)
	}
	return nil
}

func constHeader(name headerName, value string) HTTPHeader {
	return HTTPHeader{name: name, vals: []string{value}}
}

func fixedOutcome(status int, contentType, body string, head bool) *HTTPOutcome {
	o := &HTTPOutcome{Action: HTTPRespond, Status: status, ContentType: contentType}
	if !head {
		o.Body = []byte(body)
	}
	return o
}

// checkFieldName reports a limit name that cannot be written as a structured
// field string in a header or as a JSON string without escaping.
func checkFieldName(name string) error {
	for i := 0; i < len(name); i++ {
		if c := name[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			return fmt.Errorf("%w: limit name %q: only printable ASCII without quotes or backslashes fits in a RateLimit header", ErrInvalidOption, truncate(name))
		}
	}
	return nil
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
