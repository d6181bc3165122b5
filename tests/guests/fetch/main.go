// Command fetch is a guest that takes input from three places a replay
// cannot reproduce by determinism alone: it reads one line from stdin, the
// file named by argv[1] and the body of an HTTP GET of the URL argv[2]. It
// prints the SHA-256 of each, then time.Now().UnixNano() and random numbers
// from the auto-seeded math/rand/v2 and from crypto/rand.
//
// It checks that `hermit replay --autopilot` reproduces the recorded run
// from the trace alone, after the line, the file and the server are gone.
package main

import (
	"bufio"
	crand "crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"time"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: fetch FILE URL")
		os.Exit(2)
	}
	line, err := bufio.NewReader(os.Stdin).ReadString('\n')
	if err != nil && err != io.EOF {
		fail("read stdin", err)
	}
	file, err := os.ReadFile(os.Args[1])
	if err != nil {
		fail("read file", err)
	}
	// No proxy: the URL is a server on the loopback interface.
	client := &http.Client{Transport: &http.Transport{Proxy: nil}, Timeout: 30 * time.Second}
	resp, err := client.Get(os.Args[2])
	if err != nil {
		fail("get", err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		fail("read body", err)
	}
	fmt.Printf("stdin %d bytes sha256 %s\n", len(line), digest([]byte(line)))
	fmt.Printf("file %d bytes sha256 %s\n", len(file), digest(file))
	fmt.Printf("http %s, %d bytes sha256 %s\n", resp.Status, len(body), digest(body))
	fmt.Printf("time %d\n", time.Now().UnixNano())
	fmt.Printf("math/rand/v2 %d\n", rand.Uint64())
	var b [16]byte
	if _, err := crand.Read(b[:]); err != nil {
		fail("crypto/rand", err)
	}
	fmt.Printf("crypto/rand %s\n", hex.EncodeToString(b[:]))
}

func digest(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

func fail(what string, err error) {
	fmt.Fprintf(os.Stderr, "fetch: %s: %v\n", what, err)
	os.Exit(1)
}
