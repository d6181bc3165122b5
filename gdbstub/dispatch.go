package gdbstub

import (
	"errors"
	"sort"
	"strings"
)

// request is a packet being answered.
type request struct {
	pkt  string // the whole payload
	args string // what follows the command's name
	seq  uint64 // its number in the stream
}

// handler answers a request; nil is the empty reply.
type handler func(s *session, r *request) []byte

// command is one entry of the dispatch table.
type command struct {
	name string
	// tail: the name is a prefix that anything may follow ("m", "p",
	// "qThreadStopInfo"); otherwise the packet must be the name or the name
	// and then ':', ';' or ','.
	tail bool
	h    handler
}

// commands is the dispatch table, longest names first (see init).
var commands = []command{
	// Handshake and features.
	{"qSupported", false, (*session).qSupported},
	{"QStartNoAckMode", false, (*session).startNoAck},
	{"vMustReplyEmpty", false, empty},
	{"!", false, ok},
	{"QThreadSuffixSupported", false, (*session).threadSuffixOK},
	{"QListThreadsInStopReply", false, (*session).listThreadsOK},
	{"QEnableErrorStrings", false, ok},
	{"QPassSignals", false, ok},
	{"QProgramSignals", false, ok},
	{"QCatchSyscalls", false, (*session).catchSyscalls},
	{"qHostInfo", false, (*session).hostInfo},
	{"qProcessInfo", true, (*session).processInfo},
	{"qAttached", false, reply("1")},
	{"qOffsets", false, empty},
	{"qTStatus", false, empty},
	{"qSymbol", false, ok},
	{"qRegisterInfo", true, empty},
	{"qMemoryRegionInfo", false, (*session).memoryRegionInfo},
	{"qShlibInfoAddr", false, (*session).shlibInfoAddr},
	// lldb's memory allocation in the process, for its expressions:
	// unsupported. (An error makes it fail every expression; unsupported,
	// it tries a call of mmap in the process, whose register writes are
	// refused without a word to the user, then evaluates without.)
	{"_M", true, (*session).allocate},

	// Threads.
	{"H", true, (*session).setThread},
	{"qC", false, (*session).currentThread},
	{"qfThreadInfo", false, (*session).threadInfoFirst},
	{"qsThreadInfo", false, reply("l")},
	{"T", true, (*session).threadAlive},
	{"qThreadStopInfo", true, (*session).threadStopInfo},

	// Registers and memory.
	{"g", true, (*session).readRegisters},
	{"p", true, (*session).readRegister},
	{"G", true, (*session).writeRegisters},
	{"P", true, (*session).writeRegister},
	{"M", true, readOnly},
	{"X", true, readOnly},
	{"m", true, (*session).readMemory},
	{"x", true, (*session).readMemoryBinary},
	{"Z", true, (*session).insertBreak},
	{"z", true, (*session).removeBreak},

	// Run control.
	{"?", false, (*session).haltReason},
	{"vCont?", false, reply("vCont;c;C;s;S")},
	{"vCont", false, (*session).vCont},
	{"c", true, (*session).continuePlain},
	{"C", true, (*session).continuePlain},
	{"s", true, (*session).stepPlain},
	{"S", true, (*session).stepPlain},
	{"bc", false, (*session).reverseContinue},
	{"bs", false, (*session).reverseStep},
	{"vRun", false, (*session).vRun},
	{"vAttach", false, reply("E01")},
	{"D", true, (*session).detach},
	{"k", true, (*session).kill},
	{"vKill", false, (*session).vKill},

	// Objects and files.
	{"qXfer", false, (*session).qXfer},
	{"qGetTLSAddr", false, (*session).getTLSAddr},
	{"vFile", false, (*session).vFile},

	// Monitor commands.
	{"qRcmd", false, (*session).qRcmd},
	{"qRRCmd", false, (*session).qRRCmd},
}

func init() {
	sort.SliceStable(commands, func(i, j int) bool {
		return len(commands[i].name) > len(commands[j].name)
	})
}

// lookup finds pkt's command.
func lookup(pkt []byte) handler {
	p := string(pkt)
	for _, c := range commands {
		if !strings.HasPrefix(p, c.name) {
			continue
		}
		if !c.tail && len(p) > len(c.name) && !strings.ContainsRune(":;,", rune(p[len(c.name)])) {
			continue
		}
		name := c.name
		h := c.h
		return func(s *session, r *request) []byte {
			r.args = r.pkt[len(name):]
			return h(s, r)
		}
	}
	return nil
}

// Simple answers.
func empty(*session, *request) []byte        { return nil }
func ok(*session, *request) []byte           { return []byte("OK") }
func readOnly(s *session, _ *request) []byte { return s.refused(errMemReadOnly) }

// Why writes are refused.
var (
	errMemReadOnly = errors.New("the debugger asked to write memory (set var, call, a breakpoint it writes itself): a replay is read-only, it shows what the recording did")
	errRegReadOnly = errors.New("the debugger asked to change a register (set $reg, call, jump): a replay is read-only, it shows what the recording did")
)

// reply is a handler answering text.
func reply(text string) handler {
	return func(*session, *request) []byte { return []byte(text) }
}

// errReply is the one error we send: gdb and lldb show the code, and
// nothing reads more into it.
var errReply = []byte("E01")
