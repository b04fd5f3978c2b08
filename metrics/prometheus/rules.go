package prommetrics

import (
	"strings"
	"sync/atomic"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"
)

// labelDigest labels the rules version gauge with the short digest.
const labelDigest = "digest"

// shortDigestLen is how many hex digits of a rules digest the digest label
// keeps: rules.ShortDigestLen, what ratewarden's logs and tool print.
const shortDigestLen = 12

// rulesInForce is the rules document an Observer last heard of.
type rulesInForce struct {
	version float64
	digest  string
}

// rulesMetric is the ratewarden_rules_version gauge: made at collection from
// the document last heard of, so that at most one series exists, that of
// the document in force.
type rulesMetric struct {
	desc *prometheus.Desc
	cur  atomic.Pointer[rulesInForce]
}

func newRulesMetric(c config) *rulesMetric {
	return &rulesMetric{desc: prometheus.NewDesc(
		prometheus.BuildFQName(c.namespace, "", "rules_version"),
		"Version of the rules document in force (rules.Set), labelled with the first 12 hex digits of its content digest; one series, replaced on every reload.",
		[]string{labelDigest}, c.constLabels)}
}

// ObserveRules records the rules document in force: its version, the gauge's
// value, and its digest, whose first 12 hex digits label it. A rules.Set
// calls it (rules.RulesObserver) when it is built and after every document
// that takes effect, for the observers given to it with rules.WithObserver;
// the series of the document before is gone from the next scrape. Give each
// Set of an application its own Observer (WithConstLabels tells them apart).
func (o *Observer) ObserveRules(version int64, digest string) {
	if len(digest) > shortDigestLen {
		digest = digest[:shortDigestLen]
	}
	if !utf8.ValidString(digest) {
		digest = strings.ToValidUTF8(digest, "\uFFFD") // a const metric refuses invalid UTF-8
	}
	o.rules.cur.Store(&rulesInForce{version: float64(version), digest: digest})
}

func (m *rulesMetric) describe(ch chan<- *prometheus.Desc) { ch <- m.desc }

// collect sends the series of the document in force, none before one is heard of.
func (m *rulesMetric) collect(ch chan<- prometheus.Metric) {
	if r := m.cur.Load(); r != nil {
		ch <- prometheus.MustNewConstMetric(m.desc, prometheus.GaugeValue, r.version, r.digest)
	}
}
