package images

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/labctl/labctl/lab"
)

// Each Dockerfile is refused on the line that makes the builder act
// outside the build's containers, with what to do instead.
func TestCheckDockerfileRefuses(t *testing.T) {
	for _, c := range []struct {
		name, text string
		line       string // "line N: " and the start of the message
	}{
		{"ADD of a URL", "FROM scratch\nADD https://example.test/x.tgz /x\n", "line 2: ADD https://example.test/x.tgz makes the builder fetch it from the network"},
		{"ADD of a git URL", "FROM scratch\nADD --keep-git-dir=true git@example.test:me/repo.git /src\n", "line 2: ADD git@example.test:me/repo.git makes the builder fetch it"},
		{"ADD of an scp-style git source", "FROM scratch\nADD me@example.test:repo.git /src\n", "line 2: ADD me@example.test:repo.git makes the builder fetch it"},
		{"ADD in JSON form", "FROM scratch\nADD [\"http://127.0.0.1:1/x\", \"/x\"]\n", "line 2: ADD http://127.0.0.1:1/x makes the builder fetch it"},
		{"ADD through a variable", "FROM scratch\nARG U=https://example.test/x\nADD $U /x\n", "line 3: ADD $U names its source through a variable"},
		{"ADD continued on a second line", "FROM scratch\nADD \\\n  https://example.test/x /x\n", "line 2: ADD https://example.test/x makes the builder fetch it"},
		{"ADD with a backtick escape", "# escape=`\nFROM scratch\nADD `\n  ftp://example.test/x /x\n", "line 3: ADD ftp://example.test/x makes the builder fetch it"},
		{"add in lower case", "from scratch\nadd https://example.test/x /x\n", "line 2: ADD https://example.test/x"},
		{"syntax directive", "# syntax=docker/dockerfile:1\nFROM scratch\n", "line 1: a syntax directive makes BuildKit fetch and run a frontend image"},
		{"syntax directive without a space", "#syntax=example.test/frontend\nFROM scratch\n", "line 1: a syntax directive"},
		{"syntax directive in capitals after another", "# check=skip=all\n# SYNTAX = example.test/frontend\nFROM scratch\n", "line 2: a syntax directive"},
		{"syntax directive in // style", "// syntax=example.test/frontend\nFROM scratch\n", "line 1: a syntax directive"},
		{"JSON front matter", "{\"syntax\": \"example.test/frontend\"}\nFROM scratch\n", "line 1: the file starts with {"},
		{"ssh mount", "FROM scratch\nRUN --mount=type=ssh git clone x\n", "line 2: RUN --mount=type=ssh hands the build the host's SSH agent"},
		{"secret mount", "FROM scratch\nRUN --mount=type=secret,id=aws cat /run/secrets/aws\n", "line 2: RUN --mount=type=secret hands the build the host's secrets"},
		{"quoted ssh mount", "FROM scratch\nRUN --mount=\"type=ssh\",required=true git clone x\n", "line 2: RUN --mount=type=ssh hands the build the host's SSH agent"},
		{"mount type from a variable", "FROM scratch\nARG T=secret\nRUN --mount=type=$T,id=x true\n", "line 3: RUN --mount=type=$T,id=x sets a flag through a variable"},
		{"cache mount", "FROM scratch\nRUN --mount=type=cache,target=/root/.cache go build\n", "line 2: RUN --mount=type=cache shares a cache with every other build"},
		{"network host", "FROM scratch\nRUN --network=host wget x\n", "line 2: RUN --network=host asks for a network"},
		{"network default", "FROM scratch\nRUN --network=default wget x\n", "line 2: RUN --network=default asks for a network"},
		{"insecure", "FROM scratch\nRUN --security=insecure mount\n", "line 2: RUN --security=insecure asks for an unconfined build step"},
		{"device", "FROM scratch\nRUN --device=vendor.com/gpu=all true\n", "line 2: RUN --device=vendor.com/gpu=all is a flag labctl does not allow"},
		{"ONBUILD", "FROM scratch\nONBUILD ADD . /app\n", "line 2: ONBUILD leaves instructions for other images' builds"},
		{"FROM through a variable", "ARG GO=1.26\nFROM golang:${GO}\n", "line 2: FROM names the image \"golang:${GO}\" through a variable"},
		{"COPY --from through a variable", "FROM scratch\nARG I=x\nCOPY --from=$I /a /a\n", "line 3: COPY --from names the image \"$I\" through a variable"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := checkDockerfile("web/Dockerfile", c.text)
			var de *DockerfileError
			if !errors.As(err, &de) {
				t.Fatalf("error %v, want a DockerfileError", err)
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, "web/Dockerfile asks the builder for what labctl does not allow") || !strings.Contains(msg, "\n  "+c.line) {
				t.Errorf("error:\n%s\nwant a line starting %q", msg, c.line)
			}
		})
	}
}

