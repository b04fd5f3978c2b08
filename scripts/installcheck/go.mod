module github.com/ratewarden/ratewarden/scripts/installcheck

go 1.26.0

require golang.org/x/mod v0.38.0
