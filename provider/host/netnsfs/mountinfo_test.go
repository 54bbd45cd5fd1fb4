package netnsfs

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseMount(t *testing.T) {
	for _, tc := range []struct {
		line string
		want mount
	}{
		{"68 67 0:4 net:[4026532245] /run/netns/tsl.a rw - nsfs nsfs rw",
			mount{id: 68, parent: 67, point: "/run/netns/tsl.a", fstype: "nsfs"}},
		{`44 27 254:0 /run/netns /run/netns rw,relatime shared:1 master:2 - ext4 /dev/vda rw`,
			mount{id: 44, parent: 27, point: "/run/netns", fstype: "ext4"}},
		{`70 44 0:4 net:[1] /run/netns/a\040b\134c rw - nsfs nsfs rw`,
			mount{id: 70, parent: 44, point: `/run/netns/a b\c`, fstype: "nsfs"}},
	} {
		got, err := parseMount(tc.line)
		if err != nil {
			t.Errorf("parseMount(%q): %v", tc.line, err)
			continue
		}
		if d := cmp.Diff(tc.want, got, cmp.AllowUnexported(mount{})); d != "" {
			t.Errorf("parseMount(%q) (-want +got):\n%s", tc.line, d)
		}
	}
	for _, bad := range []string{"", "1 2 3", "x 2 0:4 / /a rw - nsfs nsfs rw", "1 2 0:4 / /a rw nsfs"} {
		if _, err := parseMount(bad); err == nil {
			t.Errorf("parseMount(%q): nil error, want one", bad)
		}
	}
}

// TestHiddenOf: at one mount point in Dir, a mount on the mount on top
// at Dir is reached, and so is one stacked on it; one on a mount under
// the top (the directory a later bind covers) is hidden, and so is one
// stacked on that.
func TestHiddenOf(t *testing.T) {
	const top = 44
	at := []mount{
		{id: 42, parent: 27}, // on /, under the bind 44
		{id: 50, parent: 42}, // stacked on the hidden one
		{id: 60, parent: top},
		{id: 61, parent: 60},
	}
	var got []uint64
	for _, m := range hiddenOf(at, top) {
		got = append(got, m.id)
	}
	if d := cmp.Diff([]uint64{42, 50}, got); d != "" {
		t.Errorf("hidden mount IDs (-want +got):\n%s", d)
	}
}
