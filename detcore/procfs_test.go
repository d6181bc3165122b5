package detcore

import "testing"

// TestNormalizeMountinfo: mount ids, parent ids, the minor numbers of
// filesystems without a device and hermit's machine directory come out
// the same whatever the host numbered them.
func TestNormalizeMountinfo(t *testing.T) {
	in := "310 250 8:1 / / rw - ext4 /dev/vda rw\n" +
		"311 310 0:45 / /proc rw - proc proc rw\n" +
		"312 310 0:61 / /tmp/hermit-machine-8812/x rw - tmpfs tmpfs rw\n" +
		"313 311 0:45 /sys /proc/sys ro - proc proc rw\n"
	want := "2 1 8:1 / / rw - ext4 /dev/vda rw\n" +
		"3 2 0:20 / /proc rw - proc proc rw\n" +
		"4 2 0:21 / /hermit-machine/x rw - tmpfs tmpfs rw\n" +
		"5 3 0:20 /sys /proc/sys ro - proc proc rw\n"
	if got := string(normalizeMountinfo([]byte(in))); got != want {
		t.Errorf("normalizeMountinfo:\n%s\nwant:\n%s", got, want)
	}
}
