package ptrace

import (
	"os"
	"path/filepath"
	"testing"
)

// TestScanTCP reads a /proc/net/tcp6 table as the kernel prints it: each
// 32-bit word of an address in host order, an IPv4 peer mapped.
func TestScanTCP(t *testing.T) {
	table := `  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 00000000000000000000000000000000:0016 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1111 1 0000000000000000 100 0 0 10 0
   1: 00000000000000000000000001000000:9C40 00000000000000000000000001000000:D431 01 00000000:00000000 00:00000000 00000000     0        0 2222 1 0000000000000000 20 4 30 10 -1
   2: 0000000000000000FFFF00000100007F:1F90 0000000000000000FFFF00000100007F:A000 01 00000000:00000000 00:00000000 00000000     0        0 3333 1 0000000000000000 20 4 30 10 -1
`
	path := filepath.Join(t.TempDir(), "tcp6")
	if err := os.WriteFile(path, []byte(table), 0o600); err != nil {
		t.Fatal(err)
	}
	v6 := [16]byte{15: 1}
	v4 := [16]byte{10: 0xff, 11: 0xff, 12: 127, 15: 1}
	cases := []struct {
		name  string
		la    [16]byte
		lport int
		ra    [16]byte
		rport int
		ino   uint64
		found bool
	}{
		{"::1 to ::1", v6, 0x9c40, v6, 0xd431, 2222, true},
		{"mapped 127.0.0.1", v4, 8080, v4, 0xa000, 3333, true},
		{"ports swapped", v6, 0xd431, v6, 0x9c40, 0, false},
		{"another address", v4, 0x9c40, v6, 0xd431, 0, false},
	}
	for _, c := range cases {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		ino, found := scanTCP(f, c.la, c.lport, c.ra, c.rport)
		f.Close()
		if ino != c.ino || found != c.found {
			t.Errorf("%s: inode %d, %v; want %d, %v", c.name, ino, found, c.ino, c.found)
		}
	}
	if a, p, ok := procAddr("0100007F:1F90"); !ok || a != v4 || p != 8080 || !isLoopback(a) {
		t.Errorf(`procAddr("0100007F:1F90") = %v, %d, %v; want 127.0.0.1 mapped, 8080`, a, p, ok)
	}
	if a, _, ok := procAddr("0101A8C0:0050"); !ok || isLoopback(a) {
		t.Errorf("192.168.1.1 is no loopback address (%v, %v)", a, ok)
	}
}
