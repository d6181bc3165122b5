package recorder

import (
	"github.com/hermitdbg/hermit/detcore"
	"github.com/hermitdbg/hermit/trace"
)

// The process tree of a recording, for hermit trace ps and for choosing
// the process to debug: informational events that replay skips.
//
//	KindClone  Tid created Child (guest ids) with clone Flags, for threads
//	           (CLONE_THREAD) and processes alike
//	KindExec   process Tid exec'd Exec.Path (as the guest named it) with
//	           Exec.Argv; Exec.Files is empty (the files are KindFile events)
//	KindExit   with Group: process Tid ended with wait Status; the last
//	           one, written by Close, is the root's and ends the recording
//
// All ids are the guest's. The engine reports them where it updates its
// own tables (detcore.ProcessJournal), so logging them adds no stop.

var _ detcore.ProcessJournal = (*Recorder)(nil)

// logExec logs the exec of process vtid (its thread group leader's tid,
// which the thread that exec'd has taken); path is AT_EXECFN, "" if
// unknown.
func (r *Recorder) logExec(tid, vtid int, path string) {
	if r.rootVtid == 0 {
		r.rootVtid = vtid
	}
	argv, err := r.host.Argv(tid)
	if err != nil {
		argv = nil
	}
	r.append(&trace.Event{Kind: trace.KindExec, Tid: int32(vtid), Exec: &trace.Exec{Path: path, Argv: argv}})
}

// Clone implements detcore.ProcessJournal.
func (r *Recorder) Clone(vtid, child int, flags uint64) {
	r.append(&trace.Event{Kind: trace.KindClone, Tid: int32(vtid), Child: int32(child), Flags: flags})
}

// ProcessExit implements detcore.ProcessJournal.
func (r *Recorder) ProcessExit(vpid int, status int32) {
	r.append(&trace.Event{Kind: trace.KindExit, Tid: int32(vpid), Status: status, Group: true})
}
