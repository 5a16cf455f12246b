package conf

import "testing"

func TestIntegerRanges(t *testing.T) {
	r, err := ParseIntegerRanges("0-2, 5,9-")
	if err != nil {
		t.Fatal(err)
	}
	for n, want := range map[int]bool{0: true, 2: true, 3: false, 5: true, 6: false, 8: false, 9: true, 1000: true} {
		if r.Contains(n) != want {
			t.Errorf("Contains(%d) = %v", n, !want)
		}
	}
	if r, _ := ParseIntegerRanges("-3"); !r.Contains(0) || !r.Contains(3) || r.Contains(4) {
		t.Error("-3 is 0 to 3")
	}
	if r, _ := ParseIntegerRanges(""); r.Contains(0) {
		t.Error("the empty string is the empty set")
	}
	if r, _ := ParseIntegerRanges("-"); !r.Contains(0) || !r.Contains(1<<30) {
		t.Error("- is every number")
	}
	for _, bad := range []string{"x", "3-1", "1-y", "2--3"} {
		if _, err := ParseIntegerRanges(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}
