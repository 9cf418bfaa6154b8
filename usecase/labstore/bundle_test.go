package labstore

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/labctl/labctl/internal/bundle"
	"github.com/labctl/labctl/lab"
)

// pack packs writeLab's lab into a bundle file with fake images and
// returns its path.
func pack(t *testing.T, version string) string {
	t.Helper()
	src := t.TempDir()
	writeLab(t, src, "small", version)
	l, err := lab.Load(filepath.Join(src, LabFile))
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), BundleName(l))
	m, err := Pack(context.Background(), PackOptions{
		LabFile: filepath.Join(src, LabFile), Lab: l, Output: out, Labctl: "v9.9.9",
		Images: smallImages, SaveImages: (&fakeImages{}).save,
	})
	if err != nil {
		t.Fatal(err)
	}
	if m.Lab.Name != "small" || m.Lab.Version != version || m.Format != bundle.FormatVersion || len(m.Images) != 2 {
		t.Fatalf("manifest %+v", m)
	}
	return out
}

func TestBundleRoundTrip(t *testing.T) {
	file := pack(t, "1")
	if filepath.Base(file) != "small-1.labctl.tar" {
		t.Errorf("bundle named %s", filepath.Base(file))
	}
	// One tar file: the manifest first, the lab's files under lab/, the
	// images last.
	names := tarNames(t, file)
	if names[0] != bundle.ManifestName || names[len(names)-1] != bundle.ImagesName || !slices.Contains(names, "lab/lab.yaml") ||
		!slices.Contains(names, "lab/fixtures/bin/run.sh") || slices.Contains(names, "lab/notes.txt") {
		t.Errorf("bundle entries %v", names)
	}

	images := &fakeImages{present: map[string]string{}}
	s := New(filepath.Join(t.TempDir(), "labs"))
	res, err := s.Install(context.Background(), file, Options{Images: images})
	if err != nil {
		t.Fatal(err)
	}
	if res.Meta.Kind != KindBundle || res.Meta.Source != file || !slices.Equal(res.Meta.Images, smallRefs) ||
		len(res.Loaded) != 2 {
		t.Errorf("result %+v", res)
	}
	if images.loaded() != 1 || !bytes.Equal(images.loads[0], savedImages()) {
		t.Errorf("docker load read %d streams, want the saved images once", images.loaded())
	}
	if got := modes(t, res.Dir); !slices.Equal(got, installedFiles) {
		t.Errorf("installed from the bundle:\n%s", strings.Join(got, "\n"))
	}
	// The same files as installed from the lab's directory.
	src := t.TempDir()
	writeLab(t, src, "small", "1")
	if res2, err := s.Install(context.Background(), src, Options{}); err != nil || !res2.Unchanged {
		t.Errorf("the lab's directory after its bundle: %+v, %v", res2, err)
	}

	// Again, with the images present: nothing changes, nothing is loaded.
	images.present = map[string]string{smallRefs[0]: smallImages[0].ID, smallRefs[1]: smallImages[1].ID}
	before := tree(t, s.Dir())
	res, err = s.Install(context.Background(), file, Options{Images: images})
	if err != nil || !res.Unchanged || len(res.Loaded) != 0 || images.loaded() != 1 {
		t.Errorf("second install: %+v, %v, %d loads", res, err, images.loaded())
	}
	if tree(t, s.Dir()) != before {
		t.Error("a second install of the bundle changed the labs directory")
	}
	// An image missing: loaded again.
	delete(images.present, smallRefs[1])
	if res, err := s.Install(context.Background(), file, Options{Images: images}); err != nil || !res.Unchanged || images.loaded() != 2 {
		t.Errorf("install with an image missing: %+v, %v, %d loads", res, err, images.loaded())
	}
	// Another image under its name is never replaced.
	images.present[smallRefs[1]] = "sha256:other"
	_, err = s.Install(context.Background(), file, Options{Images: images})
	if err == nil || !strings.Contains(err.Error(), "docker rmi "+smallRefs[1]) || images.loaded() != 2 || images.present[smallRefs[1]] != "sha256:other" {
		t.Errorf("install with another image of the name: %v, %d loads", err, images.loaded())
	}
	if tree(t, s.Dir()) != before {
		t.Error("reloading the images changed the labs directory")
	}
}

