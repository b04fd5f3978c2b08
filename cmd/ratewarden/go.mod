module github.com/ratewarden/ratewarden/cmd/ratewarden

go 1.26.0

require (
	github.com/ratewarden/ratewarden v0.1.0
	github.com/ratewarden/ratewarden/rules v0.1.0
	github.com/ratewarden/ratewarden/store/redis v0.1.0
	github.com/redis/go-redis/v9 v9.23.0
	github.com/stretchr/testify v1.12.1
)

require (
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/fsnotify/fsnotify v1.10.1 // indirect
	go.uber.org/atomic v1.12.0 // indirect
	go.yaml.in/yaml/v3 v3.0.6 // indirect
	go.yaml.in/yaml/v4 v4.0.0 // indirect
	golang.org/x/sys v0.48.0 // indirect
)
