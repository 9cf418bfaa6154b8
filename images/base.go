package images

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

const defaultDebianMirror = "http://deb.debian.org/debian"

// ensureBase returns the Debian base image both images build on: Debian's
// official image when pulling is allowed and a registry answers, else a
// root filesystem from debootstrap imported into Docker.
func (b *builder) ensureBase(ctx context.Context) (string, error) {
	ref := baseRef()
	if ok, err := b.imageExists(ctx, ref); err != nil || ok {
		return ref, err
	}
	if b.opts.Pull {
		if ok, err := b.imageExists(ctx, UpstreamDebianBase); err != nil || ok {
			return UpstreamDebianBase, err
		}
		if ok, _ := b.tryPull(ctx, UpstreamDebianBase); ok {
			return UpstreamDebianBase, nil
		}
	}
	err := b.progress.phase(ctx, "Building the Debian base "+ref, func(ctx context.Context) error {
		return b.buildBase(ctx, ref)
	})
	return ref, err
}

func (b *builder) buildBase(ctx context.Context, ref string) error {
	if _, err := exec.LookPath("debootstrap"); err != nil {
		return errors.New("debootstrap is not installed (apt-get install debootstrap), or pass --pull where a registry answers")
	}
	if os.Geteuid() != 0 {
		return errors.New("debootstrap needs root: run the image build as root (sudo), or load a bundle with `labctl images load FILE`")
	}
	mirror := debianMirror(readAptSources())
	work := filepath.Join(b.cacheDir, "base")
	if err := os.MkdirAll(work, 0o755); err != nil {
		return fmt.Errorf("creating %s: %w", work, err)
	}
	rootfs, err := os.MkdirTemp(work, "rootfs-")
	if err != nil {
		return fmt.Errorf("creating a directory for the root filesystem: %w", err)
	}
	defer os.RemoveAll(rootfs)
	if _, err := (command{
		args:    []string{"debootstrap", "--variant=minbase", debianSuite, rootfs, mirror},
		timeout: 30 * time.Minute, log: b.opts.Log,
	}).run(ctx); err != nil {
		return fmt.Errorf("debootstrap from %s: %w", mirror, err)
	}
	security := strings.TrimSuffix(mirror, "/debian") + "/debian-security"
	if !strings.HasSuffix(mirror, "/debian") {
		security = "http://deb.debian.org/debian-security"
	}
	sources := fmt.Sprintf("deb %[1]s %[3]s main\ndeb %[1]s %[3]s-updates main\ndeb %[2]s %[3]s-security main\n", mirror, security, debianSuite)
	if err := os.WriteFile(filepath.Join(rootfs, "etc/apt/sources.list"), []byte(sources), 0o644); err != nil {
		return fmt.Errorf("writing the base's apt sources: %w", err)
	}
	// Keep images small: no recommends, no documentation.
	aptConf := "APT::Install-Recommends \"false\";\nAPT::Install-Suggests \"false\";\n"
	if err := os.WriteFile(filepath.Join(rootfs, "etc/apt/apt.conf.d/90labctl"), []byte(aptConf), 0o644); err != nil {
		return fmt.Errorf("writing the base's apt settings: %w", err)
	}
	for _, dir := range []string{"var/lib/apt/lists", "var/cache/apt/archives"} {
		if err := clearDir(filepath.Join(rootfs, dir)); err != nil {
			return err
		}
	}
	if _, err := (command{
		args: []string{"bash", "-o", "pipefail", "-c",
			`tar --numeric-owner -C "$1" -c . | docker import --change 'CMD ["/bin/bash"]' --change 'ENV LANG=C.UTF-8' - "$2"`,
			"import", rootfs, ref},
		timeout: 10 * time.Minute, log: b.opts.Log,
	}).run(ctx); err != nil {
		return fmt.Errorf("importing the root filesystem: %w", err)
	}
	return nil
}

// clearDir removes the files directly in dir, keeping subdirectories.
func clearDir(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		if os.IsNotExist(err) {
			return nil
		}
		return fmt.Errorf("cleaning %s: %w", dir, err)
	}
	for _, e := range entries {
		if !e.IsDir() {
			if err := os.Remove(filepath.Join(dir, e.Name())); err != nil {
				return fmt.Errorf("cleaning %s: %w", dir, err)
			}
		}
	}
	return nil
}

// readAptSources returns the text of the machine's apt source files.
func readAptSources() string {
	var sb strings.Builder
	files, _ := filepath.Glob("/etc/apt/sources.list.d/*")
	for _, f := range append([]string{"/etc/apt/sources.list"}, files...) {
		if data, err := os.ReadFile(f); err == nil {
			sb.Write(data)
			sb.WriteString("\n")
		}
	}
	return sb.String()
}

// debianMirror returns the first Debian archive (a URI ending in /debian)
// in apt sources, one-line or deb822 style, or deb.debian.org.
func debianMirror(sources string) string {
	sc := bufio.NewScanner(strings.NewReader(sources))
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 || strings.HasPrefix(fields[0], "#") {
			continue
		}
		var uris []string
		switch {
		case fields[0] == "deb":
			rest := fields[1:]
			if len(rest) > 0 && strings.HasPrefix(rest[0], "[") {
				for i, f := range rest {
					if strings.HasSuffix(f, "]") {
						rest = rest[i+1:]
						break
					}
				}
			}
			if len(rest) > 0 {
				uris = rest[:1]
			}
		case fields[0] == "URIs:":
			uris = fields[1:]
		}
		for _, u := range uris {
			u = strings.TrimSuffix(u, "/")
			if strings.HasSuffix(u, "/debian") && (strings.HasPrefix(u, "http://") || strings.HasPrefix(u, "https://")) {
				return u
			}
		}
	}
	return defaultDebianMirror
}
