module github.com/sframe-gen/sframe-gen

go 1.26.8

require (
	github.com/ianlancetaylor/demangle v0.0.0-20260724033716-83e58baca724
	github.com/spf13/pflag v1.0.10
	golang.org/x/sys v0.50.0
)
