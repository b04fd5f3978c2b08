module github.com/ratewarden/ratewarden

go 1.25.0

require (
	github.com/golang-jwt/jwt/v5 v5.3.1 // indirect
	github.com/stretchr/testify v1.12.1 // indirect
)
