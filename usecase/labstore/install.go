package labstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/labctl/labctl/internal/bundle"
	"github.com/labctl/labctl/internal/flock"
	"github.com/labctl/labctl/internal/labread"
	"github.com/labctl/labctl/lab"
)

// BuiltIn is the name of the lab built into labctl: no installed lab may
// take it.
const BuiltIn = "gitops-drift"

// Images is the local Docker engine as a bundle install needs it.
type Images interface {
	// Present returns the ID of each of refs the engine has.
	Present(ctx context.Context, refs []string) (map[string]string, error)
	// Load loads a `docker save` stream and returns the references it held.
	Load(ctx context.Context, r io.Reader) ([]string, error)
}

// Options tune an install.
type Options struct {
	// Ref is the branch, tag or commit of a git source; empty is its HEAD.
	Ref string
	// Subdir is the lab's directory inside a git repository.
	Subdir string
	// Force replaces an installed lab of the same name whose files differ.
	Force bool
	// AllowHostAccess is the user's consent to a lab that asks for what
	// reaches the host (lab.Lab.Risks); without it such a lab is refused
	// with a *HostAccessError. The consent is recorded with the lab.
	AllowHostAccess bool
	// Images loads a bundle's images; a bundle that holds images needs it.
	Images Images
	// Waiting is called when another install holds the labs directory.
	Waiting func()
	// Now is the install's time; nil is time.Now.
	Now func() time.Time
}

// Result is what an install did.
type Result struct {
	Lab *lab.Lab
	// Dir is the installed lab's directory.
	Dir  string
	Meta Meta
	// Unchanged is true when the same files were installed already: the
	// labs directory was left as it was.
	Unchanged bool
	// Previous is the record of the lab that an install with Force
	// replaced (or of the same lab, when Unchanged).
	Previous *Meta
	// Loaded are the images a bundle's install loaded; none when the
	// engine had every one of them.
	Loaded []string
}

// ExistsError refuses to replace an installed lab by other files of the
// same name without Force.
type ExistsError struct {
	Name      string
	Installed *Meta
}

func (e *ExistsError) Error() string {
	from := ""
	if e.Installed != nil {
		from = " (from " + e.Installed.Origin() + ")"
	}
	return fmt.Sprintf("another lab named %s is installed%s, with other files: pass --force to replace it, or `labctl labs` to see it", e.Name, from)
}

// Kind says what source is: a bundle file, a lab's directory (or a lab
// file in one), or a git repository (a URL, a local repository without a
// lab.yaml at its top, or any local directory when ref is set).
func Kind(source, ref string) (string, error) {
	if gitURL(source) {
		return KindGit, nil
	}
	info, err := os.Stat(source)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("%s does not exist: give a lab's directory, a git URL or a bundle file", source)
		}
		return "", err
	}
	if !info.IsDir() {
		if ref != "" {
			return "", fmt.Errorf("--ref goes with a git repository, and %s is a file", source)
		}
		if isYAML(source) {
			return KindDir, nil
		}
		return KindBundle, nil
	}
	if ref != "" {
		return KindGit, nil
	}
	if _, err := os.Stat(filepath.Join(source, LabFile)); err == nil {
		return KindDir, nil
	}
	if isRepository(source) {
		return KindGit, nil
	}
	return "", fmt.Errorf("%s holds no %s and is no git repository: give a lab's directory, a git URL or a bundle file", source, LabFile)
}

func isYAML(p string) bool {
	return strings.HasSuffix(p, ".yaml") || strings.HasSuffix(p, ".yml")
}

// Install installs the lab at source (see Kind) into the labs directory.
func (s *Store) Install(ctx context.Context, source string, o Options) (*Result, error) {
	kind, err := Kind(source, o.Ref)
	if err != nil {
		return nil, err
	}
	if o.Subdir != "" && kind != KindGit {
		return nil, fmt.Errorf("--subdir goes with a git repository, and %s is a %s", source, map[string]string{KindDir: "lab directory", KindBundle: "bundle"}[kind])
	}
	return s.install(ctx, o, func(ctx context.Context, st *staging) (*Meta, error) {
		switch kind {
		case KindGit:
			return st.fromGit(ctx, source, o)
		case KindBundle:
			return st.fromBundle(ctx, source)
		default:
			return st.fromDir(source)
		}
	})
}

// staging is one install's work directory inside the labs directory: the
// lab is put together in lab/, which is then renamed into place.
type staging struct {
	dir string
	// shown names the lab file in messages, as its source does.
	shown string
	// bundle is the bundle being installed, verified.
	bundle *bundle.Bundle
}

