// workload-web answers every HTTP request on :8080 with one line: the
// e2e test's workload image, built by labctl from this directory.
package main

import (
	"fmt"
	"log"
	"net/http"
)

func main() {
	http.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintln(w, "hello from a workload image")
	})
	log.Fatal(http.ListenAndServe(":8080", nil))
}
