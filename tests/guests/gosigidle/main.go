// gosigidle: a Go server idle in its netpoller (a goroutine in Accept,
// the runtime's thread in epoll_pwait) waits for SIGINT with
// signal.Notify, as a server waits for its shutdown signal. The signal,
// taken by the thread in epoll_pwait, must reach the main goroutine.
package main

import (
	"fmt"
	"net"
	"os"
	"os/signal"
)

func main() {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	go ln.Accept()
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, os.Interrupt)
	fmt.Println("ready")
	fmt.Println("got", <-ch)
}
