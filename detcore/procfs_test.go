package detcore

import "testing"

// TestNormalizeMountinfo: mount ids, parent ids and the minor numbers of
// filesystems without a device come out the same whatever the host
// numbered them.
func TestNormalizeMountinfo(t *testing.T) {
	in := "310 250 8:1 / / rw - ext4 /dev/vda rw\n" +
		"311 310 0:45 / /proc rw - proc proc rw\n" +
		"312 310 0:61 /%proc%cpuinfo /proc/cpuinfo rw - tmpfs tmpfs rw\n" +
		"313 311 0:45 /sys /proc/sys ro - proc proc rw\n"
	want := "2 1 8:1 / / rw - ext4 /dev/vda rw\n" +
		"3 2 0:32768 / /proc rw - proc proc rw\n" +
		"4 2 0:32769 /%proc%cpuinfo /proc/cpuinfo rw - tmpfs tmpfs rw\n" +
		"5 3 0:32768 /sys /proc/sys ro - proc proc rw\n"
	e := &Engine{}
	if got := string(normalizeMountinfo([]byte(in), e.files().vdevMinor)); got != want {
		t.Errorf("normalizeMountinfo:\n%s\nwant:\n%s", got, want)
	}
}

// TestNormalizeMaps: /proc/PID/maps shows the device and inode stat
// shows (virtual inodes in order of first sight, minors of filesystems
// without a device from 0x8000, block devices kept), the kernel's column
// for the path, and smaps' counters of the mapping itself untouched.
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
	if got := string(e.files().normalizeMaps([]byte(in), false)); got != want {
		t.Errorf("normalizeMaps:\n%s\nwant:\n%s", got, want)
	}
}

// TestSmapsCounters: smaps' counters of resident pages read 0 kB,
// smaps_rollup's totals are status's, the mapping's own sizes and flags
// are kept, and statm's resident and shared pages are status's.
func TestSmapsCounters(t *testing.T) {
	in := "7ffff7dd2000-7ffff7dd5000 rw-p 00000000 00:00 0 \n" +
		"Size:                 12 kB\n" +
		"KernelPageSize:        4 kB\n" +
		"Rss:                   8 kB\n" +
		"Pss:                   3 kB\n" +
		"Anonymous:             8 kB\n" +
		"THPeligible:           0\n" +
		"VmFlags: rd wr mr mw me ac \n"
	want := "7ffff7dd2000-7ffff7dd5000 rw-p 00000000 00:00 0 \n" +
		"Size:                 12 kB\n" +
		"KernelPageSize:        4 kB\n" +
		"Rss:                   0 kB\n" +
		"Pss:                   0 kB\n" +
		"Anonymous:             0 kB\n" +
		"THPeligible:           0\n" +
		"VmFlags: rd wr mr mw me ac \n"
	e := &Engine{}
	if got := string(e.files().normalizeMaps([]byte(in), false)); got != want {
		t.Errorf("smaps:\n%s\nwant:\n%s", got, want)
	}
	rollup := "555555554000-7ffffffff000 ---p 00000000 00:00 0                          [rollup]\nRss:                 426 kB\nPss:                 417 kB\nPss_Dirty:            84 kB\nAnonymous:            84 kB\n"
	wantRollup := "555555554000-7ffffffff000 ---p 00000000 00:00 0                          [rollup]\nRss:                1024 kB\nPss:                1024 kB\nPss_Dirty:             0 kB\nAnonymous:           512 kB\n"
	if got := string(e.files().normalizeMaps([]byte(rollup), true)); got != wantRollup {
		t.Errorf("smaps_rollup:\n%s\nwant:\n%s", got, wantRollup)
	}
	if got, want := string(normalizeStatm([]byte("770 107 92 5 0 123 0\n"))), "770 256 128 5 0 123 0\n"; got != want {
		t.Errorf("statm: %q, want %q", got, want)
	}
}

// TestZeroNumbers: a host statistics file reads with its lines, every
// number 0 with one blank before it, the same whatever the host's numbers.
func TestZeroNumbers(t *testing.T) {
	for _, tc := range []struct{ host, want string }{
		{"Node 0, zone      DMA      1      1      0\nNode 0, zone    DMA32   1240     37  12345\n",
			"Node 0, zone      DMA 0 0 0\nNode 0, zone    DMA0 0 0 0\n"},
		{"  8:       1234          0   IO-APIC    8-edge      rtc0\n", " 0: 0 0   IO-APIC 0-edge      rtc0\n"},
		{"1234\t0\t9223372036854775807\n", "0\t0\t0\n"},
	} {
		if got := string(zeroNumbers([]byte(tc.host))); got != tc.want {
			t.Errorf("zeroNumbers(%q) = %q, want %q", tc.host, got, tc.want)
		}
	}
	a := zeroNumbers([]byte("cpu0 1 22 333\ncpu1 4444 5 6\n"))
	b := zeroNumbers([]byte("cpu0 9 9 9\ncpu1 9 9 9\n"))
	if string(a) != string(b) {
		t.Errorf("the same layout with other numbers reads %q and %q", a, b)
	}
}
