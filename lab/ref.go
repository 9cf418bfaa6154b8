package lab

import (
	"errors"
	"fmt"
	"path"
	"regexp"
	"strings"
	"unicode"
)

// Reference sources.
const (
	RefGit  = "git"
	RefFile = "file"
	RefKube = "kube"
)

// Ref is a parsed reference (see Value). Which fields are set depends on Source:
//
//	git:  Repo, Rev, and optionally File (relative to the repository) and Field
//	file: Path and optionally Field
//	kube: APIVersion, Kind, Namespace (empty when cluster-scoped), Name and optionally Field
//
// A git reference without File is the full hash of Rev; a file reference
// without Field is the file's content with surrounding white space trimmed; a
// kube reference without Field is the whole object.
type Ref struct {
	Source string

	Repo string
	Rev  string
	File string

	Path string

	APIVersion string
	Kind       string
	Namespace  string
	Name       string

	Field Path
}

// String writes the reference back in the syntax ParseRef reads.
func (r Ref) String() string {
	var s string
	switch r.Source {
	case RefGit:
		s = "git:" + r.Repo + "@" + r.Rev
		if r.File != "" {
			s += ":" + r.File
		}
	case RefFile:
		s = "file:" + r.Path
	case RefKube:
		s = "kube:" + r.APIVersion + "/" + r.Kind + "/" + r.Namespace + "/" + r.Name
	default:
		return r.Source + ":"
	}
	if len(r.Field) > 0 {
		s += "#" + r.Field.String()
	}
	return s
}

// ParseRef reads a reference:
//
//	git:/abs/repo@REV                     the full hash of REV
//	git:/abs/repo@REV:rel/file.yaml#path  a field of a file at REV
//	file:/abs/file.json#path              a field of a file (JSON or YAML)
//	file:/abs/file.txt                    the file's trimmed content
//	kube:GROUP/VERSION/Kind/NAMESPACE/NAME#path  a field of a cluster object
//	kube:VERSION/Kind/NAMESPACE/NAME#path        (core group; empty NAMESPACE when cluster-scoped)
//
// The part after # is a field path (see ParsePath).
func ParseRef(s string) (Ref, error) {
	source, rest, ok := strings.Cut(s, ":")
	if !ok || rest == "" {
		return Ref{}, fmt.Errorf("reference %q: expected git:, file: or kube: followed by what to read, e.g. file:/root/out.json#key", s)
	}
	target, field, hasField := strings.Cut(rest, "#")
	r := Ref{Source: source}
	if hasField {
		p, err := ParsePath(field)
		if err != nil {
			return Ref{}, fmt.Errorf("reference %q: %w", s, err)
		}
		r.Field = p
	}
	var err error
	switch source {
	case RefGit:
		err = r.parseGit(target, hasField)
	case RefFile:
		err = r.parseFile(target)
	case RefKube:
		err = r.parseKube(target)
	default:
		err = fmt.Errorf("unknown source %q; use git:, file: or kube:", source)
	}
	if err != nil {
		return Ref{}, fmt.Errorf("reference %q: %w", s, err)
	}
	return r, nil
}

func (r *Ref) parseGit(target string, hasField bool) error {
	repo, revFile, ok := strings.Cut(target, "@")
	if !ok {
		return errors.New("expected git:/path/to/repo@REV, e.g. git:/root/repo@HEAD")
	}
	if !path.IsAbs(repo) {
		return fmt.Errorf("repository path %q must be absolute", repo)
	}
	rev, file, _ := strings.Cut(revFile, ":")
	if rev == "" {
		return errors.New("missing revision after @, e.g. @HEAD")
	}
	if strings.ContainsAny(rev, " \t\n") {
		return fmt.Errorf("revision %q holds white space", rev)
	}
	if hasField && file == "" {
		return errors.New("a field (#...) needs a file: write git:/repo@REV:path/in/repo.yaml#field")
	}
	if file != "" {
		if err := checkRepoFile(file); err != nil {
			return err
		}
	}
	r.Repo, r.Rev, r.File = path.Clean(repo), rev, file
	return nil
}

// checkRepoFile requires a clean path relative to a repository's root.
func checkRepoFile(file string) error {
	if path.IsAbs(file) {
		return fmt.Errorf("file %q must be relative to the repository root", file)
	}
	if c := path.Clean(file); c == ".." || strings.HasPrefix(c, "../") || c == "." {
		return fmt.Errorf("file %q must name a file inside the repository", file)
	}
	return nil
}

func (r *Ref) parseFile(target string) error {
	if !path.IsAbs(target) {
		return fmt.Errorf("file path %q must be absolute", target)
	}
	r.Path = path.Clean(target)
	return nil
}

// kubeVersionRE matches a Kubernetes API version such as v1 or v2beta1.
var kubeVersionRE = regexp.MustCompile(`^v[0-9]+((alpha|beta)[0-9]+)?$`)

const kubeRefSyntax = "expected kube:APIVERSION/Kind/NAMESPACE/NAME, e.g. kube:apps/v1/Deployment/default/web, " +
	"or an empty NAMESPACE for a cluster-scoped object, e.g. kube:v1/Namespace//default"

func (r *Ref) parseKube(target string) error {
	parts := strings.Split(target, "/")
	var version string
	switch len(parts) {
	case 4:
		version, r.APIVersion = parts[0], parts[0]
		parts = parts[1:]
	case 5:
		if parts[0] == "" {
			return errors.New("empty API group")
		}
		version, r.APIVersion = parts[1], parts[0]+"/"+parts[1]
		parts = parts[2:]
	default:
		return errors.New(kubeRefSyntax)
	}
	r.Kind, r.Namespace, r.Name = parts[0], parts[1], parts[2]
	switch {
	case version == "":
		return errors.New("missing API version")
	case !kubeVersionRE.MatchString(version):
		return fmt.Errorf("%q is not an API version such as v1 or v1beta1; %s", version, kubeRefSyntax)
	case r.Kind == "":
		return errors.New("missing kind")
	case !unicode.IsUpper([]rune(r.Kind)[0]):
		return fmt.Errorf("kind %q does not start with an upper-case letter; %s", r.Kind, kubeRefSyntax)
	case r.Name == "":
		return errors.New("missing object name")
	}
	if r.Namespace != "" && !isDNSLabel(r.Namespace, 63) {
		return fmt.Errorf("namespace %q is not a DNS label", r.Namespace)
	}
	return nil
}
