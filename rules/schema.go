package rules

import (
	"bytes"
	_ "embed" // schema.json
)

//go:embed schema.json
var schemaJSON []byte

// Schema returns the JSON Schema (draft 2020-12) of a rules document, the
// one docs/rules.md publishes as rules/schema.json: editors and CI jobs can
// check a document's shape with it before Parse reads it. Parse checks all
// the schema says and more (limits against their algorithm, route patterns,
// the names replaces refers to, unreachable policies). Each call returns a
// new copy.
func Schema() []byte { return bytes.Clone(schemaJSON) }
