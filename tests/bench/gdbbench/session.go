package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/hermitdbg/hermit/tests/internal/procrun"
)

// exitWait bounds how long a server may take to exit once gdb has killed
// the guest and disconnected.
const exitWait = 10 * time.Second

// result is what one session measured.
type result struct {
	steps, hits time.Duration
	counts      *counts // counting sessions only
	warns       []string
	err         error
	// notListening: the server exited or timed out before it listened.
	notListening bool
}

// session starts s's server, runs gdb's bench.py against it (through a
// counting proxy if count) and stops the server.
func session(s *side, c config, bin, script string, count bool, logPath string) result {
	var r result
	srv, err := startServer(s.argv, s.addrRE, c.timeout)
	if err != nil {
		r.err, r.notListening = err, true
		return r
	}
	defer srv.kill()
	addr := srv.addr
	var px *proxy
	if count {
		px, err = newProxy(addr, logPath)
		if err != nil {
			r.err = err
			return r
		}
		defer px.close()
		addr = px.addr()
	}
	cmd := exec.Command(c.gdb, "-nx", "-batch", "-x", script, bin)
	cmd.Env = append(os.Environ(), "GDBBENCH_ADDR="+addr,
		"GDBBENCH_STEPS="+strconv.Itoa(c.steps), "GDBBENCH_HITS="+strconv.Itoa(c.hits))
	res, err := procrun.Run(cmd, c.timeout)
	marks := map[string]int64{}
	if err == nil {
		r.steps, r.hits, err = parseGDB(res.Stdout, c, marks)
	}
	if err != nil {
		r.err = fmt.Errorf("%w; gdb stderr: %s; %s stderr: %s", err, tail(res.Stderr, 3), s.name, tail(srv.stderr(), 3))
	}
	if px != nil {
		r.counts = px.wait(marks)
	}
	if w := srv.waitExit(exitWait); w != "" {
		r.warns = append(r.warns, w)
	}
	return r
}

// parseGDB reads bench.py's result lines, and its marks into marks.
func parseGDB(stdout []byte, c config, marks map[string]int64) (steps, hits time.Duration, err error) {
	var haveSteps, haveHits, done bool
	for _, line := range strings.Split(string(stdout), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 || f[0] != "gdbbench" {
			continue
		}
		switch {
		case f[1] == "stepi" && len(f) == 4 && f[2] == strconv.Itoa(c.steps):
			steps, err = seconds(f[3])
			haveSteps = err == nil
		case f[1] == "hits" && len(f) == 5 && f[2] == strconv.Itoa(c.hits):
			hits, err = seconds(f[3])
			haveHits = err == nil
		case f[1] == "mark" && len(f) == 4:
			marks[f[2]], _ = strconv.ParseInt(f[3], 10, 64)
		case f[1] == "done":
			done = true
		}
	}
	switch {
	case !haveSteps:
		return 0, 0, errors.New("gdb printed no stepi time")
	case !haveHits:
		return 0, 0, errors.New("gdb printed no breakpoint round trip time")
	case !done:
		return 0, 0, errors.New("gdb did not finish (kill)")
	}
	return steps, hits, nil
}

func seconds(s string) (time.Duration, error) {
	f, err := strconv.ParseFloat(s, 64)
	return time.Duration(f * float64(time.Second)), err
}

// server is a running debug server.
type server struct {
	cmd    *exec.Cmd
	addr   string
	out    *watcher
	done   chan struct{} // closed when the server has exited
	waited error
}

// startServer runs argv in its own process group and waits until its
// stderr matches addrRE.
func startServer(argv []string, addrRE string, timeout time.Duration) (*server, error) {
	re := regexp.MustCompile(addrRE)
	s := &server{cmd: exec.Command(argv[0], argv[1:]...), done: make(chan struct{})}
	s.out = &watcher{re: re, found: make(chan string, 1)}
	s.cmd.Stderr = s.out
	s.cmd.Stdout = &limited{max: 1 << 16}
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	s.cmd.WaitDelay = 5 * time.Second
	if err := s.cmd.Start(); err != nil {
		return nil, err
	}
	go func() {
		s.waited = s.cmd.Wait()
		close(s.done)
	}()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case a := <-s.out.found:
		if !strings.Contains(a, ":") {
			a = "127.0.0.1:" + a
		}
		s.addr = a
		return s, nil
	case <-s.done:
		return nil, fmt.Errorf("`%s` exited (%v) before listening: %s", strings.Join(argv, " "), s.waited, tail(s.out.bytes(), 2))
	case <-timer.C:
		s.kill()
		return nil, fmt.Errorf("`%s` did not listen within %v: %s", strings.Join(argv, " "), timeout, tail(s.out.bytes(), 2))
	}
}

func (s *server) stderr() []byte { return s.out.bytes() }

// waitExit waits for the server to exit by itself, as it should once gdb
// has killed the guest and disconnected; it describes anything amiss.
func (s *server) waitExit(d time.Duration) string {
	name := s.cmd.Args[0]
	select {
	case <-s.done:
		if s.waited != nil {
			return fmt.Sprintf("%s exited with %v after gdb's kill and disconnect: %s", name, s.waited, tail(s.stderr(), 2))
		}
		return ""
	case <-time.After(d):
		s.kill()
		return fmt.Sprintf("%s was still running %v after gdb disconnected; killed it", name, d)
	}
}

// kill ends the server's process group, if it is still running.
func (s *server) kill() {
	select {
	case <-s.done:
	default:
		syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
		<-s.done
	}
}

// watcher collects a server's stderr and reports the first match of re's
// first group.
type watcher struct {
	mu    sync.Mutex
	buf   []byte
	re    *regexp.Regexp
	found chan string // gets one value
	seen  bool
}

func (w *watcher) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.buf) < 1<<20 {
		w.buf = append(w.buf, p...)
	}
	if i := bytes.LastIndexByte(w.buf, '\n'); !w.seen && i >= 0 {
		// Complete lines only: a port may arrive in two writes.
		if m := w.re.FindSubmatch(w.buf[:i]); m != nil {
			w.seen = true
			w.found <- string(m[1])
		}
	}
	return len(p), nil
}

func (w *watcher) bytes() []byte {
	w.mu.Lock()
	defer w.mu.Unlock()
	return bytes.Clone(w.buf)
}

// limited keeps the first max bytes written to it.
type limited struct {
	max int
	buf bytes.Buffer
}

func (l *limited) Write(p []byte) (int, error) {
	if room := l.max - l.buf.Len(); room > 0 {
		l.buf.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

// tail returns the last n non-empty lines of b, joined with " / ".
func tail(b []byte, n int) string {
	var lines []string
	for _, l := range strings.Split(string(b), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	if len(lines) == 0 {
		return "(nothing)"
	}
	return strings.Join(lines, " / ")
}
