package flags

import (
	"flag"

	"github.com/ratewarden/ratewarden/core"
)

// The penalty box: -block-for DURATION refuses a client that -limit denied
// once for DURATION, whatever -limit says meanwhile, on every server sharing
// the -store (core.WithBlockFor). With -rules, a policy's block_for says it.

// defineBlock declares -block-for on fs.
func (r *rawFlags) defineBlock(fs *flag.FlagSet) {
	fs.DurationVar(&r.blockFor, "block-for", 0, "a penalty box: a client -limit denies once is refused for `DURATION` (such as 15m),\nwhatever -limit says meanwhile, on every server sharing the -store; its 429s carry the\nblock's end (or -limit's own wait, when later) in Retry-After; 0: none")
}

// parseBlock sets c.BlockFor from -block-for: a positive duration up to
// core.MaxPeriod, in whole microseconds, and not with -rules.
func (c *Config) parseBlock(r *rawFlags) error {
	if !r.set["block-for"] || r.blockFor == 0 {
		return nil
	}
	if c.RulesSource != NoRules {
		return usageErr("-block-for does not go with -rules: give a policy block_for: DURATION in the document")
	}
	if r.blockFor < 0 {
		return usageErr("-block-for %s: a penalty lasts a positive duration (0 for none)", r.blockFor)
	}
	if err := core.ValidateBlockFor(r.blockFor); err != nil {
		return usageErr("-block-for %s: %v", r.blockFor, err)
	}
	c.BlockFor = r.blockFor
	return nil
}

// blockOptions are the limiter options of -block-for and of the Config's
// Clock: none without them.
func (c *Config) blockOptions() []core.Option {
	var opts []core.Option
	if c.BlockFor > 0 {
		opts = append(opts, core.WithBlockFor(c.BlockFor))
	}
	if c.Clock != nil {
		opts = append(opts, core.WithClock(c.Clock))
	}
	return opts
}

// blockString says what -block-for does, for Config.String.
func (c *Config) blockString() string {
	if c.BlockFor == 0 {
		return ""
	}
	return "a client denied once refused for " + c.BlockFor.String()
}
