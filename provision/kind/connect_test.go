package kind

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/labctl/labctl/checks"
	"github.com/labctl/labctl/lab"
	"github.com/labctl/labctl/provision"
	"github.com/labctl/labctl/sandbox"
)

// countingEngine is a Docker engine that knows the running containers of
// lab name (its sandbox, grader and control-plane node) and counts the
// pings and the inspections of each.
type countingEngine struct {
	mu      sync.Mutex
	pings   int
	inspect map[string]int
}

func newCountingEngine(t *testing.T, name string) *countingEngine {
	t.Helper()
	e := &countingEngine{inspect: map[string]int{}}
	containers := map[string]map[string]any{
		sandbox.ContainerName(name): {"Config": map[string]any{"Image": "sb", "Labels": map[string]string{
			sandbox.LabelRole: sandbox.RoleSandbox, sandbox.LabelLab: name}}, "HostConfig": map[string]any{"NetworkMode": "kind"}},
		sandbox.GraderName(name): {"Config": map[string]any{"Image": "sb"}},
		controlPlaneNode(name):   {"Config": map[string]any{"Image": "node"}},
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		e.mu.Lock()
		defer e.mu.Unlock()
		w.Header().Set("Api-Version", "1.41")
		if r.URL.Path == "/_ping" {
			e.pings++
			return
		}
		c, ok := strings.CutPrefix(r.URL.Path, "/v1.41/containers/")
		c, ok2 := strings.CutSuffix(c, "/json")
		if spec, found := containers[c]; ok && ok2 && found {
			e.inspect[c]++
			w.Header().Set("Content-Type", "application/json")
			inspected := map[string]any{"Id": "id-" + c, "Name": "/" + c, "State": map[string]any{"Running": true, "Status": "running"}}
			for k, v := range spec {
				inspected[k] = v
			}
			json.NewEncoder(w).Encode(inspected)
			return
		}
		http.Error(w, `{"message":"no such thing"}`, http.StatusNotFound)
	}))
	t.Cleanup(srv.Close)
	t.Setenv("DOCKER_HOST", "tcp://"+srv.Listener.Addr().String())
	t.Setenv("DOCKER_TLS_VERIFY", "")
	t.Setenv("DOCKER_API_VERSION", "")
	return e
}

// TestConnectLooksOnce: connecting to a lab that is up pings the engine
// once and inspects each of its three containers once.
func TestConnectLooksOnce(t *testing.T) {
	t.Setenv("LABCTL_STATE_DIR", t.TempDir())
	l := &lab.Lab{Metadata: lab.Metadata{Name: "fast"}}
	e := newCountingEngine(t, "fast")
	dir, err := stateDir("fast")
	if err != nil {
		t.Fatal(err)
	}
	// Credentials kept for this node: connecting asks the cluster nothing.
	if err := saveCredentials(dir, savedCredentials{Node: "id-" + controlPlaneNode("fast"),
		Grader: checks.KubeCredentials{Token: "g"}, Learner: provision.Identity{Token: "l"}}); err != nil {
		t.Fatal(err)
	}
	live, err := Connect(context.Background(), l)
	if err != nil {
		t.Fatal(err)
	}
	live.Close()
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.pings != 1 {
		t.Errorf("the engine was pinged %d times, want once", e.pings)
	}
	for c, n := range e.inspect {
		if n != 1 {
			t.Errorf("%s was inspected %d times, want once", c, n)
		}
	}
	if len(e.inspect) != 3 {
		t.Errorf("inspected %v, want the sandbox, the grader and the node", e.inspect)
	}
}
