package labstore

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// A lab asking for privileged Pod Security installs only with
// AllowHostAccess, which its record keeps; a lab installed before its
// consent was recorded gets it from the same install with the flag.
func TestInstallConsent(t *testing.T) {
	src := t.TempDir()
	writeLab(t, src, "small", "1")
	file := filepath.Join(src, "lab.yaml")
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, file, strings.Replace(string(data), "  namespaces: [small]\n", "  namespaces: [small]\n  podSecurity: privileged\n", 1))
	s := New(filepath.Join(t.TempDir(), "labs"))
	_, err = s.Install(context.Background(), src, Options{})
	var refused *HostAccessError
	if !errors.As(err, &refused) || len(refused.Risks) != 1 || refused.Risks[0].Key() != "cluster.podSecurity: privileged" {
		t.Fatalf("install without consent: %v", err)
	}
	if names := s.Names(); len(names) != 0 {
		t.Fatalf("a refused lab was installed: %v", names)
	}
	res, err := s.Install(context.Background(), src, Options{AllowHostAccess: true})
	if err != nil {
		t.Fatal(err)
	}
	l := res.Lab
	if !slices.Equal(res.Meta.HostAccess, []string{"cluster.podSecurity: privileged"}) || !Consented(res.Dir, l.Risks()) {
		t.Fatalf("consent not recorded: %+v", res.Meta)
	}
	// An install record without the consent (an older labctl's).
	m, err := readMeta(res.Dir)
	if err != nil {
		t.Fatal(err)
	}
	m.HostAccess = nil
	if err := writeMeta(res.Dir, m); err != nil {
		t.Fatal(err)
	}
	if Consented(res.Dir, l.Risks()) {
		t.Fatal("consent found in a record without it")
	}
	res, err = s.Install(context.Background(), src, Options{AllowHostAccess: true})
	if err != nil || !res.Unchanged || !Consented(res.Dir, l.Risks()) {
		t.Fatalf("install again with consent: %v, %+v", err, res)
	}
}