func tarNames(t *testing.T, file string) []string {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var names []string
	tr := tar.NewReader(f)
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			return names
		}
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, strings.TrimSuffix(hdr.Name, "/"))
	}
}

// damaged writes a copy of file changed by change into a new file.
func damaged(t *testing.T, file string, change func([]byte) []byte) string {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), filepath.Base(file))
	if err := os.WriteFile(out, change(bytes.Clone(b)), 0o644); err != nil {
		t.Fatal(err)
	}
	return out
}

func flipAt(marker string) func([]byte) []byte {
	return func(b []byte) []byte {
		i := bytes.Index(b, []byte(marker))
		if i < 0 {
			panic("no " + marker + " in the bundle")
		}
		b[i+len(marker)/2] ^= 0x20
		return b
	}
}

func cutAt(n func(size int) int) func([]byte) []byte {
	return func(b []byte) []byte { return b[:n(len(b))] }
}

// Damaged, foreign and broken bundles are refused with a message that says
// what is wrong and what to do; nothing is installed or loaded.
func TestBadBundlesAreRefused(t *testing.T) {
	good := pack(t, "1")
	body, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	offset := func(s string) int { return bytes.Index(body, []byte(s)) }
	garbage := make([]byte, 20000)
	rand.Read(garbage)

	cases := []struct {
		name   string
		file   string
		errors []string
	}{
		{"a byte flipped in a lab file", damaged(t, good, flipAt("replicas: 2")), []string{"is corrupt: lab/fixtures/repo/app.yaml has SHA-256", "download it again"}},
		{"a byte flipped in the images", damaged(t, good, flipAt("IMAGES-MARKER")), []string{"is corrupt: images.tar has SHA-256", "download it again"}},
		{"a byte flipped in a header", damaged(t, good, flipAt("lab/fixtures/bin/run.sh\x00")), []string{"is corrupt", "download it again"}},
		{"the format version", damaged(t, good, func(b []byte) []byte {
			return bytes.Replace(b, []byte(`"format": 1,`), []byte(`"format": 7,`), 1)
		}), []string{"has format version 7 (written by labctl v9.9.9), and this labctl reads version 1", "pack the lab again"}},
		{"garbage", damaged(t, good, func([]byte) []byte { return garbage }), []string{"is not a labctl bundle", "labctl pack"}},
		{"an empty file", damaged(t, good, func([]byte) []byte { return nil }), []string{"is not a labctl bundle (it is empty)"}},
		{"a tar file of something else", otherTar(t), []string{`is not a labctl bundle (its first entry is "notes.txt"`}},
	}
	for _, cut := range []struct {
		name string
		at   func(int) int
	}{
		{"inside the first header", func(int) int { return 100 }},
		{"inside the manifest", func(int) int { return 700 }},
		{"inside a lab file", func(int) int { return offset("replicas: 2") + 3 }},
		{"between entries", func(int) int { return offset("lab/fixtures/bin/run.sh\x00") }},
		{"inside the images", func(int) int { return offset("IMAGES-MARKER") + 2000 }},
		{"in the end blocks", func(n int) int { return n - 512 }},
		{"one byte short", func(n int) int { return n - 1 }},
	} {
		want := []string{"is truncated", "download it again"}
		if cut.name == "inside the first header" {
			want = []string{"before its manifest", "download it again"}
		}
		cases = append(cases, struct {
			name   string
			file   string
			errors []string
		}{"cut " + cut.name, damaged(t, good, cutAt(cut.at)), want})
	}
	cases = append(cases, struct {
		name   string
		file   string
		errors []string
	}{"a lab file with problems", brokenLabBundle(t), []string{"does not load, so nothing was installed", ":lab.yaml:5:1", "bogus"}})

	images := &fakeImages{present: map[string]string{}}
	s := New(filepath.Join(t.TempDir(), "labs"))
	src := t.TempDir()
	writeLab(t, src, "other", "1")
	if _, err := s.Install(context.Background(), src, Options{}); err != nil {
		t.Fatal(err)
	}
	before := tree(t, s.Dir())
	for _, tc := range cases {
		_, err := s.Install(context.Background(), tc.file, Options{Images: images})
		if err == nil {
			t.Errorf("%s: installed", tc.name)
			continue
		}
		for _, w := range tc.errors {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: the error lacks %q:\n%v", tc.name, w, err)
			}
		}
		t.Logf("%s: %v", tc.name, err)
		var be *bundle.Error
		if tc.name != "a lab file with problems" && !errors.As(err, &be) {
			t.Errorf("%s: %T, want a *bundle.Error", tc.name, err)
		}
		if after := tree(t, s.Dir()); after != before {
			t.Errorf("%s: the labs directory changed:\n%s\nthen:\n%s", tc.name, before, after)
		}
	}
	if images.loaded() != 0 {
		t.Errorf("a refused bundle's images were loaded (%d times)", images.loaded())
	}
}

