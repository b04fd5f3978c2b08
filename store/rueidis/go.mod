module github.com/ratewarden/ratewarden/store/rueidis

go 1.26.0

require (
	github.com/ratewarden/ratewarden v0.1.0
	github.com/redis/rueidis v1.0.79
	github.com/stretchr/testify v1.12.1
)

require (
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	golang.org/x/sys v0.47.0 // indirect
)

replace github.com/ratewarden/ratewarden => ../..
