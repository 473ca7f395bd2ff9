#!/usr/bin/env bash
# needs: cargo readelf
. "$REPO/testdata/integration/common/lib.sh"
cd "$WORK"
cp -r "$REPO/testdata/integration/cargo" demo && cd demo
# The recipe: cargo has no post-build hook; run the step after the build.
cargo build --release --offline -q
sframe-gen -q target/release/sframe-demo
check_sframe target/release/sframe-demo
# A second run finds it up to date and leaves the file alone.
before=$(stat -c %Y.%s target/release/sframe-demo)
sleep 1.1
sframe-gen -q target/release/sframe-demo
[ "$(stat -c %Y.%s target/release/sframe-demo)" = "$before" ] || fail "second run rewrote the file"
echo "cargo: ok"
