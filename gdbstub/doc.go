// Package gdbstub serves the GDB Remote Serial Protocol for a recorded
// execution, so that gdb, lldb and Delve can debug a replay.
//
// Serve speaks to one client over one connection. It knows nothing of
// recording, scheduling or ptrace: everything it shows comes from a
// Target, which a replay implements. It is all-stop only, and read-only:
// packets that would write registers or memory get an error.
//
// Pieces, one file each:
//   - framing.go: packets as pure functions ("$payload#cs", escapes,
//     run-length repeats) and a byte-at-a-time scanner for the client's
//     stream.
//   - conn.go: the reader goroutine. It owns the read side, acknowledges
//     packets until no-ack mode, queues them, and turns a ^C into
//     Target.Interrupt while a Continue or Step runs.
//   - dispatch.go: the table of packet names and their handlers;
//     unknown packets get the empty reply.
//   - query.go, data.go, run.go, qxfer.go, vfile.go, monitor.go: the
//     handlers (handshake and threads; registers, memory and breakpoints;
//     run control and stop replies; qXfer objects; vFile; monitor and
//     qRRCmd commands).
//   - regs.go, xml.go: the amd64 register file in gdb's numbering and the
//     target description that describes exactly it.
//   - signals.go: Linux signal numbers to gdb's.
//   - svr4.go: the shared-library list, walked from r_debug.
//
// What the clients send and need is in /work/shared/notes/rsp-clients.md;
// the tests replay the handshakes recorded there.
package gdbstub