func (st *staging) labDir() string { return filepath.Join(st.dir, "lab") }

// install takes the labs directory's lock, has fill put the lab into a
// staging directory and describe it, checks the lab and lands it.
func (s *Store) install(ctx context.Context, o Options, fill func(context.Context, *staging) (*Meta, error)) (*Result, error) {
	if err := os.MkdirAll(s.dir, 0o755); err != nil {
		return nil, fmt.Errorf("making the labs directory: %w", err)
	}
	unlock, err := flock.Lock(ctx, filepath.Join(s.dir, ".lock"), flock.Options{Waiting: o.Waiting})
	if err != nil {
		return nil, err
	}
	defer unlock()
	s.removeStale()
	work, err := os.MkdirTemp(s.dir, stagingPrefix+"*")
	if err != nil {
		return nil, fmt.Errorf("making a staging directory in the labs directory: %w", err)
	}
	defer os.RemoveAll(work)
	// The labs directory is labctl's own, named by the environment: its
	// path is resolved once, and the staged lab read beneath it by labread.
	if real, err := filepath.EvalSymlinks(work); err == nil {
		work = real
	}
	st := &staging{dir: work}
	meta, err := fill(ctx, st)
	if err != nil {
		return nil, err
	}
	read, l, err := st.check()
	if err != nil {
		return nil, err
	}
	files := Files(read)
	if l.Metadata.Name == BuiltIn {
		return nil, fmt.Errorf("lab %s is built into labctl, and an installed lab may not take its name: rename the lab (metadata.name), or use it with --lab PATH", BuiltIn)
	}
	// Only what the digest covers lands: a bundle entry beyond the lab's
	// files is refused (a directory or git source is copied file by file,
	// so its staging holds none).
	extra, err := strays(st.labDir(), files)
	if err != nil {
		return nil, fmt.Errorf("reading the staged lab: %w", err)
	}
	if len(extra) > 0 {
		return nil, st.uncovered(meta, extra)
	}
	if err := consent(l, o.AllowHostAccess, meta); err != nil {
		return nil, err
	}
	meta.Digest = DigestOf(read)
	if st.bundle != nil && st.bundle.Manifest.Lab.Digest != meta.Digest {
		return nil, &bundle.Error{File: meta.Source, Problem: "is corrupt: its lab's files do not make up the digest its manifest names", Fix: "download it again"}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	now := time.Now
	if o.Now != nil {
		now = o.Now
	}
	meta.Name, meta.InstalledAt = l.Metadata.Name, now().UTC()
	res := &Result{Lab: l, Dir: filepath.Join(s.dir, l.Metadata.Name), Meta: *meta}

	var installed string
	exists := false
	if prev, err := s.Resolve(l.Metadata.Name); err == nil {
		exists = true
		installed, err = installedDigest(prev)
		if err != nil {
			installed = "" // an installed lab that does not load differs from any
		}
		res.Previous, _ = readMeta(prev)
		if installed != meta.Digest && !o.Force {
			return nil, &ExistsError{Name: l.Metadata.Name, Installed: res.Previous}
		}
	} else if !errors.Is(err, ErrNotInstalled) {
		return nil, err
	} else if _, err := os.Lstat(res.Dir); err == nil {
		return nil, fmt.Errorf("%s is in the way: it holds no lab; remove it and install again", res.Dir)
	}
	if st.bundle != nil {
		if res.Loaded, err = loadImages(ctx, st.bundle, o.Images); err != nil {
			return nil, err
		}
	}
	if installed == meta.Digest && !o.Force {
		res.Unchanged = true
		if res.Previous != nil {
			res.Meta = *res.Previous
		}
		if len(meta.HostAccess) > 0 && !slices.Equal(res.Meta.HostAccess, meta.HostAccess) {
			// The same lab, now with the consent it lacked.
			res.Meta.HostAccess = meta.HostAccess
			if err := writeMeta(res.Dir, &res.Meta); err != nil {
				return nil, err
			}
		}
		return res, nil
	}
	if err := writeMeta(st.labDir(), meta); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := land(st.labDir(), res.Dir, exists); err != nil {
		return nil, fmt.Errorf("installing %s: %w", l.Metadata.Name, err)
	}
	syncDir(s.dir)
	return res, nil
}

// removeStale removes what an install that was killed left behind; the
// caller holds the lock, so no install is running.
func (s *Store) removeStale() {
	entries, _ := os.ReadDir(s.dir)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), stagingPrefix) {
			os.RemoveAll(filepath.Join(s.dir, e.Name()))
		}
	}
}

