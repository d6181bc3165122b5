package recorder

import (
	"bytes"
	"encoding/binary"
	"reflect"
	"testing"

	"github.com/hermitdbg/hermit/detcore/abi"
	"github.com/hermitdbg/hermit/trace"
)

func le32s(vs ...uint32) []byte {
	b := make([]byte, 4*len(vs))
	for i, v := range vs {
		binary.LittleEndian.PutUint32(b[4*i:], v)
	}
	return b
}

func TestIoctlOutputs(t *testing.T) {
	big := bytes.Repeat([]byte{7}, 128)
	mem := fakeMem{
		0x1000: big,
		0x2000: append(le32s(80, 0), le64s(0x1000)...), // struct ifconf: 80 bytes at 0x1000
		0x3000: le64s(1, 0x1000, 3),                    // SIOCGIFBR: BRCTL_GET_BRIDGES, 3 ints at 0x1000
	}
	cases := []struct {
		name string
		req  uint64
		arg  uint64
		want []trace.MemWrite
	}{
		{"TCGETS: the kernel's termios", 0x5401, 0x1000, []trace.MemWrite{{Addr: 0x1000, Data: big[:36]}}},
		{"TIOCOUTQ", 0x5411, 0x1000, []trace.MemWrite{{Addr: 0x1000, Data: big[:4]}}},
		{"TCGETS2: _IOR", 0x802c542a, 0x1000, []trace.MemWrite{{Addr: 0x1000, Data: big[:44]}}},
		{"SIOCGIFFLAGS: struct ifreq", 0x8913, 0x1000, []trace.MemWrite{{Addr: 0x1000, Data: big[:40]}}},
		{"SIOCGIWNAME: struct iwreq", 0x8b01, 0x1000, []trace.MemWrite{{Addr: 0x1000, Data: big[:32]}}},
		{"SIOCGIFCONF: the struct and its buffer", 0x8912, 0x2000, []trace.MemWrite{
			{Addr: 0x2000, Data: mem[0x2000]}, {Addr: 0x1000, Data: big[:80]}}},
		{"SIOCGIFBR: the bridge indices", 0x8940, 0x3000, []trace.MemWrite{{Addr: 0x1000, Data: big[:12]}}},
		{"_IOW: nothing", 0x40086602, 0x1000, nil},
		{"TCSETS: nothing", 0x5402, 0x1000, nil},
	}
	for _, c := range cases {
		if got := outputs(abi.SYS_IOCTL, [6]uint64{0, c.req, c.arg}, 0, mem.read); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: outputs %+v, want %+v", c.name, got, c.want)
		}
	}
}