// Ordinary Dockerfiles pass, and the images they need from the engine are
// the ones that are neither stages, scratch nor BASE_IMAGE.
func TestCheckDockerfileAllows(t *testing.T) {
	text := `# escape=\
# A comment that mentions ADD https://example.test and syntax in passing.
ARG BASE_IMAGE
FROM ${BASE_IMAGE} AS tools
RUN --mount=type=bind,target=/src --mount=type=tmpfs,target=/tmp --network=none \
    apt-get --version
FROM golang:1.26 AS build
COPY --from=tools /usr/bin/env /env
COPY --from=0 /etc/passwd /passwd
COPY --from=example.test/helper:1 /helper /helper
RUN --mount=type=bind,from=example.test/data:2,target=/data true
FROM scratch
ADD app.tar.gz /
ADD ["index.html", "/www/"]
COPY <<EOF /etc/motd
hello
EOF
COPY --from=build --chown=65532:65532 /app /app
USER 65532:65532
ENTRYPOINT ["/app"]
`
	images, err := checkDockerfile("Dockerfile", text)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, im := range images {
		got = append(got, im.ref+"@"+strconv.Itoa(im.line))
	}
	want := "golang:1.26@7 example.test/helper:1@10 example.test/data:2@11"
	if strings.Join(got, " ") != want {
		t.Errorf("images %q, want %q", strings.Join(got, " "), want)
	}
	// The debug-rollout lab's own recipe.
	data, err := os.ReadFile("../labs/debug-rollout/images/web/Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	if images, err := checkDockerfile("Dockerfile", string(data)); err != nil || len(images) != 0 {
		t.Errorf("debug-rollout's Dockerfile: %v, %v", images, err)
	}
}

// A recipe holding host tools' configuration, links or other special
// files, reached through a link, or needing modules it does not vendor is
// refused, each with the fix.
func TestReadRecipeRefuses(t *testing.T) {
	base := map[string]string{"web/Dockerfile": "FROM scratch\nCOPY app /app\n", "web/go.mod": "module x\n\ngo 1.22\n", "web/main.go": "package main\n"}
	for _, c := range []struct {
		name  string
		files map[string]string
		setup func(t *testing.T, labDir string)
		want  string
	}{
		{"a .git directory", map[string]string{"web/.git/config": "[core]\n\tfsmonitor = /tmp/x\n"}, nil, ".git is configuration that host tools (git, go, credential helpers) read and run: remove it from the recipe"},
		{"a .git file", map[string]string{"web/.git": "gitdir: /elsewhere\n"}, nil, ".git is configuration that host tools"},
		{"a nested .git", map[string]string{"web/pkg/.git/HEAD": "ref: x\n"}, nil, "pkg/.git is configuration"},
		{"go.work", map[string]string{"web/go.work": "go 1.22\nuse .\n"}, nil, "go.work is configuration"},
		{"go.work.sum", map[string]string{"web/go.work.sum": ""}, nil, "go.work.sum is configuration"},
		{"go.env", map[string]string{"web/go.env": "GOFLAGS=-toolexec=/tmp/x\n"}, nil, "go.env is configuration"},
		{".netrc", map[string]string{"web/.netrc": "machine x login y\n"}, nil, ".netrc is configuration"},
		{".envrc", map[string]string{"web/.envrc": "touch /tmp/x\n"}, nil, ".envrc is configuration"},
		{"a link out of the recipe", nil, func(t *testing.T, labDir string) {
			if err := os.Symlink("/etc/passwd", filepath.Join(labDir, "web", "passwd")); err != nil {
				t.Fatal(err)
			}
		}, "passwd is a symbolic link: a recipe's files are its own"},
		{"a FIFO", nil, func(t *testing.T, labDir string) {
			if err := syscall.Mkfifo(filepath.Join(labDir, "web", "pipe"), 0o644); err != nil {
				t.Fatal(err)
			}
		}, "pipe is not a regular file"},
		{"a sparse file of 2 GiB", nil, func(t *testing.T, labDir string) {
			if err := os.Truncate(filepath.Join(labDir, "web", "main.go"), 2<<30); err != nil {
				t.Fatal(err)
			}
		}, "the recipe is larger than 1024 MiB (sparse files count at their full length)"},
		{"a recipe reached through a link", nil, func(t *testing.T, labDir string) {
			if err := os.Rename(filepath.Join(labDir, "web"), filepath.Join(labDir, "real")); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink("real", filepath.Join(labDir, "web")); err != nil {
				t.Fatal(err)
			}
		}, "the recipe web is reached through the symbolic link " + "LAB/web: a lab's images are built from its own directories"},
		{"modules not vendored", map[string]string{"web/go.mod": "module x\n\ngo 1.22\n\nrequire (\n\t// a comment\n\texample.test/dep v1.0.0\n)\n"}, nil,
			"the Go program in LAB/web needs module example.test/dep (go.mod requires it) and does not vendor it; a lab's program is built offline from its own files: run `go mod vendor` in LAB/web and keep vendor/ in the lab"},
		{"a Dockerfile ADD of a URL", map[string]string{"web/Dockerfile": "FROM scratch\nADD http://127.0.0.1:1/x /x\n"}, nil, "line 2: ADD http://127.0.0.1:1/x makes the builder fetch it"},
	} {
		t.Run(c.name, func(t *testing.T) {
			labDir := writeRecipe(t, t.TempDir(), base)
			writeRecipe(t, labDir, c.files)
			if c.setup != nil {
				c.setup(t, labDir)
			}
			_, err := readRecipe(labDir, "web")
			want := strings.ReplaceAll(c.want, "LAB", labDir)
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("error %v\nwant it to hold %s", err, want)
			}
		})
	}
	// The same recipe without them is read.
	labDir := writeRecipe(t, t.TempDir(), base)
	writeRecipe(t, labDir, map[string]string{"web/.dockerignore": "*.md\n", "web/.gitignore": "app\n"})
	if r, err := readRecipe(labDir, "web"); err != nil || !r.goMod || r.vendor {
		t.Errorf("readRecipe = %+v, %v", r, err)
	}
}

