package core_test

import (
	"encoding/json"
	"fmt"

	"github.com/ratewarden/ratewarden/core"
)

// Limit and Algorithm are text values: any configuration library that
// honours encoding.TextUnmarshaler (encoding/json, YAML, TOML, env decoders)
// reads them, with ParseLimit's and ParseAlgorithm's checks.
func ExampleLimit_UnmarshalText() {
	var cfg struct {
		Limit     core.Limit     `json:"limit"`
		Algorithm core.Algorithm `json:"algorithm"`
	}
	err := json.Unmarshal([]byte(`{"limit": "10/s burst 20", "algorithm": "gcra"}`), &cfg)
	fmt.Println(cfg.Limit.Rate, cfg.Limit.Burst, cfg.Algorithm, err)
	err = json.Unmarshal([]byte(`{"limit": "10 per second"}`), &cfg)
	fmt.Println(err != nil)
	// Output:
	// 10 20 gcra <nil>
	// true
}
