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
	"hash"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/labctl/labctl/internal/countio"
)

// Error is a bundle labctl refuses, saying why and what to do.
type Error struct {
	File string
	// Problem completes "the bundle FILE ...".
	Problem string
	// Fix says what to do.
	Fix string
}

func (e *Error) Error() string {
	return fmt.Sprintf("the bundle %s %s: %s", e.File, e.Problem, e.Fix)
}

const downloadAgain = "download it again (or copy it again from where it was packed)"

func (r *reader) truncated(where string) error {
	return &Error{File: r.file, Problem: "is truncated: it ends " + where, Fix: downloadAgain}
}

func (r *reader) corrupt(format string, args ...any) error {
	return &Error{File: r.file, Problem: "is corrupt: " + fmt.Sprintf(format, args...), Fix: downloadAgain}
}

// Bundle is a bundle whose every entry Verify checked.
type Bundle struct {
	Manifest Manifest
	file     string
	// images is where the images entry's data starts, and its entry.
	imagesAt int64
	images   *Entry
}

// Verify reads the bundle file and checks it against its manifest while
// it writes the lab's files (the entries under lab/, without the prefix)
// into labDir, an empty directory: the format version, every entry in
// order with its kind, size and SHA-256, the images entry's hash, and the
// end of the archive. A bundle that is damaged, of another format or no
// bundle at all is an *Error; whatever was written to labDir then is the
// caller's to remove. The images stay in the file: OpenImages reads them.
//
// Before anything is written, allow (when not nil) is asked about the path
// of every entry under lab/ (relative to labDir, slash-separated): its
// error refuses the bundle. Nothing is written beyond what the manifest
// lists and sizes: the sizes it lists must fit in the file; an entry is a
// directory or a regular file of exactly its listed size (no sparse file,
// link, device or FIFO), checked from its header before its bytes are
// copied; files are created new, never through an existing path.
func Verify(ctx context.Context, file, labDir string, allow func(rel string) error) (*Bundle, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, fmt.Errorf("opening the bundle: %w", err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("opening the bundle: %w", err)
	}
	if !info.Mode().IsRegular() {
		return nil, &Error{File: file, Problem: "is not a regular file", Fix: "give the file `labctl pack` wrote"}
	}
	r := &reader{file: file, cr: &countio.Reader{R: ctxReader{ctx, f}}}
	r.tr = tar.NewReader(r.cr)
	m, err := r.manifest()
	if err != nil {
		return nil, err
	}
	var total int64
	for _, e := range m.Entries {
		if allow != nil && e.Kind != KindImages {
			if err := allow(strings.TrimPrefix(e.Path, LabPrefix)); err != nil {
				return nil, &Error{File: file, Problem: "is refused: " + err.Error(), Fix: "nothing was installed"}
			}
		}
		if e.Kind != KindDir {
			total += e.Size // each at most the file's size: no overflow
		}
		if e.Size > info.Size() || total > info.Size() {
			return nil, &Error{File: file, Problem: fmt.Sprintf("is truncated: its manifest lists %s bytes of content, and the file has %d bytes in all", sizeSum(m.Entries), info.Size()), Fix: downloadAgain}
		}
	}
	b := &Bundle{Manifest: *m, file: file}
	for i := range m.Entries {
		e := &m.Entries[i]
		if err := r.entry(ctx, e, labDir); err != nil {
			return nil, err
		}
		if e.Kind == KindImages {
			b.imagesAt, b.images = r.start, e
		}
	}
	if err := r.end(); err != nil {
		return nil, err
	}
	return b, nil
}

// reader reads one bundle.
type reader struct {
	file string
	cr   *countio.Reader
	tr   *tar.Reader
	// start and size are the data offset and size of the last entry read.
	start, size int64
	last        string
}

