package elfread

import (
	"bytes"
	"encoding/json"
	"testing"
)

// TestDisplayName checks that names are printed as they are only when
// they are printable UTF-8.
func TestDisplayName(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"libfoo.so", "libfoo.so"},
		{"dir/with space", "dir/with space"},
		{"naïve", "naïve"},
		{"a\nb", `"a\nb"`},
		{"\x1b[31mred", `"\x1b[31mred"`},
		{"\xff.o", `"\xff.o"`},
		{"\u009bcsi", `"\u009bcsi"`},
	} {
		if got := DisplayName(tc.in); got != tc.want {
			t.Errorf("DisplayName(%q) = %s, want %s", tc.in, got, tc.want)
		}
	}
}

// TestJSONWriter checks that C1 control characters are escaped, and
// that what is written reads back as the same string.
func TestJSONWriter(t *testing.T) {
	var buf bytes.Buffer
	name := "a\u009b2Jb\u0085é"
	if err := json.NewEncoder(JSONWriter{&buf}).Encode(name); err != nil {
		t.Fatal(err)
	}
	if want := `"a\u009b2Jb\u0085é"` + "\n"; buf.String() != want {
		t.Errorf("written %q, want %q", buf.String(), want)
	}
	var back string
	if err := json.Unmarshal(buf.Bytes(), &back); err != nil || back != name {
		t.Errorf("read back %q, %v; want %q", back, err, name)
	}
}
