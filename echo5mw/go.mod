module github.com/ratewarden/ratewarden/echo5mw

go 1.26.0

replace github.com/ratewarden/ratewarden => ..

replace github.com/ratewarden/ratewarden/rules => ../rules

require (
	github.com/labstack/echo/v5 v5.4.4
	github.com/ratewarden/ratewarden v0.1.0
	github.com/ratewarden/ratewarden/rules v0.1.0
	github.com/stretchr/testify v1.12.1
)

require (
	github.com/fsnotify/fsnotify v1.10.1 // indirect
	github.com/golang-jwt/jwt/v5 v5.3.1 // indirect
	go.yaml.in/yaml/v3 v3.0.6 // indirect
	go.yaml.in/yaml/v4 v4.0.0 // indirect
	golang.org/x/sys v0.13.0 // indirect
)
