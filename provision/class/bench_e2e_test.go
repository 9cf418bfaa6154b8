//go:build e2e

package class

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/labctl/labctl/provision"
)

// BenchmarkE2EClass measures a class of three learners of the repository's
// lab on a kind cluster made from labctl's node image, once: the time to
// bring the three up, the time of one class grade (all three graded at
// once, probes included, after every solve), and the idle memory and CPU
// of one learner as the node's kubelet reports them (its summary API:
// resident memory and CPU use of the learner's Pods, averaged over
// the learners, after a quiet minute). hack/bench.sh prints the metrics as rows.
//
//	flock /tmp/labctl-e2e.lock go test -tags e2e -run '^$' -bench BenchmarkE2EClass -benchtime 1x ./provision/class/ -timeout 30m
func BenchmarkE2EClass(b *testing.B) {
	b.Setenv("LABCTL_STATE_DIR", b.TempDir())
	h := newClassHost(b)
	benchClass(b, h, openClass(b, h, "bench-"), []string{"learner-1", "learner-2", "learner-3"}, "3", "learner")
}

// BenchmarkE2EClassLearnerNodes measures, as BenchmarkE2EClass does, a class
// of two learners of labs/debug-rollout, each with a node of their own
// (--learner-nodes): bringing the two up, one class grade with the lab's
// probes, and one learner's idle memory and CPU, their node and the lab's
// Pods running in it included.
//
//	flock /tmp/labctl-e2e.lock go test -tags e2e -run '^$' -bench BenchmarkE2EClassLearnerNodes -benchtime 1x ./provision/class/ -timeout 30m
func BenchmarkE2EClassLearnerNodes(b *testing.B) {
	b.Setenv("LABCTL_STATE_DIR", b.TempDir())
	h := newClassHost(b)
	benchClass(b, h, openNodeClass(b, h, "bench-nodes-"), []string{"learner-1", "learner-2"}, "2", "node-learner")
}

// benchClass brings names up in c, solves every step of each, grades them
// all at once, and after a quiet minute reads one learner's idle use; its
// metrics are up<n>-s, grade<n>-s, idle-rss-MiB/<per> and idle-mCPU/<per>.
func benchClass(b *testing.B, h *classHost, c *Class, names []string, n, per string) {
	ctx := context.Background()
	b.Cleanup(func() {
		for _, n := range names {
			_ = c.Down(context.Background(), n)
		}
	})
	for b.Loop() {
		start := time.Now()
		upAll(b, c, names)
		up := time.Since(start)

		ls := make([]*provision.Live, len(names))
		for i, n := range names {
			var err error
			if ls[i], err = c.Connect(ctx, n); err != nil {
				b.Fatal(err)
			}
			defer ls[i].Close()
		}
		var wg sync.WaitGroup
		errs := make([]error, len(ls))
		for i := range ls {
			wg.Go(func() { _, errs[i] = solveAll(ctx, ls[i]) })
		}
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				b.Fatal(err)
			}
		}
		start = time.Now()
		for i := range ls {
			wg.Go(func() { _, errs[i] = gradeAll(ctx, ls[i]) })
		}
		wg.Wait()
		grade := time.Since(start)
		for _, err := range errs {
			if err != nil {
				b.Fatal(err)
			}
		}
		time.Sleep(time.Minute)
		mem, cpu := idlePerLearner(b, h, c, names)
		b.ReportMetric(up.Seconds(), "up"+n+"-s")
		b.ReportMetric(grade.Seconds(), "grade"+n+"-s")
		b.ReportMetric(mem/(1<<20), "idle-rss-MiB/"+per)
		b.ReportMetric(cpu, "idle-mCPU/"+per)
	}
}

// idlePerLearner reads the kubelet's summary of every node and returns the
// average resident memory (bytes) and CPU use (millicores) of a learner's
// Pods. A summary can lag behind a Pod whose containers make cgroups of
// their own (a learner node's): it is read again, up to a minute, until
// every learner's control-plane Pod has figures, CPU included.
func idlePerLearner(b *testing.B, h *classHost, c *Class, names []string) (mem, milli float64) {
	var missing string
	for range 7 {
		if mem, milli, missing = readIdle(b, h, c, names); missing == "" {
			return mem, milli
		}
		time.Sleep(10 * time.Second)
	}
	b.Fatalf("no whole figures for %s in the kubelets' summaries after a minute", missing)
	return 0, 0
}

// readIdle is one reading of idlePerLearner; missing names a learner Pod
// without figures.
func readIdle(b *testing.B, h *classHost, c *Class, names []string) (mem, milli float64, missing string) {
	ctx := context.Background()
	nodes, err := h.cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		b.Fatal(err)
	}
	ns := map[string]bool{}
	for _, n := range names {
		ns[c.Namespace(n)] = true
	}
	type figures struct{ rss, cpu uint64 }
	seen := map[string]figures{}
	for _, n := range nodes.Items {
		raw, err := h.cs.CoreV1().RESTClient().Get().AbsPath("/api/v1/nodes", n.Name, "proxy/stats/summary").DoRaw(ctx)
		if err != nil {
			b.Fatal(err)
		}
		var sum struct {
			Pods []struct {
				PodRef struct{ Name, Namespace string } `json:"podRef"`
				CPU    struct {
					UsageNanoCores uint64 `json:"usageNanoCores"`
				} `json:"cpu"`
				Memory struct {
					RSSBytes uint64 `json:"rssBytes"`
				} `json:"memory"`
			} `json:"pods"`
		}
		if err := json.Unmarshal(raw, &sum); err != nil {
			b.Fatal(err)
		}
		for _, p := range sum.Pods {
			if ns[p.PodRef.Namespace] {
				mem += float64(p.Memory.RSSBytes)
				milli += float64(p.CPU.UsageNanoCores) / 1e6
				seen[p.PodRef.Namespace+"/"+p.PodRef.Name] = figures{p.Memory.RSSBytes, p.CPU.UsageNanoCores}
			}
		}
	}
	for n := range ns {
		if f := seen[n+"/"+vcpPod]; f.rss == 0 || f.cpu == 0 {
			return 0, 0, n + "/" + vcpPod
		}
		for _, pod := range []string{sandboxPod, homeboundPod} {
			if f := seen[n+"/"+pod]; f.rss == 0 {
				return 0, 0, n + "/" + pod
			}
		}
	}
	for pod, f := range seen {
		b.Logf("%s: RSS %.1f MiB, CPU %.0f millicores", pod, float64(f.rss)/(1<<20), float64(f.cpu)/1e6)
	}
	return mem / float64(len(names)), milli / float64(len(names)), ""
}
