package images

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// A lab's Dockerfile is the author's, and docker build runs with
// --network none: what a build step does happens in the build's
// containers, cut off from the network. Some instructions make the builder
// itself act on the host instead, with the host's network and files: those
// are refused before anything is built (checkDockerfile), and the images a
// build starts from must already be in the local engine (dockerfileImages),
// since a missing one would be pulled.

// dockerfileProblem is one thing a lab's Dockerfile may not do.
type dockerfileProblem struct {
	line int
	what string
}

// DockerfileError lists what a lab's Dockerfile asks of the builder that
// labctl does not allow.
type DockerfileError struct {
	Path     string
	problems []dockerfileProblem
}

func (e *DockerfileError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s asks the builder for what labctl does not allow (a lab's image is built offline, from the recipe's own files):", e.Path)
	for _, p := range e.problems {
		fmt.Fprintf(&b, "\n  line %d: %s", p.line, p.what)
	}
	return b.String()
}

// dockerInstruction is one instruction of a Dockerfile: its line, its
// upper-cased name, its flags (--name=value, in order) and the rest.
type dockerInstruction struct {
	line  int
	name  string
	flags []string
	args  string
}

// syntaxDirective matches a line that BuildKit may read as a syntax
// directive (in the comment styles its directive parser knows), wherever
// it stands: refused anywhere, not only where a directive counts.
var syntaxDirective = regexp.MustCompile(`(?i)^\s*(#|//)\s*syntax\s*=`)

// directive matches a parser directive at the top of a Dockerfile.
var directive = regexp.MustCompile(`^#\s*([a-zA-Z][a-zA-Z0-9]*)\s*=\s*(.*?)\s*$`)