// check reads and loads the staged lab: it must load (the lab file, and
// its images' build directories read with its fixtures) before it lands.
func (st *staging) check() (*labread.Lab, *lab.Lab, error) {
	file := filepath.Join(st.labDir(), LabFile)
	read, l, err := Read(file)
	if err != nil {
		return nil, nil, st.notRead(err, file)
	}
	return read, l, nil
}

// notLoaded is the error of a lab that does not load, its problems naming
// the lab file as shown rather than by the path it was loaded from.
func notLoaded(err error, loaded, shown string) error {
	var errs lab.Errors
	if errors.As(err, &errs) {
		out := make(lab.Errors, len(errs))
		for i, e := range errs {
			if e.File == loaded {
				e.File = shown
			}
			out[i] = e
		}
		err = out
	}
	return fmt.Errorf("the lab %s does not load, so nothing was installed:\n%w", shown, err)
}

// notRead is the error of a lab whose file, loaded from file, could not
// be read or does not load.
func (st *staging) notRead(err error, file string) error {
	var errs lab.Errors
	if errors.As(err, &errs) {
		return notLoaded(err, file, st.shown)
	}
	return err
}

// installedDigest is the digest of the lab installed in dir.
func installedDigest(dir string) (string, error) {
	if real, err := filepath.EvalSymlinks(filepath.Dir(dir)); err == nil {
		dir = filepath.Join(real, filepath.Base(dir)) // the labs directory's own path
	}
	read, _, err := Read(filepath.Join(dir, LabFile))
	if err != nil {
		return "", err
	}
	files := Files(read)
	// A lab directory holding more than its files (an install of an
	// earlier labctl that landed every entry of a bundle) differs from
	// any lab.
	extra, err := strays(dir, files, metaFile)
	if err != nil {
		return "", err
	}
	if len(extra) > 0 {
		return "", fmt.Errorf("%s holds %s, which is no part of the lab", dir, strings.Join(extra, ", "))
	}
	return DigestOf(read), nil
}

// uncovered is the error of a staged lab holding extra, which its file
// list and digest do not cover.
func (st *staging) uncovered(meta *Meta, extra []string) error {
	const most = 5
	list := extra
	if len(list) > most {
		list = append(list[:most:most], fmt.Sprintf("and %d more", len(extra)-most))
	}
	problem := "holds " + strings.Join(list, ", ") + " under lab/, which is no part of the lab (its lab.yaml, README.md, fixtures/ and its images' build directories) and which its digest does not cover"
	if st.bundle != nil {
		return &bundle.Error{File: meta.Source, Problem: problem, Fix: "nothing was installed; get the lab from its author again (`labctl pack` writes only the lab's files)"}
	}
	return fmt.Errorf("the lab from %s %s: nothing was installed", meta.Source, problem)
}

func writeMeta(dir string, m *Meta) error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, metaFile), append(b, '\n'), 0o644)
}

// land puts the staged lab in place with one rename; when a lab is there
// already (replace), the two are exchanged in one step where the system
// can, and the old one removed.
func land(staged, target string, replace bool) error {
	if !replace {
		return os.Rename(staged, target)
	}
	if err := exchange(staged, target); err == nil {
		return os.RemoveAll(staged) // now the old lab
	}
	old := staged + ".old"
	if err := os.Rename(target, old); err != nil {
		return err
	}
	if err := os.Rename(staged, target); err != nil {
		if rerr := os.Rename(old, target); rerr != nil {
			return fmt.Errorf("%w (and putting the old lab back: %v; it is in %s)", err, rerr, old)
		}
		return err
	}
	return os.RemoveAll(old)
}

// syncDir makes the renames in dir durable; a failure only loses that.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
}

// fromDir stages the lab in a directory, or the lab file source and the
// directory it is in.
func (st *staging) fromDir(source string) (*Meta, error) {
	abs, err := filepath.Abs(source)
	if err != nil {
		return nil, err
	}
	file := filepath.Join(abs, LabFile)
	if isYAML(abs) {
		file = abs
	}
	st.shown = file
	if err := st.copyLab(file); err != nil {
		return nil, err
	}
	return &Meta{Kind: KindDir, Source: abs}, nil
}

