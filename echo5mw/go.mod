module github.com/ratewarden/ratewarden/echo5mw

go 1.26.0

replace github.com/ratewarden/ratewarden => ..

replace github.com/ratewarden/ratewarden/rules => ../rules

require (
	github.com/labstack/echo/v5 v5.4.4 // indirect
	github.com/ratewarden/ratewarden v0.1.0 // indirect
)
