// Command envdump stands in for the checker in the sandbox's tests: it
// prints its environment, arguments, working directory, user id and stdin,
// and with the argument "hang" it never exits.
package main

import (
	"fmt"
	"io"
	"os"
	"sort"
	"time"
)

func main() {
	in, _ := io.ReadAll(os.Stdin)
	env := os.Environ()
	sort.Strings(env)
	wd, _ := os.Getwd()
	exe, _ := os.Executable()
	fmt.Printf("args=%q\nuid=%d\nwd=%s\nexe=%s\nstdin=%s\n", os.Args[1:], os.Getuid(), wd, exe, in)
	for _, e := range env {
		fmt.Printf("env=%s\n", e)
	}
	for _, a := range os.Args[1:] {
		if a == "hang" {
			time.Sleep(time.Hour)
		}
	}
}
