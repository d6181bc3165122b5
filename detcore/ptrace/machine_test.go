package ptrace

import "testing"

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
