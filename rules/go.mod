module github.com/ratewarden/ratewarden/rules

go 1.26.0

require (
	github.com/fsnotify/fsnotify v1.10.1
	github.com/ratewarden/ratewarden v0.1.0
	github.com/stretchr/testify v1.12.1
	go.yaml.in/yaml/v4 v4.0.0
)

require (
	github.com/golang-jwt/jwt/v5 v5.3.1 // indirect
	go.yaml.in/yaml/v3 v3.0.6 // indirect
	golang.org/x/sys v0.13.0 // indirect
)

replace github.com/ratewarden/ratewarden => ../
