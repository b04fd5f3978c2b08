package rules

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// schemaObject is the part of a JSON Schema the test reads.
type schemaObject struct {
	Properties           map[string]json.RawMessage `json:"properties"`
	AdditionalProperties *bool                      `json:"additionalProperties"`
}

// The schema is valid JSON of draft 2020-12, and lists exactly the fields
// the parser reads: both come from the same tables (objectFields), so a
// field added to one and not the other fails here.
func TestSchemaListsTheParsersFields(t *testing.T) {
	var root struct {
		Schema string `json:"$schema"`
		schemaObject
		Defs map[string]json.RawMessage `json:"$defs"`
	}
	require.NoError(t, json.Unmarshal(Schema(), &root))
	assert.Equal(t, "https://json-schema.org/draft/2020-12/schema", root.Schema)

	objects := map[string]schemaObject{"document": root.schemaObject}
	for name, raw := range root.Defs {
		var o schemaObject
		require.NoError(t, json.Unmarshal(raw, &o), name)
		if o.Properties != nil {
			objects[name] = o
		}
	}
	tables := objectFields()
	for name, fields := range tables {
		t.Run(name, func(t *testing.T) {
			o, ok := objects[name]
			require.True(t, ok, "schema.json has no object %q", name)
			var props []string
			for p := range o.Properties {
				props = append(props, p)
			}
			assert.ElementsMatch(t, fields, props, "the parser's fields (first) and the schema's (second)")
			require.NotNil(t, o.AdditionalProperties)
			assert.False(t, *o.AdditionalProperties, "unknown fields are errors in the schema too")
		})
	}
	for name := range objects {
		assert.Contains(t, tables, name, "the schema's object %q is an object the parser reads", name)
	}
}

// Every $ref of the schema points at a definition it has.
func TestSchemaRefsResolve(t *testing.T) {
	var doc any
	require.NoError(t, json.Unmarshal(Schema(), &doc))
	defs := doc.(map[string]any)["$defs"].(map[string]any)
	var refs []string
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, c := range v {
				if s, ok := c.(string); ok && k == "$ref" {
					refs = append(refs, s)
				}
				walk(c)
			}
		case []any:
			for _, c := range v {
				walk(c)
			}
		}
	}
	walk(doc)
	require.NotEmpty(t, refs)
	for _, ref := range refs {
		name, ok := strings.CutPrefix(ref, "#/$defs/")
		require.True(t, ok, ref)
		assert.Contains(t, defs, name)
	}
}

func TestSchemaReturnsACopy(t *testing.T) {
	a := Schema()
	a[0] = 'x'
	assert.Equal(t, byte('{'), Schema()[0])
	assert.True(t, slices.Equal(schemaJSON, Schema()))
}
