package preflight

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/labctl/labctl/internal/msg"
)

// fakeHost is a machine described by its files, existing paths, free bytes
// and docker info answer.
func fakeHost(files map[string]string, paths []string, free uint64, dockerOut string, dockerErr error) host {
	return host{
		readFile: func(name string) ([]byte, error) {
			if v, ok := files[name]; ok {
				return []byte(v), nil
			}
			return nil, os.ErrNotExist
		},
		exists: func(name string) bool {
			for _, p := range paths {
				if p == name {
					return true
				}
			}
			return false
		},
		freeBytes: func(string) (uint64, error) { return free, nil },
		docker: func(context.Context, ...string) (string, error) {
			return dockerOut, dockerErr
		},
	}
}

func byName(t *testing.T, fs []Finding, name string) Finding {
	t.Helper()
	for _, f := range fs {
		if f.Name == name {
			return f
		}
	}
	t.Fatalf("no finding named %s in %+v", name, fs)
	return Finding{}
}

const (
	withResource    = "CapBnd:\t000001ffffffffff\n"
	withoutResource = "CapBnd:\t000001fffeffffff\n"
)

func goodFiles(status string) map[string]string {
	return map[string]string{
		"/proc/self/status":                       status,
		"/proc/sys/fs/inotify/max_user_watches":   "524288\n",
		"/proc/sys/fs/inotify/max_user_instances": "512\n",
	}
}

func TestHealthyMachine(t *testing.T) {
	h := fakeHost(goodFiles(withResource), []string{"/sys/fs/cgroup", "/sys/fs/cgroup/cgroup.controllers"}, 50<<30, "28.0.1\trunc\t/var/lib/docker", nil)
	for _, f := range run(context.Background(), h) {
		if !f.OK || f.Fix != "" {
			t.Errorf("finding %s not OK on a healthy machine: %+v", f.Name, f)
		}
	}
	if got := byName(t, run(context.Background(), h), "cgroup").Message; got != "cgroup v2" {
		t.Errorf("cgroup message = %q", got)
	}
}

func TestMissingCapabilityNeedsFilteringRuntime(t *testing.T) {
	h := fakeHost(goodFiles(withoutResource), []string{"/sys/fs/cgroup"}, 50<<30, "20.10.24\trunc\t/var/lib/docker", nil)
	f := byName(t, run(context.Background(), h), "capabilities")
	if f.OK || !strings.Contains(f.Fix, "hack/docker-engine.sh") || !strings.Contains(f.Message, "CAP_SYS_RESOURCE") {
		t.Errorf("capabilities finding with plain runc = %+v, want a failure naming the fix", f)
	}
	h = fakeHost(goodFiles(withoutResource), []string{"/sys/fs/cgroup"}, 50<<30, "20.10.24\tlabctl-runc\t/var/lib/docker", nil)
	if f := byName(t, run(context.Background(), h), "capabilities"); !f.OK {
		t.Errorf("capabilities finding with a filtering runtime = %+v, want OK", f)
	}
	if f := byName(t, run(context.Background(), h), "cgroup"); !f.OK || !strings.Contains(f.Message, "cgroup v1") {
		t.Errorf("cgroup finding = %+v, want v1", f)
	}
}

func TestDockerDown(t *testing.T) {
	h := fakeHost(goodFiles(withoutResource), nil, 50<<30, "", errors.New("Cannot connect to the Docker daemon"))
	fs := run(context.Background(), h)
	if f := byName(t, fs, "docker"); f.OK || f.Fix == "" || !strings.Contains(f.Message, "Cannot connect") {
		t.Errorf("docker finding = %+v, want a failure with its cause and fix", f)
	}
	if f := byName(t, fs, "capabilities"); f.OK {
		t.Errorf("capabilities finding without Docker = %+v, want a failure", f)
	}
}

func TestLowLimitsAndDisk(t *testing.T) {
	files := goodFiles(withResource)
	files["/proc/sys/fs/inotify/max_user_watches"] = "8192\n"
	h := fakeHost(files, []string{"/sys/fs/cgroup"}, 3<<30, "28.0.1\trunc\t/srv/docker", nil)
	fs := run(context.Background(), h)
	in := byName(t, fs, "inotify")
	if in.OK || !strings.Contains(in.Fix, "max_user_watches=524288") || !strings.Contains(in.Fix, "max_user_instances=512") {
		t.Errorf("inotify finding = %+v", in)
	}
	d := byName(t, fs, "disk")
	if d.OK || !strings.Contains(d.Message, "/srv/docker") || d.Fix == "" {
		t.Errorf("disk finding = %+v", d)
	}
}

func TestCapBnd(t *testing.T) {
	if _, err := capBnd("Name: x\n"); err == nil {
		t.Error("capBnd without the line: want an error")
	}
	if _, err := capBnd("CapBnd:\tnothex\n"); err == nil {
		t.Error("capBnd with a bad mask: want an error")
	}
	m, err := capBnd(withoutResource)
	if err != nil || m&(1<<capSysResource) != 0 {
		t.Errorf("capBnd = %x, %v", m, err)
	}
}

func TestRunOnThisMachine(t *testing.T) {
	fs := Run(context.Background())
	if len(fs) != 5 {
		t.Fatalf("Run returned %d findings, want 5: %+v", len(fs), fs)
	}
	for _, f := range fs {
		if f.Name == "" || f.Message == "" || (!f.OK && f.Fix == "") {
			t.Errorf("incomplete finding %+v", f)
		}
	}
}

// TestFindingsInJapanese: every finding and fix of a machine that lacks
// everything has Japanese words, the values it names as they are, and the
// English of logs is what a nil catalogue gives.
func TestFindingsInJapanese(t *testing.T) {
	files := goodFiles(withoutResource)
	files["/proc/sys/fs/inotify/max_user_watches"] = "8192\n"
	for _, h := range []host{
		fakeHost(files, []string{"/sys/fs/cgroup"}, 3<<30, "", errors.New("Cannot connect to the Docker daemon")),
		fakeHost(files, []string{"/sys/fs/cgroup", "/sys/fs/cgroup/cgroup.controllers"}, 3<<30, "28.0.1\trunc\t/srv/docker", nil),
	} {
		for _, f := range run(context.Background(), h) {
			enMsg, enFix := f.Words(nil)
			if enMsg != f.Message || enFix != f.Fix {
				t.Errorf("%s: nil catalogue gives %q / %q, want the English %q / %q", f.Name, enMsg, enFix, f.Message, f.Fix)
			}
			jaMsg, jaFix := f.Words(msg.New(msg.Japanese))
			if jaMsg == enMsg && f.Name != "cgroup" {
				t.Errorf("%s: the Japanese message is the English one: %q", f.Name, jaMsg)
			}
			if (jaFix == "") != (enFix == "") || (jaFix != "" && jaFix == enFix) {
				t.Errorf("%s: Japanese fix %q for English fix %q", f.Name, jaFix, enFix)
			}
			if f.Name == "inotify" && !f.OK && !strings.Contains(jaFix, "max_user_watches=524288") {
				t.Errorf("inotify: the Japanese fix lost the command: %q", jaFix)
			}
		}
	}
}
