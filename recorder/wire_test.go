package recorder

import (
	"encoding/binary"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hermitdbg/hermit/detcore"
	"github.com/hermitdbg/hermit/detcore/abi"
	"github.com/hermitdbg/hermit/trace"
)

func TestErrorCodes(t *testing.T) {
	for _, err := range []error{nil, detcore.Errno(abi.ENOENT), detcore.ErrNotEmulated, errors.New("boom")} {
		res, msg := errorCode(err)
		got := ErrorOf(res, msg)
		if (err == nil) != (got == nil) || err != nil && got.Error() != err.Error() {
			t.Errorf("%v encodes as %d %q and decodes as %v", err, res, msg, got)
		}
	}
	res, msg := errorCode(detcore.ErrGone)
	if got := ErrorOf(res, msg); !errors.Is(got, detcore.ErrGone) {
		t.Errorf("ErrGone decodes as %v", got)
	}
}

func TestPollRoundTrip(t *testing.T) {
	for _, n := range []int{0, 1, 5, 62, 63, 200} {
		ready := make([]bool, n)
		for i := range ready {
			ready[i] = i%3 == 1
		}
		res, mem := EncodePoll(ready)
		if got := DecodePoll(n, res, mem); !reflect.DeepEqual(got, ready) {
			t.Errorf("%d descriptors: %v decodes as %v", n, ready, got)
		}
	}
}

func TestDirRoundTrip(t *testing.T) {
	ents := []detcore.DirEntry{
		{Name: "a", Type: 8, ID: detcore.FileID{Dev: 1, Ino: 2, Btime: 3, BtimeKnown: true}},
		{Name: "", Type: 4, ID: detcore.FileID{Dev: 5, Ino: 6}},
		{Name: "long name with spaces", Type: 10},
	}
	got, err := DecodeDir(EncodeDir(ents))
	if err != nil || !reflect.DeepEqual(got, ents) {
		t.Errorf("entries decode as %+v, %v", got, err)
	}
	if _, err := DecodeDir(EncodeDir(ents)[:10]); err == nil {
		t.Error("a cut listing decodes without error")
	}
}

func TestArgs(t *testing.T) {
	a := [6]uint64{1, 2, 3, 1 << 63, 5, 6}
	if got, ok := DecodeArgs(EncodeArgs(a)); !ok || got != a {
		t.Errorf("args decode as %v", got)
	}
	b := a
	b[5]++
	if ArgDigest(abi.SYS_MMAP, a) == ArgDigest(abi.SYS_MMAP, b) {
		t.Error("different arguments have the same digest")
	}
	// access takes two: what the registers past them hold is no part of
	// the call.
	c := a
	c[2], c[3] = 0x56e900000000, 7
	if ArgDigest(abi.SYS_ACCESS, a) != ArgDigest(abi.SYS_ACCESS, c) {
		t.Error("access's digest depends on registers past its two arguments")
	}
	c[1]++
	if ArgDigest(abi.SYS_ACCESS, a) == ArgDigest(abi.SYS_ACCESS, c) {
		t.Error("access's digest does not depend on its second argument")
	}
}

// fakeMem is guest memory for outputs.
type fakeMem map[uint64][]byte

func (m fakeMem) read(addr uint64, b []byte) error {
	for base, data := range m {
		if addr >= base && addr+uint64(len(b)) <= base+uint64(len(data)) {
			copy(b, data[addr-base:])
			return nil
		}
	}
	return errors.New("unmapped")
}

func le64s(vs ...uint64) []byte {
	b := make([]byte, 8*len(vs))
	for i, v := range vs {
		binary.LittleEndian.PutUint64(b[8*i:], v)
	}
	return b
}

func TestOutputs(t *testing.T) {
	mem := fakeMem{
		0x1000: []byte("hello world"),
		0x2000: le64s(0x1000, 5, 0x3000, 100), // two iovecs
		0x3000: []byte("ABCDEFGH"),
		0x4000: {16, 0, 0, 0}, // socklen_t
		0x5000: make([]byte, 16),
	}
	cases := []struct {
		name string
		nr   int
		args [6]uint64
		res  int64
		want []trace.MemWrite
	}{
		{"read", abi.SYS_READ, [6]uint64{3, 0x1000, 64}, 5, []trace.MemWrite{{Addr: 0x1000, Data: []byte("hello")}}},
		{"read error", abi.SYS_READ, [6]uint64{3, 0x1000, 64}, -11, nil},
		{"readv", abi.SYS_READV, [6]uint64{3, 0x2000, 2}, 8, []trace.MemWrite{
			{Addr: 0x1000, Data: []byte("hello")}, {Addr: 0x3000, Data: []byte("ABC")}}},
		{"getsockname", abi.SYS_GETSOCKNAME, [6]uint64{3, 0x5000, 0x4000}, 0, []trace.MemWrite{
			{Addr: 0x4000, Data: []byte{16, 0, 0, 0}}, {Addr: 0x5000, Data: make([]byte, 16)}}},
		{"ioctl TIOCGWINSZ", abi.SYS_IOCTL, [6]uint64{0, 0x5413, 0x3000}, 0, []trace.MemWrite{{Addr: 0x3000, Data: []byte("ABCDEFGH")}}},
		{"epoll_wait", abi.SYS_EPOLL_WAIT, [6]uint64{4, 0x1000, 8, 0}, 0, nil},
		{"readlink", abi.SYS_READLINK, [6]uint64{0x9999, 0x3000, 64}, 3, []trace.MemWrite{{Addr: 0x3000, Data: []byte("ABC")}}},
	}
	for _, c := range cases {
		if got := outputs(c.nr, c.args, c.res, mem.read); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: outputs %+v, want %+v", c.name, got, c.want)
		}
	}
}

