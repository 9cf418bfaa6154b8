package bundle

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
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// File is one of the lab's files or directories to pack, by its
// slash-separated path relative to the lab's directory.
type File struct {
	Path string
	Dir  bool
	// From is the file's host path when it is not at Path in the lab's
	// directory (a lab file of another name goes in as lab.yaml).
	From string
}

// HostPath is where f is on the host, for the lab in dir.
func (f File) HostPath(dir string) string {
	if f.From != "" {
		return f.From
	}
	return filepath.Join(dir, filepath.FromSlash(f.Path))
}

// WriteOptions say what Write puts into a bundle.
type WriteOptions struct {
	// LabDir is the lab's directory and Files what of it goes in, in
	// order (lab.yaml among them; a directory before what it holds).
	LabDir string
	Files  []File
	Lab    Lab
	// Labctl is the version of the labctl writing the bundle.
	Labctl string
	Images []Image
	// SaveImages writes one `docker save` tar of Images to w; it is
	// called only when there are images.
	SaveImages func(ctx context.Context, w io.Writer) error
	// Now is the bundle's creation time; zero is time.Now().
	Now time.Time
}

// Write writes a bundle into f, an empty file open for writing, and
// returns its manifest. The images entry's size and hash are known only
// once `docker save` is done, so Write reserves room for the manifest and
// the images entry's header and fills them in last: the bundle is written
// once, streaming, and nothing of it is held in memory.
func Write(ctx context.Context, f *os.File, o WriteOptions) (*Manifest, error) {
	now := o.Now
	if now.IsZero() {
		now = time.Now()
	}
	now = now.UTC().Truncate(time.Second)
	m := &Manifest{Format: FormatVersion, Lab: o.Lab, Labctl: o.Labctl, Created: now, Images: o.Images}
	if m.Images == nil {
		m.Images = []Image{}
	}
	var sources []string // host paths, by entry
	for _, file := range o.Files {
		e, err := describe(file.HostPath(o.LabDir), file)
		if err != nil {
			return nil, err
		}
		m.Entries = append(m.Entries, e)
		sources = append(sources, file.HostPath(o.LabDir))
	}
	if len(o.Images) > 0 {
		// The largest size there can be, so that the real one fits.
		m.Entries = append(m.Entries, Entry{Path: ImagesName, Kind: KindImages, Size: math.MaxInt64, SHA256: strings.Repeat("0", 64)})
	}
	if err := m.check(); err != nil {
		return nil, fmt.Errorf("packing the lab: %w", err)
	}
	reserved, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return nil, err
	}
	room := len(reserved) + 1

	cw := &countWriter{w: f}
	tw := tar.NewWriter(cw)
	if err := tw.WriteHeader(&tar.Header{Name: ManifestName, Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(room), ModTime: now, Format: tar.FormatUSTAR}); err != nil {
		return nil, err
	}
	manifestAt := cw.n
	if _, err := tw.Write(padded(reserved, room)); err != nil {
		return nil, err
	}
	for i, e := range m.Entries {
		if e.Kind == KindImages {
			n, sum, err := writeImages(ctx, f, tw, cw, e, now, o.SaveImages)
			if err != nil {
				return nil, err
			}
			m.Entries[i].Size, m.Entries[i].SHA256 = n, sum
			continue
		}
		if err := writeLabEntry(ctx, tw, sources[i], e, now); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	final, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return nil, err
	}
	if len(final) >= room {
		return nil, errors.New("packing the lab: the manifest outgrew its room") // cannot happen: sizes only shrink
	}
	if _, err := f.WriteAt(padded(final, room), manifestAt); err != nil {
		return nil, err
	}
	return m, f.Sync()
}

// padded is b followed by a newline and spaces up to n bytes (JSON allows
// trailing white space).
func padded(b []byte, n int) []byte {
	out := make([]byte, n)
	copy(out, b)
	out[len(b)] = '\n'
	for i := len(b) + 1; i < n; i++ {
		out[i] = ' '
	}
	return out
}

