package flags

import (
	"fmt"
	"io"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/store/memory"
)

// newStore makes the store -store names.
func (c *Config) newStore() (core.Store, io.Closer, error) {
	switch c.Store {
	case Memory:
		st, err := memory.New()
		if err != nil {
			return nil, nil, err
		}
		return st, st, nil
	}
	return nil, nil, fmt.Errorf("-store %s: this build has no Redis store", c.storeName())
}