func TestIoctlSize(t *testing.T) {
	for req, want := range map[uint64]int64{0x5401: 36, 0x5413: 8, 0x541b: 4, 0x80086601: 8, 0x40086602: 0, 0x5402: 0} {
		if got := ioctlSize(req); got != want {
			t.Errorf("ioctlSize(%#x) = %d, want %d", req, got, want)
		}
	}
}

func TestSettingsRoundTrip(t *testing.T) {
	// What this hermit records.
	s := Settings{Path: "/bin/x", Seed: 7, Timeslice: 3, Mtimes: []string{"/usr/", "/etc/"}, TrapTSC: true, CPUs: 3, SignalAnswers: true, FastWriteDigests: true, SignalTaken: true, SigWokenFutex: true, CallOutputs: true, InterruptedTimeLeft: true, TimerOverruns: true, TSCSites: true}
	got, err := ParseSettings(s.Flags())
	if err != nil || !reflect.DeepEqual(got, s) {
		t.Errorf("settings decode as %+v, %v; want %+v", got, err, s)
	}
	// A trace from before --num-cpus told its guest 4.
	f := s.Flags()
	delete(f, FlagCPUs)
	if got, err := ParseSettings(f); err != nil || got.CPUs != 4 {
		t.Errorf("settings without num-cpus decode with %d CPUs, %v; want 4", got.CPUs, err)
	}
	for _, bad := range []string{"0", "65", "x", ""} {
		f[FlagCPUs] = bad
		if _, err := ParseSettings(f); err == nil || !strings.Contains(err.Error(), "num-cpus") {
			t.Errorf("num-cpus %q: %v, want an error naming the flag", bad, err)
		}
	}
	f = s.Flags()
	delete(f, FlagSeed)
	if _, err := ParseSettings(f); err == nil {
		t.Error("settings without a seed decode")
	}
	// This version replays, and 17, whose traces differ only in having
	// no file-time lookups at creat, openat2 and a Unix socket's bind
	// (OldEntryTimes), and 18, which keeps no signals answers
	// (SignalAnswers), and 19, whose signals from outside never come at a
	// call, and 20, whose threads woken by a signal for the whole process
	// run without a look (SignalTaken), and 21, whose futex wakes pass
	// over such a thread until it runs (SigWokenFutex), and 22, which
	// keeps no natively run stat's output (CallOutputs), and 23, whose
	// interrupted selects returned the host's time left
	// (InterruptedTimeLeft), and 24, whose timers queued a signal for each
	// expiration (TimerOverruns), and 25, whose rdtsc always trapped
	// (TSCSites); before, schedules were not this hermit's.
	for v, ok := range map[string]bool{"1": false, "2": false, "3": false, "4": false, "5": false, "6": false, "7": false, "8": false, "9": false, "10": false, "11": false, "12": false, "13": false, "14": false, "15": false, "16": false, "17": true, "18": true, "19": true, "20": true, "21": true, "22": true, "23": true, "24": true, "25": true, JournalVersion: true, "27": false, "": false} {
		f := s.Flags()
		f[FlagJournal] = v
		got, err := ParseSettings(f)
		if (err == nil) != ok {
			t.Errorf("journal version %q: %v", v, err)
		}
		if ok && got.FastWriteDigests != (v == "20" || v == "21" || v == "22" || v == "23" || v == "24" || v == "25" || v == JournalVersion) {
			t.Errorf("journal version %q: FastWriteDigests %v", v, got.FastWriteDigests)
		}
		if ok && (got.SignalTaken != (v == "21" || v == "22" || v == "23" || v == "24" || v == "25" || v == JournalVersion) || got.Config().OldSignalWake == got.SignalTaken) {
			t.Errorf("journal version %q: SignalTaken %v, OldSignalWake in its Config %v", v, got.SignalTaken, got.Config().OldSignalWake)
		}
		if ok && (got.SigWokenFutex != (v == "22" || v == "23" || v == "24" || v == "25" || v == JournalVersion) || got.Config().OldSigWokenFutex == got.SigWokenFutex) {
			t.Errorf("journal version %q: SigWokenFutex %v, OldSigWokenFutex in its Config %v", v, got.SigWokenFutex, got.Config().OldSigWokenFutex)
		}
		if ok && (got.InterruptedTimeLeft != (v == "24" || v == "25" || v == JournalVersion) || got.Config().OldInterruptedTimeLeft == got.InterruptedTimeLeft || got.Config().OldTimerfdSettime == got.InterruptedTimeLeft || got.Config().OldSockTimeout == got.InterruptedTimeLeft) {
			t.Errorf("journal version %q: InterruptedTimeLeft %v, OldInterruptedTimeLeft in its Config %v", v, got.InterruptedTimeLeft, got.Config().OldInterruptedTimeLeft)
		}
		if ok && (got.CallOutputs != (v == "23" || v == "24" || v == "25" || v == JournalVersion) || got.Config().OldCallOutput == got.CallOutputs || got.Config().OldTimedFutexCount == got.CallOutputs) {
			t.Errorf("journal version %q: CallOutputs %v, OldCallOutput in its Config %v", v, got.CallOutputs, got.Config().OldCallOutput)
		}
		if ok && (got.TSCSites != (v == JournalVersion) || got.Config().OldTSCTraps == got.TSCSites) {
			t.Errorf("journal version %q: TSCSites %v, OldTSCTraps in its Config %v", v, got.TSCSites, got.Config().OldTSCTraps)
		}
		if ok && (got.TimerOverruns != (v == "25" || v == JournalVersion) || got.Config().OldTimerOverrun == got.TimerOverruns || got.Config().OldOwnerDied == got.TimerOverruns) {
			t.Errorf("journal version %q: TimerOverruns %v, OldTimerOverrun in its Config %v", v, got.TimerOverruns, got.Config().OldTimerOverrun)
		}
		if ok && got.SignalAnswers != (v != "17" && v != "18") {
			t.Errorf("journal version %q: SignalAnswers %v", v, got.SignalAnswers)
		}
		if ok && got.OldEntryTimes != (v == "17") || got.Config().OldEntryTimes != got.OldEntryTimes {
			t.Errorf("journal version %q: OldEntryTimes %v, in its Config %v", v, got.OldEntryTimes, got.Config().OldEntryTimes)
		}
	}
}

