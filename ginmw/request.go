package ginmw

import (
	"github.com/gin-gonic/gin"
)

// request is the keyfuncs.Request view of a *gin.Context: one pointer, so
// passing it as an interface does not allocate.
type request struct{ c *gin.Context }

func (v request) RemoteAddr() string                { return v.c.Request.RemoteAddr }
func (v request) Header(name string) string         { return v.c.Request.Header.Get(name) }
func (v request) HeaderValues(name string) []string { return v.c.Request.Header.Values(name) }
func (v request) Method() string                    { return v.c.Request.Method }
func (v request) Path() string                      { return v.c.Request.URL.Path }
func (v request) Route() string                     { return v.c.FullPath() }
