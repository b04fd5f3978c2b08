package echomw

import (
	"sync"

	"github.com/labstack/echo/v4"
)

// request is the keyfuncs.Request view of an echo.Context. echo.Context is an
// interface (two words), so views are pooled and passed by pointer: passing
// one as an interface then allocates nothing. The policy keeps no view after
// Handle returns.
type request struct{ c echo.Context }

var views = sync.Pool{New: func() any { return new(request) }}

func (v *request) RemoteAddr() string                { return v.c.Request().RemoteAddr }
func (v *request) Header(name string) string         { return v.c.Request().Header.Get(name) }
func (v *request) HeaderValues(name string) []string { return v.c.Request().Header.Values(name) }
func (v *request) Method() string                    { return v.c.Request().Method }
func (v *request) Path() string                      { return v.c.Request().URL.Path }
func (v *request) Route() string                     { return v.c.Path() }
