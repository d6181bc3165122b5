// httploop: an HTTP server and its client in one process, over loopback:
// three requests, each answer printed.
package main

import (
	"fmt"
	"io"
	"net"
	"net/http"
)

func main() {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	go http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprintf(w, "hello %s", r.URL.Path) }))
	for i := 0; i < 3; i++ {
		resp, err := http.Get(fmt.Sprintf("http://%s/x%d", ln.Addr(), i))
		if err != nil {
			panic(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		fmt.Println(string(b))
	}
}
