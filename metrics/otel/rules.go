package otelmetrics

import (
	"context"
	"strings"
	"unicode/utf8"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// shortDigestLen is how many hex digits of a rules digest AttrRulesDigest
// keeps: rules.ShortDigestLen, what ratewarden's logs and tool print.
const shortDigestLen = 12

// rulesInForce is the rules document an Observer last heard of, with the
// attribute set it is observed under.
type rulesInForce struct {
	version int64
	attrs   metric.ObserveOption
}

// ObserveRules records the rules document in force: its version, the value
// of the ratewarden.rules.version gauge, and its digest, whose first 12 hex
// digits are the AttrRulesDigest attribute. A rules.Set calls it
// (rules.RulesObserver) when it is built and after every document that takes
// effect, for the observers given to it with rules.WithObserver. The gauge is
// observed at collection, for the document in force only: the attributes of
// the document before are not reported again. Give each Set of an
// application its own Observer (WithAttributes tells them apart).
func (o *Observer) ObserveRules(version int64, digest string) {
	if len(digest) > shortDigestLen {
		digest = digest[:shortDigestLen]
	}
	if !utf8.ValidString(digest) {
		digest = strings.ToValidUTF8(digest, "\uFFFD")
	}
	kvs := append(append([]attribute.KeyValue{}, o.attrs...), AttrRulesDigest.String(digest))
	o.rules.Store(&rulesInForce{version: version, attrs: metric.WithAttributeSet(attribute.NewSet(kvs...))})
}

// observeRules is the ratewarden.rules.version gauge's callback.
func (o *Observer) observeRules(_ context.Context, obs metric.Int64Observer) error {
	if r := o.rules.Load(); r != nil {
		obs.Observe(r.version, r.attrs)
	}
	return nil
}
