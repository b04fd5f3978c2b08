package redisstore

import (
	"net/url"
	"strings"
)

// redacted replaces a password in RedactURL's result.
const redacted = "xxxxx"

// RedactURL returns s with its password replaced by xxxxx, as
// url.URL.Redacted does, for messages: redis://user:xxxxx@host:6379/0. It
// reads s as ParseURL does (the user info runs to the last @), so it hides
// the password of a URL ParseURL refuses too, and it hides the value of any
// query option whose name speaks of a password, a secret, a token or a key.
// A string with no "://" is returned as "(not a URL)": it may be a password
// given in the wrong place.
func RedactURL(s string) string {
	scheme, rest, ok := strings.Cut(s, "://")
	if !ok {
		return "(not a URL)"
	}
	var b strings.Builder
	b.WriteString(scheme + "://")
	if i := strings.LastIndexByte(rest, '@'); i >= 0 {
		user, _, hasPassword := strings.Cut(rest[:i], ":")
		b.WriteString(user)
		if hasPassword {
			b.WriteString(":" + redacted)
		}
		b.WriteByte('@')
		rest = rest[i+1:]
	}
	base, query, hasQuery := strings.Cut(rest, "?")
	b.WriteString(base)
	if hasQuery {
		b.WriteByte('?')
		b.WriteString(redactQuery(query))
	}
	return b.String()
}

// redactQuery hides the values of the query options that may hold secrets.
func redactQuery(query string) string {
	parts := strings.Split(query, "&")
	for i, part := range parts {
		name, _, hasValue := strings.Cut(part, "=")
		n, err := url.QueryUnescape(name)
		if err != nil {
			n = name
		}
		n = strings.ToLower(n)
		if hasValue && (strings.Contains(n, "pass") || strings.Contains(n, "secret") || strings.Contains(n, "token") ||
			strings.Contains(n, "key") || strings.Contains(n, "auth")) {
			parts[i] = name + "=" + redacted
		}
	}
	return strings.Join(parts, "&")
}