func TestDotDotDirs(t *testing.T) {
	for p, want := range map[string][]string{
		"/usr/lib/jvm/bin/../lib/libjli.so": {"/usr/lib/jvm/bin"},
		"/a/b/../../c/../d":                 {"/a/b", "/a", "/c"},
		"/../x":                             nil,
		"/a/./b/c":                          nil,
	} {
		if got := dotDotDirs(p); !reflect.DeepEqual(got, want) {
			t.Errorf("dotDotDirs(%q) = %q, want %q", p, got, want)
		}
	}
}

// TestSettingsPCTStarve: a PCT recording keeps its starvation guard; one
// made before the guard had none, which its replay must repeat.
func TestSettingsPCTStarve(t *testing.T) {
	s := Settings{Path: "/bin/x", Seed: 7, Timeslice: 3, CPUs: 1, Heuristic: detcore.PCT, ChaosPoints: []int64{5}}
	f := s.Flags()
	if f[FlagStarve] != "1024" {
		t.Errorf("a PCT recording's %s flag is %q, want 1024", FlagStarve, f[FlagStarve])
	}
	if got, err := ParseSettings(f); err != nil || got.PCTStarve != 1024 || got.Config().PCTStarve != 1024 {
		t.Errorf("decoded: %+v, %v; want the guard at 1024", got, err)
	}
	delete(f, FlagStarve)
	if got, err := ParseSettings(f); err != nil || got.Config().PCTStarve != -1 {
		t.Errorf("a recording without the flag: %+v, %v; want no guard (-1)", got, err)
	}
	f[FlagStarve] = "x"
	if _, err := ParseSettings(f); err == nil || !strings.Contains(err.Error(), FlagStarve) {
		t.Errorf("a bad %s flag: %v, want an error naming it", FlagStarve, err)
	}
	if rr := (Settings{Path: "/bin/x", CPUs: 1}).Flags(); rr[FlagStarve] != "" {
		t.Errorf("a round-robin recording has a %s flag", FlagStarve)
	}
}

// TestSettingsWatchdog: a recording keeps its --watchdog (0: none), and
// one made before it decodes as -1, for replay to choose its own.
func TestSettingsWatchdog(t *testing.T) {
	for _, w := range []time.Duration{0, 150 * time.Millisecond, 2 * time.Second} {
		s := Settings{Path: "/bin/x", CPUs: 1, Watchdog: w}
		if got, err := ParseSettings(s.Flags()); err != nil || got.Watchdog != w {
			t.Errorf("--watchdog %v decodes as %v, %v", w, got.Watchdog, err)
		}
	}
	f := Settings{Path: "/bin/x", CPUs: 1}.Flags()
	delete(f, FlagWatchdog)
	if got, err := ParseSettings(f); err != nil || got.Watchdog != -1 {
		t.Errorf("a recording without the flag: %v, %v; want -1", got.Watchdog, err)
	}
	for _, bad := range []string{"x", "-1s", ""} {
		f[FlagWatchdog] = bad
		if _, err := ParseSettings(f); err == nil || !strings.Contains(err.Error(), FlagWatchdog) {
			t.Errorf("watchdog %q: %v, want an error naming the flag", bad, err)
		}
	}
}
