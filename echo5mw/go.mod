module github.com/ratewarden/ratewarden/echo5mw

go 1.26.0

replace github.com/ratewarden/ratewarden => ..

require (
	github.com/labstack/echo/v5 v5.4.4
	github.com/ratewarden/ratewarden v0.1.0
	github.com/stretchr/testify v1.12.1
)

require (
	github.com/golang-jwt/jwt/v5 v5.3.1 // indirect
	go.yaml.in/yaml/v3 v3.0.6 // indirect
)
