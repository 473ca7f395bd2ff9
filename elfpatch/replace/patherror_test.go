package replace

import (
	"errors"
	"fmt"
	"io/fs"
	"testing"
)

// TestUnwrapPath checks that UnwrapPath takes the error out of an
// *fs.PathError, also one wrapped by fmt.Errorf, and leaves any other
// error (and nil) as it is.
func TestUnwrapPath(t *testing.T) {
	inner := errors.New("no space left on device")
	pe := &fs.PathError{Op: "write", Path: "/x/y", Err: inner}
	other := errors.New("other")
	for _, c := range []struct {
		name    string
		in, out error
	}{
		{"path error", pe, inner},
		{"wrapped path error", fmt.Errorf("writing: %w", pe), inner},
		{"other error", other, other},
		{"nil", nil, nil},
	} {
		if got := UnwrapPath(c.in); got != c.out {
			t.Errorf("%s: UnwrapPath(%v) = %v, want %v", c.name, c.in, got, c.out)
		}
	}
}
