package core

import "errors"

// Sentinel errors. Every error the package returns wraps one of these, so callers
// can test with errors.Is.
var (
	// ErrInvalidLimit reports a Limit that cannot be enforced: a rate, period or
	// burst out of range, a string that does not parse, or a bad name.
	ErrInvalidLimit = errors.New("ratewarden: invalid limit")
	// ErrInvalidCost reports a negative cost, or a refund of n <= 0 or of a
	// denied Decision.
	ErrInvalidCost = errors.New("ratewarden: invalid cost")
	// ErrInvalidAlgorithm reports an Algorithm value or name that is not one of the six.
	ErrInvalidAlgorithm = errors.New("ratewarden: invalid algorithm")
	// ErrInvalidOption reports an option given a value it cannot use.
	ErrInvalidOption = errors.New("ratewarden: invalid option")
	// ErrClock reports a time outside the range the algorithms accept
	// (the Unix epoch to MaxTime).
	ErrClock = errors.New("ratewarden: time out of range")
	// ErrStoreFull is returned by a store that holds as many keys as it may
	// and refuses a new one (store/memory's WithRefuseWhenFull), while the keys
	// it holds keep their exact counts. The HTTP layer answers it as it does a
	// store failure under fail closed: 503 with Retry-After.
	ErrStoreFull = errors.New("ratewarden: store full")
	// ErrStoreClosed is returned by a store used after Close.
	ErrStoreClosed = errors.New("ratewarden: store closed")
	// ErrUnsupported reports an operation the store does not implement.
	ErrUnsupported = errors.New("ratewarden: store does not support this")
)
