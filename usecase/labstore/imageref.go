package labstore

import (
	"strings"

	"github.com/labctl/labctl/lab"
)

// ReservedImage reports whether ref names one of labctl's own images: the
// repository namespace labctl/ on Docker Hub (labctl/node, labctl/sandbox,
// labctl/debian-base, at any tag). The kind node runs privileged, so a lab
// never brings its own copy of these: they are built by labctl or loaded
// by the operator (`labctl images load`).
func ReservedImage(ref string) bool {
	return lab.LabctlImage(ref)
}

// normalRef is ref in the full form the engine resolves it to:
// "web" is docker.io/library/web:latest, "labctl/node:1"
// docker.io/labctl/node:1, "index.docker.io/x/y" docker.io/x/y:latest.
// A digest-pinned reference keeps its digest.
func normalRef(ref string) string {
	ref = strings.ToLower(ref) // the engine refuses capitals; compare without them
	domain, rest := "docker.io", ref
	if i := strings.IndexByte(ref, '/'); i >= 0 {
		if first := ref[:i]; strings.ContainsAny(first, ".:") || first == "localhost" {
			domain, rest = first, ref[i+1:]
		}
	}
	if domain == "index.docker.io" || domain == "registry-1.docker.io" {
		domain = "docker.io"
	}
	if domain == "docker.io" && !strings.Contains(rest, "/") {
		rest = "library/" + rest
	}
	name := rest
	if i := strings.IndexByte(name, '@'); i >= 0 {
		name = name[:i]
	}
	if i := strings.LastIndexByte(name, ':'); i < 0 && !strings.Contains(rest, "@") {
		rest += ":latest"
	}
	return domain + "/" + rest
}
