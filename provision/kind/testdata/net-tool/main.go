// net-tool is the add-ons e2e test's workload: it serves HTTP on :8080
// (answering with its node's name), idles, fetches a URL, or writes and reads
// a file, so one image built by labctl serves as server, client and writer.
//
//	net-tool serve | idle | get URL | write FILE TEXT | cat FILE
package main

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"time"
)

func main() {
	if len(os.Args) < 2 {
		fail("usage: net-tool serve | idle | get URL | write FILE TEXT | cat FILE")
	}
	switch args := os.Args[2:]; os.Args[1] {
	case "serve":
		http.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) {
			fmt.Fprintln(w, "served by", os.Getenv("NODE_NAME"))
		})
		fail(http.ListenAndServe(":8080", nil))
	case "idle":
		for {
			time.Sleep(time.Hour)
		}
	case "get":
		c := http.Client{Timeout: 3 * time.Second}
		resp, err := c.Get(args[0])
		if err != nil {
			fail(err)
		}
		defer resp.Body.Close()
		io.Copy(os.Stdout, resp.Body)
	case "write":
		if err := os.WriteFile(args[0], []byte(args[1]), 0o644); err != nil {
			fail(err)
		}
	case "cat":
		b, err := os.ReadFile(args[0])
		if err != nil {
			fail(err)
		}
		os.Stdout.Write(b)
	default:
		fail("unknown command " + os.Args[1])
	}
}

func fail(v any) {
	fmt.Fprintln(os.Stderr, "net-tool:", v)
	os.Exit(1)
}
