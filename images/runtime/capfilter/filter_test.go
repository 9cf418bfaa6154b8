package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

const sampleStatus = "Name:\tcat\nCapInh:\t0000000000000000\nCapPrm:\t000001fffeffffff\nCapEff:\t000001fffeffffff\nCapBnd:\t000001fffeffffff\nCapAmb:\t0000000000000000\n"

const sampleConfig = `{
  "ociVersion": "1.0.2-dev",
  "process": {
    "args": ["/sbin/init"],
    "capabilities": {
      "bounding": ["CAP_CHOWN", "CAP_SYS_RESOURCE", "CAP_SYS_ADMIN", "CAP_FUTURE_THING"],
      "effective": ["CAP_SYS_RESOURCE", "CAP_NET_ADMIN"],
      "permitted": ["CAP_SYS_RESOURCE"]
    },
    "oomScoreAdj": 0
  },
  "linux": {"resources": {"memory": {"limit": 9223372036854775807}}}
}`

func TestParseCapBnd(t *testing.T) {
	got, err := parseCapBnd(sampleStatus)
	if err != nil {
		t.Fatal(err)
	}
	if got != 0x1fffeffffff {
		t.Errorf("parseCapBnd = %#x, want %#x", got, uint64(0x1fffeffffff))
	}
	if bit, ok := capBit("CAP_SYS_RESOURCE"); !ok || bit != 24 || got&(1<<bit) != 0 {
		t.Error("CAP_SYS_RESOURCE (bit 24) should be missing from the sample mask")
	}
	if _, err := parseCapBnd("Name:\tcat\n"); err == nil {
		t.Error("parseCapBnd without a CapBnd line: want an error")
	}
	if _, err := parseCapBnd("CapBnd:\tzz\n"); err == nil {
		t.Error("parseCapBnd with a bad mask: want an error")
	}
}

func TestCapBit(t *testing.T) {
	for name, want := range map[string]uint{"CAP_CHOWN": 0, "CAP_SYS_ADMIN": 21, "CAP_CHECKPOINT_RESTORE": 40} {
		if got, ok := capBit(name); !ok || got != want {
			t.Errorf("capBit(%s) = %d, %v; want %d", name, got, ok, want)
		}
	}
	if _, ok := capBit("CAP_FUTURE_THING"); ok {
		t.Error("an unknown capability was given a bit")
	}
}

func TestFilterSpecRemovesMissingCapabilities(t *testing.T) {
	bounding, _ := parseCapBnd(sampleStatus)
	out, changed, err := filterSpec([]byte(sampleConfig), false, bounding)
	if err != nil {
		t.Fatal(err)
	}
	if !changed {
		t.Fatal("filterSpec reported no change for a spec asking for CAP_SYS_RESOURCE")
	}
	var doc struct {
		Process struct {
			Capabilities map[string][]string
			OOMScoreAdj  *int `json:"oomScoreAdj"`
		}
		Linux struct {
			Resources struct {
				Memory struct {
					Limit json.Number
				}
			}
		}
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{
		"bounding":  {"CAP_CHOWN", "CAP_SYS_ADMIN", "CAP_FUTURE_THING"},
		"effective": {"CAP_NET_ADMIN"},
		"permitted": {},
	}
	if !reflect.DeepEqual(doc.Process.Capabilities, want) {
		t.Errorf("capabilities = %v, want %v", doc.Process.Capabilities, want)
	}
	if doc.Process.OOMScoreAdj == nil {
		t.Error("oomScoreAdj was dropped")
	}
	if doc.Linux.Resources.Memory.Limit != "9223372036854775807" {
		t.Errorf("large number changed to %s", doc.Linux.Resources.Memory.Limit)
	}
}

func TestFilterSpecKeepsGrantableSpec(t *testing.T) {
	spec := `{"process":{"capabilities":{"bounding":["CAP_CHOWN","CAP_SYS_RESOURCE"]}}}`
	out, changed, err := filterSpec([]byte(spec), false, ^uint64(0))
	if err != nil {
		t.Fatal(err)
	}
	if changed || string(out) != spec {
		t.Errorf("filterSpec changed a spec the host can grant: %s", out)
	}
	if _, _, err := filterSpec([]byte("{not json"), false, 0); err == nil {
		t.Error("filterSpec of invalid JSON: want an error")
	}
}

func TestFilterFileProcessSpec(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "process.json")
	if err := os.WriteFile(path, []byte(`{"args":["sh"],"capabilities":{"bounding":["CAP_SYS_RESOURCE","CAP_KILL"]}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	bounding, _ := parseCapBnd(sampleStatus)
	if err := filterFile(target{path: path, isProcess: true}, bounding); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var proc struct {
		Args         []string
		Capabilities map[string][]string
	}
	if err := json.Unmarshal(data, &proc); err != nil {
		t.Fatal(err)
	}
	if got := proc.Capabilities["bounding"]; !reflect.DeepEqual(got, []string{"CAP_KILL"}) {
		t.Errorf("bounding = %v, want [CAP_KILL]", got)
	}
	if !reflect.DeepEqual(proc.Args, []string{"sh"}) {
		t.Errorf("args = %v, want [sh]", proc.Args)
	}
	if err := filterFile(target{path: filepath.Join(dir, "missing.json")}, bounding); err == nil {
		t.Error("filterFile of a missing file: want an error")
	}
}

func TestSpecTarget(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want target
	}{
		{"create with bundle", []string{"--root", "/run/r", "--log", "/l.json", "--log-format", "json", "create", "--bundle", "/b", "--pid-file", "/p", "id"}, target{path: "/b/config.json"}},
		{"run with -b=", []string{"run", "-b=/x", "id"}, target{path: "/x/config.json"}},
		{"create in working dir", []string{"--systemd-cgroup", "create", "id"}, target{path: "config.json"}},
		{"exec process", []string{"--root", "/r", "exec", "--process", "/tmp/p.json", "--detach", "id"}, target{path: "/tmp/p.json", isProcess: true}},
		{"exec without process", []string{"exec", "id", "ls"}, target{}},
		{"start", []string{"--root", "/r", "start", "id"}, target{}},
		{"version", []string{"--version"}, target{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := specTarget(tt.args); got != tt.want {
				t.Errorf("specTarget(%q) = %+v, want %+v", tt.args, got, tt.want)
			}
		})
	}
}

func TestFindRunc(t *testing.T) {
	dir := t.TempDir()
	if got, _ := findRunc("/opt/runc", "", ""); got != "/opt/runc" {
		t.Errorf("override ignored: %s", got)
	}
	fake := filepath.Join(dir, "runc")
	if err := os.WriteFile(fake, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	got, err := findRunc("", dir, "/nonexistent")
	if err != nil || got != fake {
		t.Errorf("findRunc = %q, %v; want %q", got, err, fake)
	}
	// The program itself is never chosen, even when installed as "runc".
	if got, _ := findRunc("", dir, fake); got == fake {
		t.Errorf("findRunc chose the program itself: %s", got)
	}
}
