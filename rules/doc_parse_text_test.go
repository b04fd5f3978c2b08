package rules

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v4"

	"github.com/ratewarden/ratewarden/core"
)

// yamlConfig is an application's own configuration, decoded by YAML: the
// text encodings of core (core/text.go) let any library that knows
// encoding.TextUnmarshaler read limits and algorithms, not only this package.
type yamlConfig struct {
	Limit     core.Limit     `yaml:"limit"`
	Algorithm core.Algorithm `yaml:"algorithm"`
	More      []core.Limit   `yaml:"more"`
}

func TestCoreTextEncodingsThroughYAML(t *testing.T) {
	var c yamlConfig
	require.NoError(t, yaml.Unmarshal([]byte("limit: 10/s burst 20\nalgorithm: Token_Bucket\nmore: [100/m, 5/1m30s]\n"), &c))
	assert.Equal(t, yamlConfig{
		Limit:     core.PerSecond(10).WithBurst(20),
		Algorithm: core.TokenBucket,
		More:      []core.Limit{core.PerMinute(100), core.Every(5, 90*time.Second)},
	}, c)

	out, err := yaml.Marshal(c)
	require.NoError(t, err)
	assert.Equal(t, "limit: 10/s burst 20\nalgorithm: token-bucket\nmore:\n    - 100/m\n    - 5/1m30s\n", string(out))

	var back yamlConfig
	require.NoError(t, yaml.Unmarshal(out, &back))
	assert.Equal(t, c, back)
}

func TestCoreTextEncodingsThroughYAMLRefuseBadValues(t *testing.T) {
	tests := []struct {
		name string
		doc  string
		want error
	}{
		{"a limit that does not parse", "limit: 10/x\n", core.ErrInvalidLimit},
		{"an unknown algorithm", "algorithm: lru\n", core.ErrInvalidAlgorithm},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var c yamlConfig
			require.ErrorIs(t, yaml.Unmarshal([]byte(tt.doc), &c), tt.want)
		})
	}
	_, err := yaml.Marshal(yamlConfig{Algorithm: core.GCRA})
	require.Error(t, err, "a zero limit is not written")
}
