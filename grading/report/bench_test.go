package report

import (
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/labctl/labctl/checks"
	"github.com/labctl/labctl/internal/msg"
	"github.com/labctl/labctl/lab"
)

// bigReport is a lab of 20 steps with 10 checks each, a third failing.
func bigReport() *Report {
	l := &lab.Lab{Metadata: lab.Metadata{Name: "big"}}
	res := map[string][]checks.Result{}
	for i := 0; i < 20; i++ {
		id := fmt.Sprintf("step-%d", i)
		l.Steps = append(l.Steps, lab.Step{ID: id, Title: "ステップ " + id})
		for j := 0; j < 10; j++ {
			st := checks.Pass
			if (i+j)%3 == 0 {
				st = checks.Fail
			}
			res[id] = append(res[id], checks.Result{Name: fmt.Sprintf("check-%d", j), Status: st,
				Message: "expected spec.replicas = 3, found 2", Points: 1, Duration: time.Millisecond})
		}
	}
	return Build(l, "sha256:x", time.Now(), res)
}

func BenchmarkRender(b *testing.B) {
	r := bigReport()
	for _, f := range []Format{Text, JSON, JUnit} {
		b.Run(string(f), func(b *testing.B) {
			for b.Loop() {
				if err := Write(io.Discard, r, f, msg.New(msg.Japanese)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
