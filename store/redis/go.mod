module github.com/ratewarden/ratewarden/store/redis

go 1.25.0

require github.com/ratewarden/ratewarden v0.0.0-00010101000000-000000000000

replace github.com/ratewarden/ratewarden => ../..