// parseDockerfile splits text into instructions the way the Docker
// builders do (an escape directive, continuation lines, comments), and
// returns the problems found on the way: a syntax directive, which makes
// BuildKit fetch and run a frontend image of the author's choosing.
func parseDockerfile(text string) ([]dockerInstruction, []dockerfileProblem) {
	var (
		ins      []dockerInstruction
		problems []dockerfileProblem
		escape   = '\\'
		top      = true
		cur      strings.Builder
		start    int
	)
	lines := strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n")
	if first := strings.TrimSpace(strings.TrimPrefix(text, "\ufeff")); strings.HasPrefix(first, "{") {
		problems = append(problems, dockerfileProblem{1, "the file starts with {, which BuildKit may read as a JSON front matter naming a frontend image: write a plain Dockerfile"})
	}
	flush := func() {
		s := strings.TrimSpace(cur.String())
		cur.Reset()
		if s == "" {
			return
		}
		var name, rest string
		if i := strings.IndexAny(s, " \t"); i >= 0 {
			name, rest = s[:i], s[i+1:]
		} else {
			name, rest = s, ""
		}
		in := dockerInstruction{line: start, name: strings.ToUpper(name)}
		rest = strings.TrimSpace(rest)
		for strings.HasPrefix(rest, "--") {
			flag := rest
			if i := strings.IndexAny(rest, " \t"); i >= 0 {
				flag, rest = rest[:i], strings.TrimSpace(rest[i+1:])
			} else {
				rest = ""
			}
			in.flags = append(in.flags, flag)
		}
		in.args = rest
		ins = append(ins, in)
	}
	for i, raw := range lines {
		n := i + 1
		line := strings.TrimPrefix(raw, "\ufeff")
		if syntaxDirective.MatchString(line) {
			problems = append(problems, dockerfileProblem{n, "a syntax directive makes BuildKit fetch and run a frontend image of the Dockerfile's choosing: remove the line (labctl builds with the engine's own Dockerfile frontend)"})
		}
		if top {
			if m := directive.FindStringSubmatch(line); m != nil {
				if strings.EqualFold(m[1], "escape") && (m[2] == "`" || m[2] == `\`) {
					escape = rune(m[2][0])
				}
				continue
			}
			top = false
		}
		trimmed := strings.TrimSpace(line)
		if cur.Len() == 0 {
			if trimmed == "" || strings.HasPrefix(trimmed, "#") {
				continue
			}
			start = n
		} else if strings.HasPrefix(trimmed, "#") || trimmed == "" {
			// Comments and empty lines inside a continued instruction are
			// left out by the builders.
			continue
		}
		body := strings.TrimRight(line, " \t")
		if strings.HasSuffix(body, string(escape)) {
			cur.WriteString(strings.TrimSuffix(body, string(escape)))
			cur.WriteString(" ")
			continue
		}
		cur.WriteString(line)
		flush()
	}
	flush()
	return ins, problems
}

// flagValue splits a --name=value flag.
func flagValue(flag string) (name, value string) {
	name, value, _ = strings.Cut(strings.TrimPrefix(flag, "--"), "=")
	return strings.ToLower(name), value
}

// dockerfileImage is an image a Dockerfile starts a stage from or copies
// from: it must be in the local engine.
type dockerfileImage struct {
	line int
	ref  string
}

// checkDockerfile reads a lab's Dockerfile and returns the images it needs
// from the local engine (not stages, scratch or BASE_IMAGE), or a
// *DockerfileError naming every line that would make the builder act
// outside the build's containers: ADD of a URL or a git repository (or of
// a source built from a variable), a syntax directive, RUN mounts of the
// host's SSH agent, secrets or the builder's shared caches, RUN with
// another network, security mode or host devices, ONBUILD, and images
// named by variables other than BASE_IMAGE.
func checkDockerfile(path, text string) ([]dockerfileImage, error) {
	ins, problems := parseDockerfile(text)
	stages := map[string]bool{}
	stageCount := 0
	var images []dockerfileImage
	add := func(line int, format string, args ...any) {
		problems = append(problems, dockerfileProblem{line, fmt.Sprintf(format, args...)})
	}
	// image notes ref, named by an instruction at line, as an image the
	// engine must have, unless it is a stage.
	image := func(line int, what, ref string) {
		ref = strings.TrimSpace(ref)
		switch {
		case ref == "":
			return
		case stages[strings.ToLower(ref)]:
			return
		case isStageIndex(ref, stageCount):
			return
		case strings.EqualFold(ref, "scratch"):
			return
		case ref == "${BASE_IMAGE}" || ref == "$BASE_IMAGE":
			return
		case strings.ContainsAny(ref, "$"):
			add(line, "%s names the image %q through a variable: name the image itself, or use ${BASE_IMAGE} (labctl's Debian base)", what, ref)
			return
		}
		images = append(images, dockerfileImage{line, ref})
	}
	for _, in := range ins {
		switch in.name {
		case "FROM":
			f := strings.Fields(in.args)
			if len(f) == 0 {
				continue
			}
			image(in.line, "FROM", f[0])
			if len(f) >= 3 && strings.EqualFold(f[1], "AS") {
				stages[strings.ToLower(f[2])] = true
			}
			stageCount++
		case "ADD":
			for _, src := range addSources(in.args) {
				switch {
				case strings.Contains(src, "://") || strings.HasPrefix(src, "git@") || scpLike.MatchString(src):
					add(in.line, "ADD %s makes the builder fetch it from the network, outside the build's containers: put the file into the recipe's directory and COPY it", src)
				case strings.Contains(src, "$"):
					add(in.line, "ADD %s names its source through a variable, which may be a URL the builder fetches: name the recipe's file, or use COPY", src)
				}
			}
			for _, f := range in.flags {
				if name, v := flagValue(f); name == "from" {
					image(in.line, "ADD --from", v)
				}
			}
		case "COPY":
			for _, f := range in.flags {
				if name, v := flagValue(f); name == "from" {
					image(in.line, "COPY --from", v)
				}
			}
		case "RUN":
			for _, f := range in.flags {
				name, v := flagValue(f)
				if strings.Contains(v, "$") {
					add(in.line, "RUN %s sets a flag through a variable: write its value out", f)
					continue
				}
				switch name {
				case "mount":
					checkMount(in.line, v, add, image)
				case "network":
					if !strings.EqualFold(v, "none") {
						add(in.line, "RUN --network=%s asks for a network: a lab's build has none; fetch nothing while building (put what the step needs into the recipe)", v)
					}
				case "security":
					if !strings.EqualFold(v, "sandbox") {
						add(in.line, "RUN --security=%s asks for an unconfined build step: remove the flag", v)
					}
				default:
					add(in.line, "RUN %s is a flag labctl does not allow in a lab's build (allowed: --mount of type bind or tmpfs, --network=none): remove it", f)
				}
			}
		case "ONBUILD":
			add(in.line, "ONBUILD leaves instructions for other images' builds: remove it (a lab's image is not a base for other builds)")
		}
	}
	if len(problems) > 0 {
		return nil, &DockerfileError{Path: path, problems: problems}
	}
	return images, nil
}

// scpLike matches a git source in scp style, user@host:path.
var scpLike = regexp.MustCompile(`^[A-Za-z0-9._~-]+@[A-Za-z0-9.-]+:`)

// isStageIndex reports whether ref is the number of an earlier stage.
func isStageIndex(ref string, stages int) bool {
	n := 0
	for _, c := range ref {
		if c < '0' || c > '9' {
			return false
		}
		n = n*10 + int(c-'0')
		if n >= stages {
			return false
		}
	}
	return ref != ""
}

// addSources returns the sources of an ADD instruction's arguments (all
// but the last), in JSON or shell form; heredoc sources are left out.
func addSources(args string) []string {
	var parts []string
	if strings.HasPrefix(strings.TrimSpace(args), "[") {
		if err := json.Unmarshal([]byte(args), &parts); err != nil {
			parts = strings.Fields(args)
		}
	} else {
		parts = strings.Fields(args)
	}
	if len(parts) < 2 {
		return parts
	}
	var srcs []string
	for _, p := range parts[:len(parts)-1] {
		if !strings.HasPrefix(p, "<<") {
			srcs = append(srcs, p)
		}
	}
	return srcs
}

// checkMount checks one RUN --mount: bind (the default) and tmpfs are the
// build's own; ssh and secret hand the build the host's agent and files;
// a cache is the builder's, shared with every other build on the engine.
func checkMount(line int, spec string, add func(int, string, ...any), image func(int, string, string)) {
	typ := "bind"
	var from string
	// The builder reads the options as CSV: quotes are left out here, so
	// that a quoted option is read as the builder reads it.
	spec = strings.NewReplacer(`"`, "", "'", "").Replace(spec)
	for _, kv := range strings.Split(spec, ",") {
		k, v, _ := strings.Cut(kv, "=")
		switch strings.ToLower(strings.TrimSpace(k)) {
		case "type":
			typ = strings.ToLower(strings.TrimSpace(v))
		case "from":
			from = v
		}
	}
	switch typ {
	case "bind", "tmpfs":
	case "ssh", "secret":
		add(line, "RUN --mount=type=%s hands the build the host's %s: a lab's build gets nothing from the host; remove the mount", typ, map[string]string{"ssh": "SSH agent", "secret": "secrets"}[typ])
	case "cache":
		add(line, "RUN --mount=type=cache shares a cache with every other build on this engine (other labs' too): remove the mount")
	default:
		add(line, "RUN --mount=type=%s is a mount labctl does not allow in a lab's build (allowed: bind, tmpfs): remove it", typ)
	}
	if from != "" {
		image(line, "RUN --mount from", from)
	}
}

// errOnBuild says that an image a Dockerfile starts from carries ONBUILD
// instructions, which run in the lab's build unseen.
var errOnBuild = errors.New("carries ONBUILD instructions, which would run in this build unchecked")
