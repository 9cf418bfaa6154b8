package lab

import (
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
)

// Image references as Docker and containerd read them: [domain/]path[:tag],
// the path made of lower-case components separated by '/'.
var (
	imageDomainRE    = regexp.MustCompile(`^(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])(?:\.(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9]))*(?::[0-9]+)?$`)
	imageComponentRE = regexp.MustCompile(`^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*$`)
	imageTagRE       = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$`)
)

// maxImageNameLen bounds an image's name without its tag, as Docker does.
const maxImageNameLen = 255

// imageRef is an image reference split into its parts; domain is empty when
// the reference names none (Docker Hub).
type imageRef struct {
	domain, path, tag, digest string
}

// splitImageRef splits name into domain, path, tag and digest without
// validating them.
func splitImageRef(name string) imageRef {
	var r imageRef
	name, r.digest, _ = strings.Cut(name, "@")
	if i := strings.LastIndexByte(name, ':'); i > strings.LastIndexByte(name, '/') {
		name, r.tag = name[:i], name[i+1:]
	}
	r.path = name
	if first, rest, ok := strings.Cut(name, "/"); ok &&
		(strings.ContainsAny(first, ".:") || first == "localhost" || strings.ToLower(first) != first) {
		r.domain, r.path = first, rest
	}
	return r
}

// checkImageName says what is wrong with name as a workload image's
// reference, or returns nil: it must be valid, carry a tag that is not
// latest, and no digest (up loads images by tag, and kubelet finds a loaded
// image only by the name the manifests use).
func checkImageName(name string) error {
	if name == "" {
		return errors.New("missing; name the image as the lab's manifests do, with a version tag, e.g. labctl.local/web:1")
	}
	r := splitImageRef(name)
	bare := r.path
	if r.domain != "" {
		bare = r.domain + "/" + r.path
	}
	if r.domain != "" && !imageDomainRE.MatchString(r.domain) {
		return fmt.Errorf("%q is not an image reference: %q is not a registry host[:port]", name, r.domain)
	}
	for _, c := range strings.Split(r.path, "/") {
		if !imageComponentRE.MatchString(c) {
			return fmt.Errorf("%q is not an image reference: %q may hold only lower-case letters, digits and separators (., _, __, -) between them", name, c)
		}
	}
	if len(bare) > maxImageNameLen {
		return fmt.Errorf("%q is not an image reference: its name is longer than %d characters", name, maxImageNameLen)
	}
	switch {
	case r.digest != "":
		return fmt.Errorf("%q names a digest; name the image by a version tag instead, e.g. %s:1: up loads images by tag, and kubelet finds a loaded image only by the name the manifests use", name, bare)
	case r.tag == "":
		return fmt.Errorf("%q has no tag, which means latest, and kubelet pulls latest every time a Pod starts; add a version tag, e.g. %s:1", name, bare)
	case !imageTagRE.MatchString(r.tag):
		return fmt.Errorf("%q is not an image reference: the tag %q may hold only letters, digits, '_', '.' and '-' (at most 128, not starting with '.' or '-')", name, r.tag)
	case r.tag == "latest":
		return fmt.Errorf("%q uses the tag latest, which kubelet pulls every time a Pod starts; use a version tag, e.g. %s:1", name, bare)
	}
	return nil
}

// NormalizeImageName returns a workload image's name as containerd records
// it: with its registry (docker.io when it names none) and, on Docker Hub,
// the library/ namespace of official images, e.g. nginx:1.27 is
// docker.io/library/nginx:1.27. name is a valid Image.Name.
func NormalizeImageName(name string) string {
	r := splitImageRef(name)
	switch r.domain {
	case "", "index.docker.io":
		r.domain = "docker.io"
	}
	if r.domain == "docker.io" && !strings.Contains(r.path, "/") {
		r.path = "library/" + r.path
	}
	out := r.domain + "/" + r.path
	if r.tag != "" {
		out += ":" + r.tag
	}
	if r.digest != "" {
		out += "@" + r.digest
	}
	return out
}

// LabctlImage reports whether ref names one of labctl's own images (the
// repository namespace labctl/ on Docker Hub: labctl/node, labctl/sandbox,
// labctl/debian-base, at any tag): images labctl builds itself and never
// takes from a lab's bundle.
func LabctlImage(ref string) bool {
	return strings.HasPrefix(NormalizeImageName(strings.ToLower(ref)), "docker.io/labctl/")
}

// checkBuildPath says what is wrong with build, an Image.Build, as a path:
// it must be a clean relative slash-separated path below the lab's
// directory.
func checkBuildPath(build string) error {
	switch {
	case strings.Contains(build, `\`):
		return fmt.Errorf("%q holds a backslash; separate directories with /, e.g. images/web", build)
	case path.IsAbs(build):
		return fmt.Errorf("%q is absolute; name a directory of the lab relative to lab.yaml, e.g. images/web", build)
	case build == "." || build == ".." || strings.HasPrefix(build, "../"):
		return fmt.Errorf("%q is not a directory inside the lab's directory; name one below lab.yaml, e.g. images/web", build)
	case path.Clean(build) != build:
		return fmt.Errorf("%q is not a clean path; write it as %s", build, path.Clean(build))
	}
	return nil
}

// checkBuildDir says what is wrong with the directory build (a valid Build
// path) of the lab in labDir: it must exist, stay inside labDir with links
// resolved, and hold a Dockerfile.
func checkBuildDir(labDir, build string) error {
	dir := filepath.Join(labDir, filepath.FromSlash(build))
	info, err := os.Stat(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("directory %s does not exist; create it with the image's Dockerfile, or fix the path (it is relative to lab.yaml)", dir)
	case err != nil:
		return fmt.Errorf("reading %s: %v", dir, err)
	case !info.IsDir():
		return fmt.Errorf("%s is not a directory; build names the directory holding the image's Dockerfile", dir)
	}
	realLab, err := filepath.EvalSymlinks(labDir)
	if err != nil {
		return fmt.Errorf("reading %s: %v", labDir, err)
	}
	realDir, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return fmt.Errorf("reading %s: %v", dir, err)
	}
	if rel, err := filepath.Rel(realLab, realDir); err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return fmt.Errorf("%s leads to %s, outside the lab's directory; a lab's images are built from its own files", dir, realDir)
	}
	if info, err := os.Stat(filepath.Join(dir, "Dockerfile")); err != nil || !info.Mode().IsRegular() {
		return fmt.Errorf("%s holds no Dockerfile; write the image's recipe there", dir)
	}
	return nil
}

// imageDigestRE is a digest as an image reference carries it.
var imageDigestRE = regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)

// checkImageRef says what is wrong with name as an image reference (a
// node or sandbox image: a tag, a digest or both allowed), or returns nil.
func checkImageRef(name string) error {
	r := splitImageRef(name)
	if r.domain != "" && !imageDomainRE.MatchString(r.domain) {
		return fmt.Errorf("%q is not an image reference: %q is not a registry host[:port]", name, r.domain)
	}
	for _, c := range strings.Split(r.path, "/") {
		if !imageComponentRE.MatchString(c) {
			return fmt.Errorf("%q is not an image reference: %q may hold only lower-case letters, digits and separators (., _, __, -) between them", name, c)
		}
	}
	if r.tag != "" && !imageTagRE.MatchString(r.tag) {
		return fmt.Errorf("%q is not an image reference: the tag %q may hold only letters, digits, '_', '.' and '-'", name, r.tag)
	}
	if r.digest != "" && !imageDigestRE.MatchString(r.digest) {
		return fmt.Errorf("%q is not an image reference: the digest %q is not sha256: and 64 hex digits", name, r.digest)
	}
	return nil
}
