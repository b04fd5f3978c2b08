package rules

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// document1000 is a realistic document of 1,000 policies: matches on
// routes, prefixes, methods, hosts and headers, keys of every kind, tiers,
// overrides and replaces.
func document1000() []byte {
	var b strings.Builder
	b.WriteString("schema: 1\nversion: 42\ndefaults: {algorithm: gcra, key: ip, fail: open}\npolicies:\n")
	for i := 0; i < 1000; i++ {
		fmt.Fprintf(&b, "  - name: service-%d\n", i)
		switch i % 4 {
		case 0:
			fmt.Fprintf(&b, "    match: {methods: [GET, POST], paths: [\"/v1/svc%d/items/{id}\", \"/v1/svc%d/items\"]}\n", i, i)
			b.WriteString("    limits: [100/s, 10000/h]\n")
		case 1:
			fmt.Fprintf(&b, "    match: {prefixes: [/v2/svc%d], hosts: [api%d.example.com]}\n", i, i)
			b.WriteString("    key: {header: X-API-Key}\n    tiers:\n      by: {header: X-Plan}\n      default: free\n")
			b.WriteString("      limits: {free: [10/s], pro: [100/s burst 200], enterprise: [1000/s]}\n")
			fmt.Fprintf(&b, "    overrides:\n      - {key: partner-%d, limits: [5000/s]}\n      - {key: leaked-%d, blocked: true}\n", i, i)
		case 2:
			fmt.Fprintf(&b, "    match: {prefixes: [/v3/svc%d], headers: [{name: X-Debug, present: true}]}\n", i)
			b.WriteString("    key: [ip, {jwt_claim: sub}]\n    algorithm: sliding-window\n    limits: [50/m]\n    dry_run: true\n")
		default:
			fmt.Fprintf(&b, "    match: {paths: [/v1/svc%d/health]}\n    unlimited: true\n    replaces: [service-%d]\n", i-3, i-3)
		}
	}
	return []byte(b.String())
}

func TestDocument1000Parses(t *testing.T) {
	doc, err := Parse(document1000(), "bench.yaml")
	require.NoError(t, err)
	require.Len(t, doc.Policies, 1000)
}

// BenchmarkParse1000 is the parse of a reload of 1,000 policies, whose whole
// budget (parse, validate, compile, swap) is 50 ms.
func BenchmarkParse1000(b *testing.B) {
	data := document1000()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(data, "bench.yaml"); err != nil {
			b.Fatal(err)
		}
	}
}
