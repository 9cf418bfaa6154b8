// Command labctl gives a learner a sandboxed hands-on lab on their own
// machine and grades it.
package main

import (
	"os"

	"github.com/labctl/labctl/cmd/labctl/app"
)

func main() {
	os.Exit(app.Main(os.Stdin, os.Stdout, os.Stderr, os.Args[1:]))
}
