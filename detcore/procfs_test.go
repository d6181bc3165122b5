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
		"3 2 0:32768 / /proc rw - proc proc rw\n" +
		"4 2 0:32769 / /hermit-machine/x rw - tmpfs tmpfs rw\n" +
		"5 3 0:32768 /sys /proc/sys ro - proc proc rw\n"
	e := &Engine{}
	if got := string(normalizeMountinfo([]byte(in), e.files().vdevMinor)); got != want {
		t.Errorf("normalizeMountinfo:\n%s\nwant:\n%s", got, want)
	}
}

// TestNormalizeMaps: /proc/PID/maps shows the device and inode stat
// shows (virtual inodes in order of first sight, minors of filesystems
// without a device from 0x8000, block devices kept), the kernel's column
// for the path, and smaps' counter lines untouched.
func TestNormalizeMaps(t *testing.T) {
	in := "555555554000-555555555000 r--p 00000000 00:2a 1022                       /tmp/x/a b\n" +
		"555555555000-555555556000 r-xp 00001000 fe:01 393220                     /usr/bin/cat\n" +
		"Size:                  4 kB\n" +
		"7ffff7dd2000-7ffff7dd5000 rw-p 00000000 00:00 0 \n" +
		"7ffff7fc8000-7ffff7fca000 r-xp 00000000 00:00 0                          [vdso]\n" +
		"555555556000-555555557000 r--p 00002000 00:2a 1022                       /tmp/x/a b\n"
	want := "555555554000-555555555000 r--p 00000000 00:8000 1000                     /tmp/x/a b\n" +
		"555555555000-555555556000 r-xp 00001000 fe:01 1001                       /usr/bin/cat\n" +
		"Size:                  4 kB\n" +
		"7ffff7dd2000-7ffff7dd5000 rw-p 00000000 00:00 0 \n" +
		"7ffff7fc8000-7ffff7fca000 r-xp 00000000 00:00 0                          [vdso]\n" +
		"555555556000-555555557000 r--p 00002000 00:8000 1000                     /tmp/x/a b\n"
	e := &Engine{}
	if got := string(e.files().normalizeMaps([]byte(in))); got != want {
		t.Errorf("normalizeMaps:\n%s\nwant:\n%s", got, want)
	}
}
