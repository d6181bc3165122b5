package ptrace

import (
	"testing"
)

// TestHostsEntry: the guest's /etc/hosts gains a line for its host name
// only when the host's file does not name it already (in any column after
// the address, outside comments), on a line of its own.
func TestHostsEntry(t *testing.T) {
	tests := []struct {
		hosts string
		names bool
		added string
	}{
		{"127.0.0.1 localhost\n", false, "127.0.1.1\thermit\n"},
		{"127.0.0.1 localhost", false, "\n127.0.1.1\thermit\n"},
		{"", false, "127.0.1.1\thermit\n"},
		{"127.0.1.1\tbox.example hermit\n", true, ""},
		{"# 127.0.1.1 hermit\n10.0.0.1 hermitage\n", false, "127.0.1.1\thermit\n"},
	}
	for _, tc := range tests {
		if got := hostsNames(tc.hosts, "hermit"); got != tc.names {
			t.Errorf("hostsNames(%q) = %v, want %v", tc.hosts, got, tc.names)
		}
		if !tc.names {
			if got := hostsLine(tc.hosts, "hermit"); got != tc.added {
				t.Errorf("hostsLine(%q) = %q, want %q", tc.hosts, got, tc.added)
			}
		}
	}
}

// TestCPUMap: the node's cpumap as the kernel prints it for the CPUs
// the guest is told of.
func TestCPUMap(t *testing.T) {
	for n, want := range map[int]string{1: "1", 2: "3", 3: "7", 4: "f", 5: "1f", 8: "ff", 32: "ffffffff", 33: "1,ffffffff", 64: "ffffffff,ffffffff"} {
		if got := cpuMap(n); got != want {
			t.Errorf("cpuMap(%d) = %q, want %q", n, got, want)
		}
	}
}

// TestCPUInfoHidesRandom: with hideRandom, the flags line lacks rdrand
// and rdseed, and nothing else.
func TestCPUInfoHidesRandom(t *testing.T) {
	host := "processor\t: 0\nflags\t\t: fpu rdrand sse rdseed adx\n\nprocessor\t: 1\nflags\t\t: fpu rdrand sse rdseed adx\n"
	if got, want := cpuinfo(host, 1, true), "processor\t: 0\nflags\t\t: fpu sse adx\n\n"; got != want {
		t.Errorf("cpuinfo hiding: got %q, want %q", got, want)
	}
	if got, want := cpuinfo(host, 1, false), "processor\t: 0\nflags\t\t: fpu rdrand sse rdseed adx\n\n"; got != want {
		t.Errorf("cpuinfo: got %q, want %q", got, want)
	}
}
