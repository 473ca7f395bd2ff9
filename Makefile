# sframe-gen: make run (build + run on a sample), make test (the tests in -short mode),
# make test-long (every test in full).
GO ?= go
BIN := bin/sframe-gen
SAMPLE ?= testdata/sample/hello-x86_64

.PHONY: all build run test test-long race vet fmt bench bench-stages pgo regen fuzz clean install uninstall

all: build

# CGO_ENABLED=0: pflag imports net, whose resolver would link the C library
# dynamically (1 ms more per start); sframe-gen needs neither. go build
# optimizes with the profile cmd/sframe-gen/default.pgo by itself (make pgo).
build:
	CGO_ENABLED=0 $(GO) build -o $(BIN) ./cmd/sframe-gen

# run: patch a copy of the sample program, show the new section, run it.
run: build
	@mkdir -p bin/sample
	cp $(SAMPLE) bin/sample/
	./$(BIN) -v bin/sample/$(notdir $(SAMPLE))
	./$(BIN) dump bin/sample/$(notdir $(SAMPLE))
	@echo "--- running the patched program:"
	./bin/sample/$(notdir $(SAMPLE))

# test: gofmt, go vet, and the tests in -short mode: a test that takes long
# (real build systems, damage and mutation runs, signal and hold-out runs,
# whole system libraries, many compilers) skips when testing.Short() says so,
# or runs on smaller inputs. test-long: every test in full (what .ci/run runs).
# testdata/testreport runs go test -json and prints each package's line, each
# skipped test with its reason, each failure's output, and a closing count.
# The delve cross-check is a module of its own (testdata/delvecheck), so that
# the library's go.mod does not require delve: test-long runs it (go downloads
# delve for it), make test needs nothing beyond go.mod's modules.
test: vet
	$(GO) run ./testdata/testreport -short -count=1 ./... ./testdata/testreport

test-long: vet
	cd testdata/delvecheck && $(GO) vet ./... && $(GO) test -count=1 ./...
	$(GO) run ./testdata/testreport -count=1 -timeout 30m ./... ./testdata/testreport

# race: every test of the -short suite under the race detector (which
# needs cgo, hence a C compiler): a new test, concurrent or not, is in it
# without naming it here (about 4 minutes of CPU). The packages are make
# test's: ./... (which passes over testdata/), testdata/testreport and the
# delvecheck module.
race:
	cd testdata/delvecheck && CGO_ENABLED=1 $(GO) test -count=1 -race -short ./...
	CGO_ENABLED=1 $(GO) test -count=1 -race -short -timeout 30m ./... ./testdata/testreport

vet:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	  if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./... ./testdata/testreport
	@# Generating a section builds on every system and word size; the file
	@# machinery (elfpatch/replace) is Linux only (docs/elfpatch.md).
	GOARCH=386 $(GO) vet ./...
	GOARCH=arm64 $(GO) vet ./...
	GOOS=darwin $(GO) vet ./cfi ./lower ./emit/... ./elfpatch/... .
	GOOS=windows $(GO) build ./cfi ./lower ./emit/... ./elfpatch/... .

# fuzz: every fuzz target for FUZZTIME each (default 1m).
FUZZTIME ?= 1m
fuzz:
	@for pkg in ./cfi ./emit ./emit/verify ./emit/unwind ./lower ./elfpatch ./cmd/sframe-gen . ; do \
	  for t in $$($(GO) test -list 'Fuzz.*' $$pkg | grep '^Fuzz'); do \
	    echo "== $$pkg $$t"; $(GO) test -run '^$$' -fuzz "^$$t\$$" -fuzztime $(FUZZTIME) -fuzzminimizetime 5s $$pkg || exit 1; \
	  done; \
	done

# bench: whole commands on the big binaries against readelf and cp, the
# batch form on a tree of shared libraries against cp -a, and PC lookup against
# libsframe (see docs/performance.md);
# bench-stages: the Go benchmarks of each pipeline stage (compare runs with benchstat).
bench:
	./testdata/bench.sh
	./testdata/bench-tree.sh
	./testdata/bench-lookup.sh

bench-stages:
	$(GO) test -run '^$$' -bench . -benchmem -count 6 ./cmd/sframe-gen

# pgo: the CPU profile go build optimizes sframe-gen with (profile-guided
# optimization, cmd/sframe-gen/default.pgo): the default command, --raw and
# -o, on the biggest .eh_frame at hand ($$SFRAME_BENCH_ELF, else rust's
# libLLVM.so), 100 runs each, collector off as in the command.
pgo:
	GOGC=off $(GO) test -run '^$$' -bench '^BenchmarkGenerate$$' -benchtime 100x -cpuprofile $(CURDIR)/cmd/sframe-gen/default.pgo ./cmd/sframe-gen
	rm -f sframe-gen.test

regen:
	./testdata/regen.sh

# install: the command, its man page and bash completion, and the build-system
# recipes of docs/integration.md (CMake module, debhelper add-on with its man
# page dh_sframe(1) made from its POD, RPM macros), under $(DESTDIR)$(PREFIX).
# With PREFIX=/usr the debhelper add-on and the RPM macros land where Debian's
# perl and rpm look; elsewhere see docs/integration.md. pod2man dates the page
# from SOURCE_DATE_EPOCH when set (dpkg-buildpackage sets it).
PREFIX ?= /usr/local
INSTALL ?= install
INSTALLED := bin/sframe-gen bin/dh_sframe share/man/man1/sframe-gen.1 share/man/man1/dh_sframe.1 \
	share/bash-completion/completions/sframe-gen share/sframe-gen/cmake/SFrameGen.cmake \
	share/perl5/Debian/Debhelper/Sequence/sframe.pm lib/rpm/macros.d/macros.sframe-gen \
	share/doc/sframe-gen/integration.md
install: build
	$(INSTALL) -D -m 755 $(BIN) $(DESTDIR)$(PREFIX)/bin/sframe-gen
	$(INSTALL) -D -m 755 docs/integration/dh_sframe $(DESTDIR)$(PREFIX)/bin/dh_sframe
	$(INSTALL) -D -m 644 docs/sframe-gen.1 $(DESTDIR)$(PREFIX)/share/man/man1/sframe-gen.1
	pod2man --section=1 --center=sframe-gen --release=sframe-gen --name=DH_SFRAME docs/integration/dh_sframe >$(DESTDIR)$(PREFIX)/share/man/man1/dh_sframe.1
	$(INSTALL) -D -m 644 docs/integration/sframe-gen.bash $(DESTDIR)$(PREFIX)/share/bash-completion/completions/sframe-gen
	$(INSTALL) -D -m 644 docs/integration/SFrameGen.cmake $(DESTDIR)$(PREFIX)/share/sframe-gen/cmake/SFrameGen.cmake
	$(INSTALL) -D -m 644 docs/integration/perl5/Debian/Debhelper/Sequence/sframe.pm $(DESTDIR)$(PREFIX)/share/perl5/Debian/Debhelper/Sequence/sframe.pm
	$(INSTALL) -D -m 644 docs/integration/macros.sframe-gen $(DESTDIR)$(PREFIX)/lib/rpm/macros.d/macros.sframe-gen
	$(INSTALL) -D -m 644 docs/integration.md $(DESTDIR)$(PREFIX)/share/doc/sframe-gen/integration.md

uninstall:
	rm -f $(addprefix $(DESTDIR)$(PREFIX)/,$(INSTALLED))

clean:
	rm -rf bin