// manifest reads and checks the first entry.
func (r *reader) manifest() (*Manifest, error) {
	notBundle := func(why string) error {
		return &Error{File: r.file, Problem: "is not a labctl bundle (" + why + ")", Fix: "give a file written by `labctl pack`"}
	}
	hdr, err := r.tr.Next()
	switch {
	case errors.Is(err, io.EOF) && r.cr.N == 0:
		return nil, notBundle("it is empty")
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return nil, r.truncated("before its manifest")
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return nil, err
	case err != nil:
		return nil, notBundle("it is not a tar archive")
	case hdr.Name != ManifestName:
		return nil, notBundle(fmt.Sprintf("its first entry is %q, not %s", hdr.Name, ManifestName))
	case hdr.Typeflag != tar.TypeReg || hdr.Size <= 0 || hdr.Size > maxManifest:
		return nil, r.corrupt("its manifest's header is damaged")
	}
	data, err := io.ReadAll(r.tr)
	if err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, r.truncated("inside its manifest")
		}
		return nil, err
	}
	var head struct {
		Format int    `json:"format"`
		Labctl string `json:"labctl"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return nil, r.corrupt("its manifest is not JSON (%v)", err)
	}
	if head.Format != FormatVersion {
		by := ""
		if head.Labctl != "" {
			by = " (written by labctl " + head.Labctl + ")"
		}
		return nil, &Error{File: r.file, Problem: fmt.Sprintf("has format version %d%s, and this labctl reads version %d", head.Format, by, FormatVersion),
			Fix: "install it with the labctl that packed it, or pack the lab again with this labctl"}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var m Manifest
	if err := dec.Decode(&m); err != nil {
		return nil, r.corrupt("its manifest does not decode (%v)", err)
	}
	if err := m.check(); err != nil {
		return nil, r.corrupt("%v", err)
	}
	r.last = ManifestName
	return &m, nil
}

// entry reads the next entry, which must be e, and checks it: a directory
// or file of the lab is made in labDir, the images are only hashed.
func (r *reader) entry(ctx context.Context, e *Entry, labDir string) error {
	hdr, err := r.tr.Next()
	switch {
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return r.truncated(fmt.Sprintf("after %s, before %s", r.last, e.Path))
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return err
	case err != nil:
		return r.corrupt("the header after %s is damaged (%v)", r.last, err)
	}
	r.start, r.size = r.cr.N, hdr.Size
	if name := strings.TrimSuffix(hdr.Name, "/"); name != e.Path {
		return r.corrupt("it holds %q where the manifest says %s", hdr.Name, e.Path)
	}
	wantType := byte(tar.TypeReg)
	if e.Kind == KindDir {
		wantType = tar.TypeDir
	}
	if hdr.Typeflag != wantType || (e.Kind != KindDir && hdr.Size != e.Size) || (e.Kind == KindDir && hdr.Size != 0) {
		return r.corrupt("%s's header (type %q, %d bytes) differs from the manifest (%s, %d bytes)", e.Path, hdr.Typeflag, hdr.Size, e.Kind, e.Size)
	}
	for k := range hdr.PAXRecords {
		if strings.HasPrefix(k, "GNU.sparse.") {
			return r.corrupt("%s is a sparse entry (%s), which a bundle never holds", e.Path, k)
		}
	}
	r.last = e.Path
	var h hash.Hash
	switch e.Kind {
	case KindDir:
		return os.MkdirAll(filepath.Join(labDir, labPath(e.Path)), 0o755)
	case KindImages:
		h = sha256.New()
		err = r.copy(h, e)
	default:
		h = sha256.New()
		err = r.writeFile(ctx, h, e, labDir)
	}
	if err != nil {
		return err
	}
	if sum := hex.EncodeToString(h.Sum(nil)); sum != e.SHA256 {
		return r.corrupt("%s has SHA-256 %.12s…, the manifest says %.12s…", e.Path, sum, e.SHA256)
	}
	return nil
}

// labPath is the host path, relative to the lab's directory, of an entry
// under lab/.
func labPath(entry string) string {
	return filepath.FromSlash(strings.TrimPrefix(entry, LabPrefix))
}

func (r *reader) writeFile(ctx context.Context, h hash.Hash, e *Entry, labDir string) error {
	dst := filepath.Join(labDir, labPath(e.Path))
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	mode := os.FileMode(0o644)
	if e.Executable {
		mode = 0o755
	}
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return err
	}
	if err := r.copy(io.MultiWriter(out, h), e); err != nil {
		out.Close()
		return err
	}
	if err := out.Close(); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return os.Chmod(dst, mode) // whatever the umask
}

// copy copies the current entry's data to w: e.Size bytes at most, and
// no more than the archive holds for it (a sparse entry, whose data the
// reader would make up, is refused before).
func (r *reader) copy(w io.Writer, e *Entry) error {
	before := r.cr.N
	n, err := io.Copy(w, io.LimitReader(r.tr, e.Size))
	if err == nil && r.cr.N-before < n {
		return r.corrupt("%s holds %d bytes where its archive has %d", e.Path, n, r.cr.N-before)
	}
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF) || (err == nil && n < e.Size):
		return r.truncated(fmt.Sprintf("inside %s (%d of its %d bytes are there)", e.Path, n, e.Size))
	case err != nil:
		return err
	}
	return nil
}

// end checks that the archive ends after the last entry with the two zero
// blocks of a complete tar file.
func (r *reader) end() error {
	hdr, err := r.tr.Next()
	switch {
	case err == nil:
		return r.corrupt("it holds %q, which its manifest does not list", hdr.Name)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return r.truncated("in its last blocks")
	case !errors.Is(err, io.EOF):
		return r.corrupt("its end is damaged (%v)", err)
	}
	want := r.start + (r.size+blockSize-1)/blockSize*blockSize + 2*blockSize
	if r.cr.N < want {
		return r.truncated("in its last blocks")
	}
	return nil
}

// File is the bundle's file.
func (b *Bundle) File() string { return b.file }

// OpenImages opens the images entry, for `docker load`. Reading it to its
// end checks its hash once more: a file changed since Verify fails then
// with an *Error. It is nil, nil for a bundle without images.
func (b *Bundle) OpenImages() (io.ReadCloser, error) {
	if b.images == nil {
		return nil, nil
	}
	f, err := os.Open(b.file)
	if err != nil {
		return nil, fmt.Errorf("opening the bundle: %w", err)
	}
	return &imagesReader{
		f: f, r: io.NewSectionReader(f, b.imagesAt, b.images.Size), h: sha256.New(),
		want: b.images.SHA256, rd: &reader{file: b.file},
	}, nil
}

type imagesReader struct {
	f    *os.File
	r    io.Reader
	h    hash.Hash
	want string
	rd   *reader
}

func (i *imagesReader) Read(p []byte) (int, error) {
	n, err := i.r.Read(p)
	i.h.Write(p[:n])
	if errors.Is(err, io.EOF) {
		if sum := hex.EncodeToString(i.h.Sum(nil)); sum != i.want {
			return n, i.rd.corrupt("%s changed since it was checked (SHA-256 %.12s…, the manifest says %.12s…)", ImagesName, sum, i.want)
		}
	}
	return n, err
}

func (i *imagesReader) Close() error { return i.f.Close() }

// sizeSum is the sum of the sizes of entries, for messages.
func sizeSum(entries []Entry) string {
	var sum uint64
	for _, e := range entries {
		if e.Kind != KindDir && e.Size > 0 {
			sum += uint64(e.Size)
		}
	}
	return fmt.Sprint(sum)
}