// A refused recipe builds nothing and reaches no docker command but the
// lookups; an image the Dockerfile needs that the engine lacks, or one
// with ONBUILD, is refused before docker build (which would pull it); an
// image of labctl's own name or one pulled is never replaced.
func TestEnsureWorkloadsRefusals(t *testing.T) {
	f := newFakeDocker(t, false)
	b := testBuilder(t, nil)
	labDir := writeRecipe(t, t.TempDir(), map[string]string{
		"web/Dockerfile":  "FROM example.test/base:1\nCOPY index.html /\n",
		"web/index.html":  "hi\n",
		"git/Dockerfile":  "FROM scratch\n",
		"git/.git/config": "[core]\n\tfsmonitor = touch /tmp/x\n",
	})
	ensure := func(name, build string) error {
		_, err := b.ensureWorkloads(t.Context(), labWithImages(lab.Image{Name: name, Build: build}), labDir)
		return err
	}
	err := ensure("web:1", "web")
	if err == nil || !strings.Contains(err.Error(), "line 1 names image example.test/base:1, which the local Docker engine does not have, and a lab's build pulls nothing") {
		t.Errorf("a missing base: %v", err)
	}
	f.has(t, "example.test/base:1", "")
	f.touch(t, "onbuild-example.test_base_1")
	if err := ensure("web:1", "web"); err == nil || !strings.Contains(err.Error(), "image example.test/base:1 carries ONBUILD instructions") {
		t.Errorf("a base with ONBUILD: %v", err)
	}
	if err := ensure("web:1", "git"); err == nil || !strings.Contains(err.Error(), ".git is configuration that host tools") {
		t.Errorf("a recipe with .git: %v", err)
	}
	for _, own := range []string{SandboxRef(), NodeRef(), "docker.io/labctl/node:x", "kindest/node:v1", "debian:bookworm"} {
		if err := ensure(own, "git"); err == nil || !strings.Contains(err.Error(), "under a name of labctl's own images") {
			t.Errorf("%s: %v", own, err)
		}
	}
	f.has(t, "nginx:1.27", "")
	writeRecipe(t, labDir, map[string]string{"plain/Dockerfile": "FROM scratch\n"})
	if err := ensure("nginx:1.27", "plain"); err == nil || !strings.Contains(err.Error(), "has an image nginx:1.27 that was not built from a lab's recipe") {
		t.Errorf("replacing a pulled image: %v", err)
	}
	if calls := f.calls(t); countPrefix(calls, "build") != 0 || countPrefix(calls, "run") != 0 || countPrefix(calls, "pull") != 0 {
		t.Errorf("calls %q: a refused recipe was built", calls)
	}
	// A lab's image built before is rebuilt.
	f.has(t, "labctl.local/web:1", "an-older-recipe")
	if err := ensure("labctl.local/web:1", "plain"); err != nil {
		t.Errorf("rebuilding a lab's image: %v", err)
	}
}
