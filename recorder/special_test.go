package recorder

import (
	"bytes"
	"encoding/binary"
	"reflect"
	"strings"
	"testing"

	"github.com/hermitdbg/hermit/detcore/abi"
	"github.com/hermitdbg/hermit/detcore/ptrace"
	"github.com/hermitdbg/hermit/trace"
)

func TestSockoptOutputs(t *testing.T) {
	counters := bytes.Repeat([]byte{9}, 64)
	replace := make([]byte, 96)
	binary.LittleEndian.PutUint32(replace[iptNumCounters:], 4)
	binary.LittleEndian.PutUint64(replace[iptCounters:], 0x5000)
	value := bytes.Repeat([]byte{3}, 10000)
	mem := fakeMem{
		0x1000: replace,
		0x5000: counters,
		0x6000: value,
		0x9000: le32s(10000),
	}
	got := outputs(abi.SYS_SETSOCKOPT, [6]uint64{3, solIP, iptSoSetReplace, 0x1000, 96}, 0, mem.read)
	if want := []trace.MemWrite{{Addr: 0x5000, Data: counters}}; !reflect.DeepEqual(got, want) {
		t.Errorf("IPT_SO_SET_REPLACE: outputs %+v, want the old counters", got)
	}
	if got := outputs(abi.SYS_SETSOCKOPT, [6]uint64{3, 1, 2, 0x1000, 4}, 0, mem.read); got != nil {
		t.Errorf("SO_REUSEADDR: outputs %+v, want none", got)
	}
	got = outputs(abi.SYS_GETSOCKOPT, [6]uint64{3, solIP, 65, 0x6000, 0x9000}, 0, mem.read)
	if len(got) != 2 || len(got[1].Data) != 10000 {
		t.Errorf("IPT_SO_GET_ENTRIES of 10000 bytes: outputs %+v", got)
	}
	capHdr := le32s(0x20080522, 0)
	mem = fakeMem{0x1000: capHdr, 0x2000: make([]byte, 24)}
	if got := outputs(abi.SYS_CAPGET, [6]uint64{0x1000, 0x2000}, 0, mem.read); len(got) != 2 || len(got[1].Data) != 24 {
		t.Errorf("capget v3: outputs %+v, want the header and two sets", got)
	}
	if got := outputs(abi.SYS_CAPGET, [6]uint64{0x1000, 0}, -abi.EINVAL, mem.read); len(got) != 1 || got[0].Addr != 0x1000 {
		t.Errorf("capget probe: outputs %+v, want the header the kernel corrected", got)
	}
}

// cstr is a NUL-terminated string in guest memory.
func cstr(s string) []byte { return append([]byte(s), 0) }

// TestRecorderSpecialCalls: what the recorder keeps of the calls whose
// replay depends on their arguments.
func TestRecorderSpecialCalls(t *testing.T) {
	h := &fakeHost{
		classes: map[int]ptrace.FdClass{5: ptrace.FdExternal},
		paths:   map[int]string{5: "/proc/2/mem"},
		mem: fakeMem{
			0x1000: cstr("/etc"), 0x1100: cstr("/mnt/etc"), 0x1200: cstr("tmpfs"), 0x1300: cstr("/mnt/tmp"),
			0x1400: cstr("ext4"), 0x1500: cstr("/dev/sda1"), 0x1600: cstr("/mnt/disk"), 0x1700: make([]byte, 64),
		},
		cwd: "/work",
	}
	var warnings []string
	evs := record(t, h, func(r *Recorder) {
		r.Warn = func(msg string) { warnings = append(warnings, msg) }
		call(t, r, abi.SYS_MOUNT, [6]uint64{0, 0x1300, 0x1200}, 0)                // tmpfs: made again
		call(t, r, abi.SYS_MOUNT, [6]uint64{0x1000, 0x1100, 0, msBind}, 0)        // bind of /etc: emulated
		call(t, r, abi.SYS_MOUNT, [6]uint64{0x1500, 0x1600, 0x1400}, -abi.ENOENT) // a device: emulated
		call(t, r, abi.SYS_UMOUNT2, [6]uint64{0x1100}, 0)                         // of the emulated bind: emulated
		call(t, r, abi.SYS_UMOUNT2, [6]uint64{0x1300}, 0)                         // of the tmpfs: made again
		call(t, r, abi.SYS_FSOPEN, [6]uint64{0x1400}, 3)                          // refused
		call(t, r, abi.SYS_FSOPEN, [6]uint64{0x1200}, 3)                          // made again
		call(t, r, abi.SYS_PRCTL, [6]uint64{prCapbsetRead, 21}, 1)                // asked of the host
		call(t, r, abi.SYS_PRCTL, [6]uint64{prCapbsetDrop, 22}, 0)                // forced
		call(t, r, abi.SYS_PRCTL, [6]uint64{15, 0x1700}, 0)                       // PR_SET_NAME: nothing
		call(t, r, abi.SYS_MREMAP, [6]uint64{0x7000, 4096, 8192, mremapMaymove}, 0x9000)
		call(t, r, abi.SYS_MREMAP, [6]uint64{0x7000, 4096, 8192, mremapMaymove}, 0x7000)
		call(t, r, abi.SYS_MREMAP, [6]uint64{0x7000, 4096, 8192, mremapMaymove | mremapFixed, 0xa000}, 0xa000)
		call(t, r, abi.SYS_PREAD64, [6]uint64{5, 0x1700, 8, 0x400000}, 8) // /proc/PID/mem: run again
	})
	var got []string
	for _, ev := range results(evs) {
		got = append(got, abi.SyscallName(int(ev.Sysno))+" "+[]string{"emulate", "force", "place", "socket", "stand-in", "refused"}[ev.Digest])
	}
	want := []string{"mount emulate", "mount emulate", "umount2 emulate", "fsopen refused", "prctl emulate", "prctl force", "mremap place"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("kept\n%q\nwant\n%q", got, want)
	}
	if len(warnings) != 1 || !strings.HasPrefix(warnings[0], `fsopen("ext4"): `) {
		t.Errorf("warnings %q, want one naming fsopen", warnings)
	}
}
