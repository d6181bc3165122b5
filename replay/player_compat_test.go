package replay

import (
	"encoding/binary"
	"errors"
	"strings"
	"testing"

	"github.com/hermitdbg/hermit/detcore"
	"github.com/hermitdbg/hermit/detcore/abi"
	"github.com/hermitdbg/hermit/recorder"
	"github.com/hermitdbg/hermit/trace"
)

// TestPlayerStandsInForTerminals: an open the recording kept as a
// terminal is made a socket at the recorded descriptor, with the open's
// O_CLOEXEC; another descriptor there is a divergence.
func TestPlayerStandsInForTerminals(t *testing.T) {
	open := [6]uint64{0xffffff9c, 0x1000, abi.O_RDWR | abi.O_CLOEXEC}
	flags := make([]byte, 8)
	binary.LittleEndian.PutUint64(flags, abi.O_CLOEXEC)
	evs := []trace.Event{
		enter(2, abi.SYS_OPENAT, open),
		{Kind: trace.KindSyscall, External: true, Tid: 2, Sysno: abi.SYS_OPENAT, Digest: recorder.ResultStandIn, Result: 5,
			Mem: []trace.MemWrite{{Data: flags}}},
	}
	p := newPlayer(writeTrace(t, evs, true), nil)
	c := &detcore.Call{Tid: 7, Vtid: 2, Nr: abi.SYS_OPENAT, Args: open}
	if err := p.Enter(c); err != nil {
		t.Fatal(err)
	}
	o := p.Native(c)
	if !o.Exit || o.Nr != abi.SYS_SOCKET || o.Args == nil || o.Args[1] != 1|abi.O_CLOEXEC {
		t.Fatalf("outcome %+v; want a stream socket with SOCK_CLOEXEC", o)
	}
	c.Result = 4
	if _, _, err := p.Exit(c); err == nil {
		t.Error("a stand-in at another descriptor is not a divergence")
	}
}

// TestPlayerStopsAtRefusedCall: replay stops at a call the recording
// refused, with its message.
func TestPlayerStopsAtRefusedCall(t *testing.T) {
	args := [6]uint64{0x1000}
	msg := `fsopen("ext4"): a mount of a device or of host files through the new mount API cannot be replayed`
	evs := []trace.Event{
		enter(2, abi.SYS_FSOPEN, args),
		{Kind: trace.KindSyscall, External: true, Tid: 2, Sysno: abi.SYS_FSOPEN, Digest: recorder.ResultRefused,
			Mem: []trace.MemWrite{{Data: []byte(msg)}}},
	}
	p := newPlayer(writeTrace(t, evs, true), nil)
	c := &detcore.Call{Tid: 7, Vtid: 2, Nr: abi.SYS_FSOPEN, Args: args}
	if err := p.Enter(c); err != nil {
		t.Fatal(err)
	}
	if o := p.Native(c); !o.Emulate {
		t.Errorf("outcome %+v; the call must not run", o)
	}
	var de *DivergenceError
	if !errors.As(p.err, &de) || de.Event != 1 || de.Tid != 2 || !strings.HasPrefix(de.Msg, msg+" (hermit record warned") {
		t.Errorf("error %v; want a divergence at event 1 with the recorded message", p.err)
	}
}
