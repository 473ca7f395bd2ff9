# sframe-gen: make run (build + run on a sample), make test (all tests).
GO ?= go
BIN := bin/sframe-gen
SAMPLE ?= testdata/sample/hello-x86_64

.PHONY: all build run test vet fmt bench regen fuzz clean

all: build

build:
	$(GO) build -o $(BIN) ./cmd/sframe-gen

run: build
	./scripts/run-sample.sh $(BIN) $(SAMPLE)

test: vet
	$(GO) test -count=1 ./...

vet:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	  if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

fuzz:
	./scripts/fuzz.sh $(FUZZTIME)

bench:
	./scripts/bench.sh

regen:
	./testdata/regen.sh

clean:
	rm -rf bin