// copyLab reads the lab whose lab file is file and writes what it read
// into the staging directory (the lab file as lab.yaml).
func (st *staging) copyLab(file string) error {
	read, _, err := Read(file)
	if err != nil {
		return st.notRead(err, file)
	}
	if err := read.Write(st.labDir(), LabFile); err != nil {
		return fmt.Errorf("copying the lab: %w", err)
	}
	return nil
}

// fromBundle verifies the bundle file and stages its lab.
func (st *staging) fromBundle(ctx context.Context, file string) (*Meta, error) {
	abs, err := filepath.Abs(file)
	if err != nil {
		return nil, err
	}
	st.shown = abs + ":" + LabFile
	if err := os.Mkdir(st.labDir(), 0o755); err != nil {
		return nil, err
	}
	b, err := bundle.Verify(ctx, abs, st.labDir(), hostToolFile)
	if err != nil {
		return nil, err
	}
	st.bundle = b
	st.shown = abs + ":" + LabFile
	return &Meta{Kind: KindBundle, Source: abs, Images: b.Manifest.ImageRefs()}, nil
}

// loadImages loads the bundle's images into the engine unless it has each
// of them already. Before `docker load` sees a byte, the bundle's own
// archive is read through: it may name only the manifest's images, none of
// them labctl's own (ReservedImage), each with the ID the manifest says. An
// image the engine has under one of those names with another ID is never
// replaced (the user removes it first). After the load, every name must
// have the ID the archive gave it.
func loadImages(ctx context.Context, b *bundle.Bundle, images Images) ([]string, error) {
	want := b.Manifest.Images
	if len(want) == 0 {
		return nil, nil
	}
	refused := func(problem, fix string) error {
		return &bundle.Error{File: b.File(), Problem: problem, Fix: fix}
	}
	allowed := map[string]int{}
	for i, im := range want {
		if ReservedImage(im.Ref) {
			return nil, refused("carries the image "+im.Ref+", which is labctl's own",
				"nothing was installed; labctl never takes its node, sandbox or base image from a lab's bundle: build them with `labctl images build`, or move them from a machine you trust with `labctl images save` and `labctl images load`")
		}
		allowed[normalRef(im.Ref)] = i
	}
	if images == nil {
		return nil, errors.New("this bundle holds images, and no Docker engine was given to load them into")
	}
	archive, err := b.ReadImageArchive(ctx)
	if err != nil {
		return nil, err
	}
	ids := make([][]string, len(want)) // the IDs each image may have
	for _, name := range archive.Names {
		i, ok := allowed[normalRef(name)]
		if !ok {
			what := "which its manifest does not name"
			if ReservedImage(name) {
				what = "which is labctl's own"
			}
			return nil, refused("holds an images.tar that would tag "+name+", "+what, "nothing was installed; get the lab from its author again (`labctl pack` saves only the lab's images)")
		}
		ids[i] = append(ids[i], archive.IDs[name]...)
	}
	for i, im := range want {
		if len(ids[i]) == 0 {
			return nil, refused("does not hold the image "+im.Ref+" that its manifest names", "nothing was installed; get the lab from its author again")
		}
		if im.ID != "" && !slices.Contains(ids[i], im.ID) {
			return nil, refused(fmt.Sprintf("holds an image %s of another ID than its manifest's %.19s…", im.Ref, im.ID), "nothing was installed; get the lab from its author again")
		}
	}
	present, err := images.Present(ctx, b.Manifest.ImageRefs())
	if err != nil {
		return nil, err
	}
	missing := false
	for i, im := range want {
		id, ok := present[im.Ref]
		switch {
		case !ok:
			missing = true
		case !slices.Contains(ids[i], id):
			return nil, fmt.Errorf("this machine's Docker engine has another image named %s (ID %.19s…) than the bundle's, and an install never replaces an image: "+
				"if nothing of yours needs it, `docker rmi %s` and install again; else the lab and your image cannot both have that name", im.Ref, id, im.Ref)
		}
	}
	if !missing {
		return nil, nil
	}
	r, err := b.OpenImages()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	loaded, err := images.Load(ctx, r)
	if err != nil {
		return nil, fmt.Errorf("loading the bundle's images: %w", err)
	}
	if present, err = images.Present(ctx, b.Manifest.ImageRefs()); err != nil {
		return nil, err
	}
	for i, im := range want {
		if id, ok := present[im.Ref]; !ok || !slices.Contains(ids[i], id) {
			return nil, fmt.Errorf("after loading the bundle's images, %s has ID %q, not the bundle's: remove it with `docker rmi %s`, and get the lab from its author again", im.Ref, id, im.Ref)
		}
	}
	return loaded, nil
}
