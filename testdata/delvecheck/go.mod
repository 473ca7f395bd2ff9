module github.com/sframe-gen/sframe-gen/testdata/delvecheck

go 1.26.8

require (
	github.com/go-delve/delve v1.27.2
	github.com/sframe-gen/sframe-gen v0.0.0
)

replace github.com/sframe-gen/sframe-gen => ../..
