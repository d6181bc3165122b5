package main

// hermit as rr: Delve's rr backend (dlv replay, dlv debug --backend=rr)
// runs an executable named rr from PATH. Invoked through a link of that
// name, hermit answers the three commands Delve v1.27 uses:
//
//	rr --version
//	rr replay --dbgport=0 [--onprocess=PID] [$DELVE_RR_REPLAY_FLAGS] TRACE
//	rr record --print-trace-dir=FD [$DELVE_RR_RECORD_FLAGS] CMD ARGS...
//
// replay serves the trace with serveGDB and prints the two lines rr prints
// and Delve parses to find the address and the executable; record records
// as hermit record does and writes the trace directory to FD.

import (
	"debug/buildinfo"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// rrVersion is the rr version hermit claims. Delve reads it only to choose
// how to send qRRCmd: from 5.8.0 on as "qRRCmd:when:-1" (the command in
// plain text, then a thread id), which is also what it sends to any stub
// that accepts thread suffixes, so the stub sees one style whatever it
// answers to QThreadSuffixSupported. 5.9.0 is the rr release current with
// Delve v1.27.
const rrVersion = "5.9.0"

// rrPrefix starts every message hermit prints as rr.
const rrPrefix = "hermit (as rr)"

func rrMain(args []string) int {
	if len(args) == 0 {
		fmt.Fprintf(os.Stderr, "%s: no rr command given; hermit answers rr --version, rr replay --dbgport=N TRACE and rr record CMD (for Delve)\n", rrPrefix)
		return 2
	}
	switch args[0] {
	case "--version":
		fmt.Printf("rr version %s\n", rrVersion)
		return 0
	case "replay":
		return rrReplay(args[1:])
	case "record":
		return rrRecord(args[1:])
	case "help", "--help", "-h":
		fmt.Print(rrUsage)
		return 0
	}
	fmt.Fprintf(os.Stderr, "%s: unsupported rr command %q; hermit answers rr --version, rr replay --dbgport=N TRACE and rr record CMD (for Delve)\n", rrPrefix, strings.Join(args, " "))
	return 2
}

const rrUsage = `hermit, invoked as rr, stands in for rr for Delve (dlv replay TRACE,
dlv debug --backend=rr, dlv exec --backend=rr). It answers:

  rr --version                      rr version ` + rrVersion + `
  rr replay --dbgport=N [flags] [TRACE]
                                    serve TRACE (a hermit trace) to a debugger
                                    on 127.0.0.1:N (0: any free port) and print
                                    rr's "Launch debugger with" lines
  rr record [-p FD] [flags] CMD ARGS...
                                    hermit record CMD; -p/--print-trace-dir=FD
                                    writes the trace directory to descriptor FD

replay flags: -s/--dbgport=N, -h/--dbghost=HOST, -k/--keep-listening,
  -p/--onprocess=PID|COMMAND, -g/--goto=EVENT (a hermit event number),
  -u/--cpu-unbound; -d, -o, -x, -i, --fullname only configure the gdb rr
  would start and are ignored.
record flags: -p/--print-trace-dir=FD, -o/--output-trace-dir=DIR,
  -u/--cpu-unbound, --bind-to-cpu=N, -v/--env=NAME=VALUE, hermit record's
  own flags (--seed=N, ...); -n, --no-file-cloning and --no-read-cloning
  are rr optimizations and are ignored.
Other rr commands and flags are refused.
`

// rrOpt is one rr command-line option.
type rrOpt struct {
	short byte   // 0: long form only
	long  string // without the dashes
	arg   bool   // takes a value
}

// rrParsed is an option found on the command line.
type rrParsed struct {
	opt   rrOpt
	value string
	text  string // as written, for messages
}

// parseRROpt parses the option at args[0] the way rr does (--long=V,
// --long V, -sV, -s V), looking it up in opts. It returns the option, how
// many arguments it used, and ok false when args[0] is no option of opts.
// A missing value is an error.
func parseRROpt(args []string, opts []rrOpt) (p rrParsed, n int, ok bool, err error) {
	a := args[0]
	var o rrOpt
	var value string
	hasValue := false
	switch {
	case strings.HasPrefix(a, "--"):
		name := a[2:]
		if i := strings.IndexByte(name, '='); i >= 0 {
			name, value, hasValue = name[:i], name[i+1:], true
		}
		found := false
		for _, c := range opts {
			if c.long == name {
				o, found = c, true
				break
			}
		}
		if !found {
			return rrParsed{}, 0, false, nil
		}
	case len(a) >= 2 && a[0] == '-':
		found := false
		for _, c := range opts {
			if c.short != 0 && c.short == a[1] {
				o, found = c, true
				break
			}
		}
		if !found {
			return rrParsed{}, 0, false, nil
		}
		if len(a) > 2 {
			value, hasValue = strings.TrimPrefix(a[2:], "="), true
		}
	default:
		return rrParsed{}, 0, false, nil
	}
	p = rrParsed{opt: o, text: a}
	if !o.arg {
		if hasValue {
			return p, 0, true, fmt.Errorf("%s takes no value", a)
		}
		return p, 1, true, nil
	}
	if hasValue {
		p.value = value
		return p, 1, true, nil
	}
	if len(args) < 2 {
		return p, 0, true, fmt.Errorf("%s needs a value", a)
	}
	p.value = args[1]
	p.text = a + " " + args[1]
	return p, 2, true, nil
}

// rrName is how messages name option o.
func rrName(o rrOpt) string {
	if o.long != "" {
		return "--" + o.long
	}
	return "-" + string(o.short)
}

var (
	// rrReplayOpts are the options of rr replay (rr 5.9) hermit knows.
	rrReplayOpts = []rrOpt{
		{'s', "dbgport", true}, {'h', "dbghost", true}, {'k', "keep-listening", false},
		{'p', "onprocess", true}, {'g', "goto", true}, {'u', "cpu-unbound", false},
		// Options of the gdb rr starts without --dbgport: moot here.
		{'d', "debugger", true}, {'o', "debugger-option", true}, {'x', "gdb-x", true},
		{'i', "interpreter", true}, {0, "fullname", false},
		// Known, but hermit has nothing like them.
		{'a', "autopilot", false}, {'f', "onfork", true}, {'t', "trace", true},
		{'q', "no-redirect-output", false}, {0, "share-private-mappings", false},
		{0, "serve-files", false},
	}
	// rrRecordOpts are the options of rr record (rr 5.9) hermit knows.
	rrRecordOpts = []rrOpt{
		{'p', "print-trace-dir", true}, {'o', "output-trace-dir", true},
		{'u', "cpu-unbound", false}, {0, "bind-to-cpu", true}, {'v', "env", true},
		// rr's own optimizations: nothing to do.
		{'n', "no-syscall-buffer", false}, {0, "no-file-cloning", false}, {0, "no-read-cloning", false},
		// Known, but hermit has nothing like them.
		{'c', "num-cpu-ticks", true}, {'h', "chaos", false}, {'i', "ignore-signal", true},
		{'s', "always-switch", false}, {'t', "continue-through-signal", true}, {'w', "wait", false},
		{0, "syscall-buffer-size", true}, {0, "syscall-buffer-sig", true}, {0, "nested", true},
		{0, "scarce-fds", false}, {0, "setuid-sudo", false}, {0, "disable-cpuid-features", true},
		{0, "disable-cpuid-features-ext", true}, {0, "disable-cpuid-features-xsave", true},
		{0, "disable-avx-512", false}, {0, "num-cores", true}, {0, "trace-id", true},
		{0, "copy-preload-src", false}, {0, "stap-sdt", false}, {0, "unmap-vdso", false},
		{0, "asan", false}, {0, "tsan", false}, {0, "save-as", true},
	}
)

// rrReplay serves a trace the way `rr replay --dbgport=N` does.
func rrReplay(args []string) int {
	fail := func(format string, a ...any) int {
		fmt.Fprintf(os.Stderr, "%s: rr replay: %s\n", rrPrefix, fmt.Sprintf(format, a...))
		return 2
	}
	cfg := serveConfig{host: "127.0.0.1", port: -1}
	cpu := replayCPUDefault()
	var rest []string
	for len(args) > 0 {
		if args[0] == "--" {
			// Options for the debugger rr would start: none is started.
			break
		}
		if !strings.HasPrefix(args[0], "-") || args[0] == "-" {
			rest = append(rest, args[0])
			args = args[1:]
			continue
		}
		p, n, ok, err := parseRROpt(args, rrReplayOpts)
		if err != nil {
			return fail("%v", err)
		}
		if !ok {
			return fail("unknown option %q", args[0])
		}
		args = args[n:]
		switch p.opt.long {
		case "dbgport":
			port, err := strconv.Atoi(p.value)
			if err != nil || port < 0 || port > 65535 {
				return fail("%s: want a port number", p.text)
			}
			cfg.port = port
		case "dbghost":
			cfg.host = p.value
		case "keep-listening":
			cfg.keepListening = true
		case "onprocess":
			cfg.onProcess = p.value
		case "goto":
			ev, err := strconv.ParseUint(p.value, 10, 64)
			if err != nil {
				return fail("%s: want an event number", p.text)
			}
			cfg.gotoEvent, cfg.hasGoto = ev, true
		case "cpu-unbound":
			cpu = "none"
		case "debugger", "debugger-option", "gdb-x", "interpreter", "fullname":
		default:
			return fail("%s has no hermit equivalent", rrName(p.opt))
		}
	}
	if len(rest) > 1 {
		return fail("give at most one trace directory, not %q", strings.Join(rest, " "))
	}
	if cfg.port < 0 {
		return fail("hermit only serves the replay: give --dbgport=N (0: any free port) and attach the debugger yourself")
	}
	if len(rest) == 1 {
		cfg.trace = rest[0]
	}
	pin, err := cpuFlag(cpu, true)
	if err != nil {
		return fail("%v", err)
	}
	cfg.cpu = pin
	cfg.announce = func(addr, exe string) {
		fmt.Fprint(os.Stderr, rrLaunchLines(addr, exe))
	}
	return serveGDB(cfg)
}

// rrLaunchLines are the two lines rr replay --dbgport prints on stderr once
// it listens, which Delve parses: the address from the target command, the
// executable from the last word.
func rrLaunchLines(addr, exe string) string {
	words := []string{"gdb", "-l", "10000", "-ex", sysrootHere, "-ex", "target extended-remote " + addr, exe}
	var b strings.Builder
	b.WriteString("Launch debugger with\n  ")
	for _, w := range words {
		b.WriteString(rrQuote(w))
		b.WriteByte(' ')
	}
	b.WriteByte('\n')
	return b.String()
}

// rrQuote quotes s as rr does, in single quotes, which a shell reads back
// as s when s holds no single quote or backslash. For the rare word with
// one, shell and Delve cannot both read it back: Delve, which reads these
// lines, takes a backslash inside quotes as an escape, so those get one.
func rrQuote(s string) string {
	if strings.ContainsAny(s, `'\`) {
		s = strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s)
	}
	return "'" + s + "'"
}

// rrRecord records a command the way `rr record` does, as hermit record.
func rrRecord(args []string) int {
	fail := func(format string, a ...any) int {
		fmt.Fprintf(os.Stderr, "%s: rr record: %s\n", rrPrefix, fmt.Sprintf(format, a...))
		return 2
	}
	// hermit record's own flags pass through (--seed=N, --virtualize-cpuid,
	// ...); this copy of them only says which exist and take values.
	hflags := flag.NewFlagSet("hermit record", flag.ContinueOnError)
	var f runFlags
	f.register(hflags)
	hflags.String("o", "", "")
	hflags.Bool("progress", false, "")

	var hermitArgs []string
	fd := -1
	for len(args) > 0 && strings.HasPrefix(args[0], "-") && args[0] != "-" {
		if args[0] == "--" {
			args = args[1:]
			break
		}
		p, n, ok, err := parseRROpt(args, rrRecordOpts)
		if err != nil {
			return fail("%v", err)
		}
		if !ok {
			name, _, hasValue := strings.Cut(strings.TrimLeft(args[0], "-"), "=")
			hf := hflags.Lookup(name)
			if hf == nil {
				return fail("unknown option %q", args[0])
			}
			hermitArgs = append(hermitArgs, args[0])
			args = args[1:]
			if b, isBool := hf.Value.(interface{ IsBoolFlag() bool }); !hasValue && !(isBool && b.IsBoolFlag()) {
				if len(args) == 0 {
					return fail("%s needs a value", hermitArgs[len(hermitArgs)-1])
				}
				hermitArgs = append(hermitArgs, args[0])
				args = args[1:]
			}
			continue
		}
		args = args[n:]
		switch p.opt.long {
		case "print-trace-dir":
			n, err := strconv.Atoi(p.value)
			if err != nil || n < 0 {
				return fail("%s: want a file descriptor number", p.text)
			}
			fd = n
		case "output-trace-dir":
			hermitArgs = append(hermitArgs, "-o", p.value)
		case "cpu-unbound":
			hermitArgs = append(hermitArgs, "--cpu=none")
		case "bind-to-cpu":
			hermitArgs = append(hermitArgs, "--cpu="+p.value)
		case "env":
			name, value, ok := strings.Cut(p.value, "=")
			if !ok || name == "" {
				return fail("%s: want NAME=VALUE", p.text)
			}
			os.Setenv(name, value)
		case "no-syscall-buffer", "no-file-cloning", "no-read-cloning":
		default:
			return fail("%s has no hermit equivalent", rrName(p.opt))
		}
	}
	if len(args) == 0 {
		return fail("no program given")
	}
	var out *os.File
	if fd >= 0 {
		out = os.NewFile(uintptr(fd), "print-trace-dir")
		if _, err := out.Stat(); err != nil {
			return fail("--print-trace-dir=%d: %v", fd, errors.Unwrap(err))
		}
		if fd > 2 {
			// The guest must not inherit it (rr's does not either), and the
			// reader sees its end when hermit exits.
			syscall.CloseOnExec(fd)
			defer out.Close()
		}
	}
	dir, code := record(append(append(hermitArgs, "--"), args...))
	if out != nil && dir != "" {
		if abs, err := filepath.Abs(dir); err == nil {
			dir = abs
		}
		if _, err := fmt.Fprintln(out, dir); err != nil {
			fmt.Fprintf(os.Stderr, "%s: rr record: --print-trace-dir=%d: %v\n", rrPrefix, fd, err)
		}
	}
	return code
}

const rrShimUsage = `Usage: hermit rr-shim DIR

Makes DIR/rr a symbolic link to this hermit executable (creating DIR if
needed), so that Delve, when DIR comes first on PATH, uses hermit wherever
it would use rr: 'dlv replay TRACE' debugs a hermit trace, and
'dlv debug --backend=rr' or 'dlv exec --backend=rr PROG' records with
hermit and then debugs the replay. A DIR/rr that is a link to some hermit
executable is replaced; anything else there is left alone, and hermit
rr-shim fails.

Delve also refuses to start rr unless /proc/sys/kernel/perf_event_paranoid
is at most 1. hermit uses no performance counters, so lowering it only
satisfies Delve's check: 'sudo sysctl kernel.perf_event_paranoid=1', or run
dlv (as root) in a private mount namespace where that file reads 1:

  unshare -m sh -c 'f=$(mktemp) && echo 1 >$f && mount --bind $f /proc/sys/kernel/perf_event_paranoid && exec dlv replay TRACE'
`

// rrShimMain installs DIR/rr.
func rrShimMain(args []string) int {
	fs := flag.NewFlagSet("hermit rr-shim", flag.ContinueOnError)
	fs.Usage = func() { fmt.Fprint(fs.Output(), rrShimUsage) }
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "hermit rr-shim: give one directory; usage: hermit rr-shim DIR")
		return 2
	}
	fail := func(err error) int {
		fmt.Fprintf(os.Stderr, "hermit rr-shim: %v\n", err)
		return exitHermit
	}
	dir, err := filepath.Abs(fs.Arg(0))
	if err != nil {
		return fail(err)
	}
	exe, err := os.Executable()
	if err == nil {
		exe, err = filepath.EvalSymlinks(exe)
	}
	if err != nil {
		return fail(fmt.Errorf("cannot find the hermit executable: %v", err))
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fail(err)
	}
	link := filepath.Join(dir, "rr")
	if st, err := os.Lstat(link); err == nil {
		if st.Mode()&os.ModeSymlink == 0 || !isHermit(link) {
			return fail(fmt.Errorf("%s exists and is not a link to hermit; remove it or choose another directory", link))
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return fail(err)
	}
	// Make the link under a temporary name, then rename it over any old one.
	tmp := filepath.Join(dir, fmt.Sprintf(".rr.hermit-%d", os.Getpid()))
	os.Remove(tmp)
	if err := os.Symlink(exe, tmp); err != nil {
		return fail(err)
	}
	if err := os.Rename(tmp, link); err != nil {
		os.Remove(tmp)
		return fail(err)
	}
	fmt.Printf("hermit: %s -> %s\n", link, exe)
	if found, err := exec.LookPath("rr"); err == nil && filepath.Dir(found) == dir {
		fmt.Printf("%s is on PATH: Delve will use hermit as rr.\n", dir)
	} else {
		if err == nil {
			fmt.Printf("%s comes first on PATH now; ", found)
		}
		fmt.Printf("put %s first on PATH for Delve to use hermit as rr:\n  export PATH=%s:$PATH\n", dir, dir)
	}
	if b, err := os.ReadFile("/proc/sys/kernel/perf_event_paranoid"); err == nil {
		if v, _ := strconv.Atoi(strings.TrimSpace(string(b))); v > 1 {
			fmt.Printf(`Delve refuses to start rr while /proc/sys/kernel/perf_event_paranoid > 1 (it is %d);
hermit needs no perf counters, so this only gets past Delve's check. Either
  sudo sysctl kernel.perf_event_paranoid=1
or run dlv (as root) in a private mount namespace where the file reads 1:
  unshare -m sh -c 'f=$(mktemp) && echo 1 >$f && mount --bind $f /proc/sys/kernel/perf_event_paranoid && exec dlv replay TRACE'
`, v)
		}
	}
	return 0
}

// isHermit says whether path leads to a hermit executable (by its Go build
// information, without running it).
func isHermit(path string) bool {
	info, err := buildinfo.ReadFile(path)
	return err == nil && info.Path == "github.com/hermitdbg/hermit/cmd/hermit"
}
