module github.com/ratewarden/ratewarden/examples

go 1.25.0

require github.com/ratewarden/ratewarden v0.0.0-00010101000000-000000000000

require (
	github.com/stretchr/testify v1.12.1
	go.yaml.in/yaml/v3 v3.0.5 // indirect
)

replace github.com/ratewarden/ratewarden => ..
