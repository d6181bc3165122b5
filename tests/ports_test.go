package tests

import (
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/hermitdbg/hermit/detcore"
	"github.com/hermitdbg/hermit/tests/testenv"
)

// portLineRE matches a port line of the ports guest: "PROTO WHAT: K=V ...".
var portLineRE = regexp.MustCompile(`(?m)^(\w+) (\w+): ((?:[\w-]+=\d+ ?)+)$`)

// guestPorts parses the ports guest's output into "PROTO WHAT KEY" → port.
func guestPorts(t *testing.T, stdout []byte) map[string]int {
	t.Helper()
	ports := map[string]int{}
	for _, m := range portLineRE.FindAllSubmatch(stdout, -1) {
		for _, kv := range strings.Fields(string(m[3])) {
			k, v, _ := strings.Cut(kv, "=")
			n, err := strconv.Atoi(v)
			if err != nil {
				t.Fatalf("bad port in %q", m[0])
			}
			ports[string(m[1])+" "+string(m[2])+" "+k] = n
		}
	}
	return ports
}

// checkPorts fails t unless the ports a run of the ports guest printed
// agree with one another: each end of a connection or exchange sees the
// other's own port. With virtual, they must also be hermit's virtual ones.
func checkPorts(t *testing.T, what string, stdout []byte, virtual bool) {
	t.Helper()
	p := guestPorts(t, stdout)
	v6 := !strings.Contains(string(stdout), "\nv6 skipped\n")
	same := func(a, b string) {
		t.Helper()
		x, okx := p[a]
		y, oky := p[b]
		switch {
		case !okx || !oky:
			t.Errorf("%s: no %q or %q in the output:\n%s", what, a, b, stdout)
		case x != y:
			t.Errorf("%s: %s is %d but %s is %d", what, a, x, b, y)
		}
	}
	tcps, udps := []string{"tcp4"}, []string{"udp4"}
	if v6 {
		tcps, udps = append(tcps, "tcp6", "tcp4mapped"), append(udps, "udp6")
	}
	for _, n := range tcps {
		same(n+" client peer", n+" listener listen")
		same(n+" accept from", n+" client local")
		same(n+" accept local", n+" listener listen")
		same(n+" accept remote", n+" client local")
	}
	for _, n := range udps {
		same(n+" exchange server-saw", n+" exchange client-local")
		same(n+" exchange client-saw", n+" server bound")
		same(n+" msg server-saw", n+" exchange client-local")
	}
	if v6 && !strings.Contains(string(stdout), "\nreuse: [::1] reached the server bound on [::] to the freed port\n") {
		t.Errorf("%s: a port freed and bound again on [::] was not reached over ::1:\n%s", what, stdout)
	}
	same("fork parent tcp-from", "fork child tcp-local")
	same("fork parent udp-from", "fork child udp-local")
	if !virtual {
		return
	}
	for k, v := range p {
		if v < detcore.VirtualPortBase || v >= detcore.VirtualPortEnd {
			t.Errorf("%s: %s is %d, not a virtual port", what, k, v)
		}
	}
}

// TestPortsVirtual: the ports the guest's sockets get (TCP and UDP, IPv4,
// IPv6 and v4-mapped, bound to port 0 or implicitly by connect and sendto,
// read back from getsockname, getpeername, accept, recvfrom and recvmsg,
// in one process and across a fork) and the f_fsid of statfs differ
// natively on every run; under hermit they are virtual, the same on every
// run, and still agree with one another, and the real sockets work
// (the guest exchanges data over each). A recording replays them.
func TestPortsVirtual(t *testing.T) {
	t.Parallel()
	argv := cGuest("ports.c")(t)
	nat := native(t, argv)
	if nat.Exit != 0 {
		t.Fatalf("native run: %s", describe(nat))
	}
	checkPorts(t, "native run", nat.Stdout, false)

	run := hermitRepeat(t, 3, nil, argv)
	checkPorts(t, "hermit run", run.Stdout, true)
	for _, path := range []string{"/", "/tmp"} {
		if !regexp.MustCompile(`(?m)^statfs ` + regexp.QuoteMeta(path) + `: fsid=[0-9a-f]{8}:[0-9a-f]{8}$`).Match(run.Stdout) {
			t.Errorf("hermit run: no f_fsid line for %s:\n%s", path, run.Stdout)
		}
		// The free counts, which move with the host's writes, are half
		// the totals.
		m := regexp.MustCompile(`(?m)^statfs ` + regexp.QuoteMeta(path) + `: blocks=(\d+) bfree=(\d+) bavail=(\d+) files=(\d+) ffree=(\d+)$`).FindSubmatch(run.Stdout)
		if m == nil {
			t.Errorf("hermit run: no free counts for %s:\n%s", path, run.Stdout)
			continue
		}
		n := func(i int) uint64 { v, _ := strconv.ParseUint(string(m[i]), 10, 64); return v }
		if n(2) != n(1)/2 || n(3) != n(1)/2 || n(5) != n(4)/2 {
			t.Errorf("hermit run: statfs %s: %s; want the free counts half the totals", path, m[0])
		}
	}

	dir := filepath.Join(t.TempDir(), "trace")
	rec := testenv.RunWith(t, hermitOpts(t, nil), testenv.Hermit(t), "record", "-o", dir, "--", argv[0])
	rec.Stderr = guestStderr(rec.Stderr)
	if rec.Exit != 0 {
		t.Fatalf("hermit record: %s", describe(rec))
	}
	if d := firstDiff(run.Stdout, rec.Stdout); d != "" {
		t.Errorf("record's stdout differs from run's at %s", d)
	}
	sameRun(t, "replay", rec, replay(t, dir))
}