// describe is the manifest entry of one of the lab's files, at src on the
// host: its size and hash as it is now.
func describe(src string, file File) (Entry, error) {
	e := Entry{Path: LabPrefix + file.Path, Kind: KindDir}
	if file.Dir {
		return e, nil
	}
	e.Kind = KindFile
	info, err := os.Stat(src)
	if err != nil {
		return e, fmt.Errorf("packing the lab: %w", err)
	}
	if !info.Mode().IsRegular() {
		return e, fmt.Errorf("packing the lab: %s is not a regular file", src)
	}
	in, err := os.Open(src)
	if err != nil {
		return e, fmt.Errorf("packing the lab: %w", err)
	}
	defer in.Close()
	h := sha256.New()
	n, err := io.Copy(h, in)
	if err != nil {
		return e, fmt.Errorf("packing the lab: reading %s: %w", src, err)
	}
	e.Size, e.SHA256, e.Executable = n, hex.EncodeToString(h.Sum(nil)), info.Mode().Perm()&0o111 != 0
	return e, nil
}

// writeLabEntry writes one of the lab's files (from src) or directories,
// checking that a file is still what describe saw.
func writeLabEntry(ctx context.Context, tw *tar.Writer, src string, e Entry, now time.Time) error {
	if e.Kind == KindDir {
		return tw.WriteHeader(&tar.Header{Name: e.Path + "/", Typeflag: tar.TypeDir, Mode: 0o755, ModTime: now, Format: tar.FormatPAX})
	}
	mode := int64(0o644)
	if e.Executable {
		mode = 0o755
	}
	if err := tw.WriteHeader(&tar.Header{Name: e.Path, Typeflag: tar.TypeReg, Mode: mode, Size: e.Size, ModTime: now, Format: tar.FormatPAX}); err != nil {
		return err
	}
	in, err := os.Open(src)
	if err != nil {
		return fmt.Errorf("packing the lab: %w", err)
	}
	defer in.Close()
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(tw, h), io.LimitReader(ctxReader{ctx, in}, e.Size))
	if err != nil {
		return fmt.Errorf("packing the lab: %s: %w", src, err)
	}
	if n != e.Size || hex.EncodeToString(h.Sum(nil)) != e.SHA256 {
		return fmt.Errorf("packing the lab: %s changed while it was packed: pack again", src)
	}
	return nil
}

// writeImages writes the images entry: a header block held open, the
// `docker save` stream, its padding, and then the header with the size the
// stream had. It returns the size and hex SHA-256 of the stream.
func writeImages(ctx context.Context, f *os.File, tw *tar.Writer, cw *countWriter, e Entry, now time.Time,
	save func(context.Context, io.Writer) error) (int64, string, error) {
	if save == nil {
		return 0, "", errors.New("packing the lab: no way to save its images")
	}
	if err := tw.Flush(); err != nil { // pads the entry before
		return 0, "", err
	}
	headerAt := cw.n
	if _, err := cw.Write(make([]byte, blockSize)); err != nil {
		return 0, "", err
	}
	start := cw.n
	h := sha256.New()
	if err := save(ctx, io.MultiWriter(cw, h)); err != nil {
		return 0, "", err
	}
	n := cw.n - start
	if pad := (blockSize - n%blockSize) % blockSize; pad > 0 {
		if _, err := cw.Write(make([]byte, pad)); err != nil {
			return 0, "", err
		}
	}
	// GNU's header holds any size in one block.
	var hdr bytes.Buffer
	if err := tar.NewWriter(&hdr).WriteHeader(&tar.Header{Name: e.Path, Typeflag: tar.TypeReg, Mode: 0o644, Size: n, ModTime: now, Format: tar.FormatGNU}); err != nil {
		return 0, "", err
	}
	if hdr.Len() != blockSize {
		return 0, "", fmt.Errorf("packing the lab: the images entry's header takes %d bytes", hdr.Len())
	}
	if _, err := f.WriteAt(hdr.Bytes(), headerAt); err != nil {
		return 0, "", err
	}
	return n, hex.EncodeToString(h.Sum(nil)), nil
}

const blockSize = 512

// countWriter counts the bytes written through it.
type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// ctxReader stops a copy when ctx ends.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
