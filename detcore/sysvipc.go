package detcore

import (
	"bytes"
	"strconv"

	"github.com/hermitdbg/hermit/detcore/abi"
)

// System V IPC: shmctl, semctl and msgctl's IPC_STAT (and the STAT
// commands of ipcs) tell when a segment, semaphore set or queue was made,
// attached, operated on or sent to, in the host's time: another on every
// run, and a replay, which runs the calls again, saw its own. Every time
// that is not zero (never) reads as the virtual epoch instead: a guest
// that waits for sem_otime to become non-zero (a set made ready by its
// first semop) still sees it, and nothing happened after the start.
//
// The objects are the guest's own (hermit gives it an IPC namespace), and
// the calls run in run, record and replay alike; the times are rewritten
// at their exit. They take no turn (noTurn): a recording made before they
// were the policy's has none there.

// Commands whose answer is a struct *id64_ds (<linux/ipc.h>, <linux/shm.h>,
// <linux/sem.h>, <linux/msg.h>), with IPC_64 masked out.
const (
	ipcStat    = 2
	ipc64      = 0x100
	msgStat    = 11
	shmStat    = 13 // and MSG_STAT_ANY
	shmStatAny = 15
	semStat    = 18
	semStatAny = 20
)

// ipcTimes are the offsets of the time fields of each call's struct
// (x86-64's shmid64_ds, semid64_ds and msqid64_ds), and the commands that
// fill it.
var ipcTimes = map[int]struct {
	offs        []uint64
	cmds        []int
	cmdArg, arg int // the command's argument, the struct's
}{
	abi.SYS_SHMCTL: {[]uint64{56, 64, 72}, []int{ipcStat, shmStat, shmStatAny}, 1, 2},                 // shm_atime, shm_dtime, shm_ctime
	abi.SYS_SEMCTL: {[]uint64{48, 64}, []int{ipcStat, semStat, semStatAny}, 2, 3},                     // sem_otime, sem_ctime
	abi.SYS_MSGCTL: {[]uint64{48, 56, 64}, []int{ipcStat, msgStat, shmStat /* MSG_STAT_ANY */}, 1, 2}, // msg_stime, msg_rtime, msg_ctime
}

func init() {
	for nr := range ipcTimes {
		policy[nr] = sysIPCStat
		noTurn[nr] = true
	}
}

// sysIPCStat rewrites the times of a System V IPC STAT command's answer
// at its exit.
func sysIPCStat(e *Engine, t *thread) {
	t.policy = false
	it := ipcTimes[t.nr]
	cmd := int(int32(t.regs.Arg(it.cmdArg))) &^ ipc64
	buf := t.regs.Arg(it.arg)
	stat := false
	for _, c := range it.cmds {
		stat = stat || c == cmd
	}
	if !stat || buf == 0 {
		return
	}
	t.atExit(func(e *Engine, t *thread) {
		if int64(t.regs.Rax) < 0 {
			return
		}
		epoch := uint64(e.epoch() / 1e9)
		for _, off := range it.offs {
			var b [8]byte
			if e.t.ReadMem(t.tid, buf+off, b[:]) != nil {
				return
			}
			if le64(b[:]) != 0 {
				putLE64(b[:], epoch)
				_ = e.t.WriteMem(t.tid, buf+off, b[:])
			}
		}
	})
}

// procSysvipcPath is what ipcs reads: a line for each object, with the
// same times as the STAT commands give.
var procSysvipcPath = lazyRegexp(`^/proc/sysvipc/(shm|sem|msg)$`)

// field is a column of a /proc table.
var field = lazyRegexp(`\S+`)

// normalizeSysvipc rewrites the time columns (those the header names
// *time) of a /proc/sysvipc table as sysIPCStat does, each right-aligned
// in its own width.
func normalizeSysvipc(b []byte, epoch int64) []byte {
	lines := bytes.SplitAfter(b, []byte("\n"))
	if len(lines) == 0 {
		return b
	}
	var times []int
	for i, name := range bytes.Fields(lines[0]) {
		if bytes.HasSuffix(name, []byte("time")) {
			times = append(times, i)
		}
	}
	secs := strconv.AppendInt(nil, epoch/1e9, 10)
	for _, l := range lines[1:] {
		spans := field().FindAllIndex(l, -1)
		for _, i := range times {
			if i >= len(spans) {
				continue
			}
			s := spans[i]
			if v := l[s[0]:s[1]]; !bytes.Equal(v, []byte("0")) && len(v) == len(secs) {
				copy(v, secs)
			}
		}
	}
	return bytes.Join(lines, nil)
}