// otherTar is a tar file that is no bundle.
func otherTar(t *testing.T) string {
	t.Helper()
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	tw.WriteHeader(&tar.Header{Name: "notes.txt", Mode: 0o644, Size: 3})
	tw.Write([]byte("hi\n"))
	tw.Close()
	file := filepath.Join(t.TempDir(), "notes.tar")
	if err := os.WriteFile(file, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return file
}

// brokenLabBundle is a sound bundle whose lab.yaml does not load.
func brokenLabBundle(t *testing.T) string {
	t.Helper()
	src := t.TempDir()
	writeLab(t, src, "small", "1")
	writeFile(t, filepath.Join(src, LabFile), "apiVersion: labctl.dev/v1alpha1\nkind: Lab\nmetadata: {name: small}\nsteps: []\nbogus: 1\n")
	files := []bundle.File{{Path: LabFile}, {Path: "README.md"}}
	digest, err := Digest(src, files)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "broken.labctl.tar")
	f, err := os.Create(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := bundle.Write(context.Background(), f, bundle.WriteOptions{
		LabDir: src, Files: files, Lab: bundle.Lab{Name: "small", Digest: digest}, Labctl: "v9.9.9",
		Images: smallImages, SaveImages: (&fakeImages{}).save,
	}); err != nil {
		t.Fatal(err)
	}
	return file
}

// Packing the built-in lab's name is refused: every labctl has it.
func TestPackRefusesTheBuiltInLab(t *testing.T) {
	src := t.TempDir()
	writeLab(t, src, BuiltIn, "1")
	l, err := lab.Load(filepath.Join(src, LabFile))
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "x.labctl.tar")
	if _, err := Pack(context.Background(), PackOptions{LabFile: filepath.Join(src, LabFile), Lab: l, Output: out}); err == nil {
		t.Error("packed the built-in lab")
	}
}

// A pack that fails (here: the images cannot be saved) leaves no file.
func TestFailedPackLeavesNoFile(t *testing.T) {
	src := t.TempDir()
	writeLab(t, src, "small", "1")
	l, err := lab.Load(filepath.Join(src, LabFile))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	_, err = Pack(context.Background(), PackOptions{
		LabFile: filepath.Join(src, LabFile), Lab: l, Output: filepath.Join(dir, "small.labctl.tar"), Images: smallImages,
		SaveImages: func(_ context.Context, w io.Writer) error {
			w.Write([]byte("partial"))
			return errors.New("docker save: no space left on device")
		},
	})
	if err == nil || !strings.Contains(err.Error(), "no space left") {
		t.Errorf("pack: %v", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("a failed pack left %v", entries)
	}
}
