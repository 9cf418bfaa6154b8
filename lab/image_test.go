package lab

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// imagesLab is a valid lab with one placeholder, %s, for the items of
// cluster.images.
const imagesLab = header + "      - {name: c, file: {path: /root/x}}\ncluster:\n  images:\n%s"

func TestImageNameRules(t *testing.T) {
	good := []string{
		"nginx:1.27", "library/nginx:1.27.3-alpine", "labctl.local/rollout-web:1", "localhost:5000/team/app:v2",
		"registry.example.com:5000/a/b/c:2024.1_rc-1", "my_app__x:1", "a-b--c:1", "Registry.Example.com/app:1",
	}
	for _, name := range good {
		if err := checkImageName(name); err != nil {
			t.Errorf("%q: %v, want it accepted", name, err)
		}
	}
	bad := map[string]string{
		"":                                  "missing; name the image",
		"nginx":                             `"nginx" has no tag, which means latest`,
		"labctl.local/web":                  "add a version tag, e.g. labctl.local/web:1",
		"localhost:5000/web":                "has no tag",
		"nginx:latest":                      "uses the tag latest",
		"nginx@sha256:" + hex64:             "names a digest; name the image by a version tag instead, e.g. nginx:1",
		"nginx:1.27@sha256:" + hex64:        "names a digest",
		"Nginx:1":                           `"Nginx" may hold only lower-case letters`,
		"web/:1":                            `"" may hold only lower-case letters`,
		"a..b:1":                            `"a..b" may hold only`,
		"-web:1":                            `"-web" may hold only`,
		"nginx:.1":                          `the tag ".1" may hold only`,
		"nginx:" + strings.Repeat("x", 129): "at most 128",
		"bad_host.com:x/app:1":              `"bad_host.com:x" is not a registry host[:port]`,
		strings.Repeat("a", 256) + ":1":     "longer than 255 characters",
	}
	for name, want := range bad {
		err := checkImageName(name)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want a problem containing %q", name, err, want)
		}
	}
}

const hex64 = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

func TestNormalizeImageName(t *testing.T) {
	for in, want := range map[string]string{
		"nginx:1.27":                         "docker.io/library/nginx:1.27",
		"team/app:1":                         "docker.io/team/app:1",
		"docker.io/nginx:1":                  "docker.io/library/nginx:1",
		"index.docker.io/library/nginx:1":    "docker.io/library/nginx:1",
		"labctl.local/rollout-web:1":         "labctl.local/rollout-web:1",
		"localhost:5000/app:3":               "localhost:5000/app:3",
		"localhost/app:3":                    "localhost/app:3",
		"registry.k8s.io/pause:3.10.2":       "registry.k8s.io/pause:3.10.2",
		"quay.io/prometheus/node-exporter:1": "quay.io/prometheus/node-exporter:1",
	} {
		if got := NormalizeImageName(in); got != want {
			t.Errorf("NormalizeImageName(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestValidateImages: each rule of cluster.images, placed at its field.
func TestValidateImages(t *testing.T) {
	tests := []struct {
		name, bad, good, want string
	}{{
		name: "no tag",
		bad:  "  - name: labctl.local/web #!\n",
		good: "  - name: labctl.local/web:1\n",
		want: `cluster.images[0].name: "labctl.local/web" has no tag`,
	}, {
		name: "latest",
		bad:  "  - {name: \"nginx:latest\"} #!\n",
		good: "  - {name: \"nginx:1.27\"}\n",
		want: `cluster.images[0].name: "nginx:latest" uses the tag latest`,
	}, {
		name: "digest only",
		bad:  "  - name: nginx@sha256:" + hex64 + " #!\n",
		good: "  - name: nginx:1.27\n",
		want: `cluster.images[0].name: "nginx@sha256:` + hex64 + `" names a digest`,
	}, {
		name: "missing name",
		bad:  "  - {optional: true} #!\n",
		good: "  - {name: \"nginx:1.27\", optional: true}\n",
		want: `cluster.images[0].name: missing`,
	}, {
		name: "listed twice, under another spelling",
		bad:  "  - name: nginx:1.27\n  - name: docker.io/library/nginx:1.27 #!\n",
		good: "  - name: nginx:1.27\n  - name: docker.io/library/nginx:1.26\n",
		want: `cluster.images[1].name: image "docker.io/library/nginx:1.27" is listed twice (first at line 14)`,
	}, {
		name: "build absolute",
		bad:  "  - {name: \"web:1\", build: /srv/web} #!\n",
		good: "  - {name: \"web:1\", build: srv/web}\n",
		want: `cluster.images[0].build: "/srv/web" is absolute`,
	}, {
		name: "build leaves the lab",
		bad:  "  - {name: \"web:1\", build: ../web} #!\n",
		good: "  - {name: \"web:1\", build: web}\n",
		want: `cluster.images[0].build: "../web" is not a directory inside the lab's directory`,
	}, {
		name: "build is the lab's directory",
		bad:  "  - {name: \"web:1\", build: .} #!\n",
		good: "  - {name: \"web:1\", build: images}\n",
		want: `cluster.images[0].build: "." is not a directory inside`,
	}, {
		name: "build not clean",
		bad:  "  - {name: \"web:1\", build: images/../web/} #!\n",
		good: "  - {name: \"web:1\", build: images/web}\n",
		want: `cluster.images[0].build: "images/../web/" is not a clean path; write it as web`,
	}, {
		name: "build with backslashes",
		bad:  "  - {name: \"web:1\", build: 'images\\web'} #!\n",
		good: "  - {name: \"web:1\", build: 'images/web'}\n",
		want: `holds a backslash`,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			good := strings.Replace(imagesLab, "%s", tt.good, 1)
			if _, err := Parse("t.yaml", []byte(good)); err != nil {
				t.Fatalf("the good lab has problems:\n%v", err)
			}
			bad := strings.Replace(imagesLab, "%s", tt.bad, 1)
			want := "t.yaml:" + strconv.Itoa(markedLine(t, bad)) + ":"
			got := problems(t, bad)
			for _, p := range got {
				if strings.HasPrefix(p, want) && strings.Contains(p, " "+tt.want) {
					return
				}
			}
			t.Errorf("no problem %s...%s among:\n  %s", want, tt.want, strings.Join(got, "\n  "))
		})
	}
}

// TestLoadChecksBuildDirectories: a lab loaded from a file has its build
// directories looked for beside it, each problem at its build field; a lab
// parsed from bytes (the built-in one) has no directory to look in.
func TestLoadChecksBuildDirectories(t *testing.T) {
	dir := t.TempDir()
	write := func(rel, content string) {
		t.Helper()
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("images/web/Dockerfile", "FROM scratch\n")
	write("images/empty/main.go", "package main\n")
	write("images/file", "not a directory\n")
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "Dockerfile"), []byte("FROM scratch\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "images", "elsewhere")); err != nil {
		t.Fatal(err)
	}
	items := "  - {name: \"web:1\", build: images/web}\n" + // line 14
		"  - {name: \"missing:1\", build: images/missing}\n" +
		"  - {name: \"empty:1\", build: images/empty}\n" +
		"  - {name: \"file:1\", build: images/file}\n" +
		"  - {name: \"elsewhere:1\", build: images/elsewhere}\n"
	src := strings.Replace(imagesLab, "%s", items, 1)
	file := filepath.Join(dir, "lab.yaml")
	write("lab.yaml", src)

	_, err := Load(file)
	if err == nil {
		t.Fatal("Load accepted missing and empty build directories")
	}
	got := strings.Split(err.Error(), "\n")
	want := []string{
		file + ":15:32: cluster.images[1].build: directory " + filepath.Join(dir, "images/missing") + " does not exist",
		file + ":16:30: cluster.images[2].build: " + filepath.Join(dir, "images/empty") + " holds no Dockerfile",
		file + ":17:29: cluster.images[3].build: " + filepath.Join(dir, "images/file") + " is not a directory",
		file + ":18:34: cluster.images[4].build: " + filepath.Join(dir, "images/elsewhere") + " leads to " + outside + ", outside the lab's directory",
	}
	if len(got) != len(want) {
		t.Fatalf("problems:\n%s\nwant %d", err, len(want))
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("problem %d:\n  %s\nwant it to start with\n  %s", i, got[i], want[i])
		}
	}
	if _, err := Parse("built-in lab.yaml", []byte(src)); err != nil {
		t.Errorf("Parse looked for build directories: %v", err)
	}
	write("lab.yaml", strings.Replace(imagesLab, "%s", "  - {name: \"web:1\", build: images/web}\n", 1))
	l, err := Load(file)
	if err != nil {
		t.Fatalf("a lab whose build directory holds a Dockerfile: %v", err)
	}
	if got := l.Cluster.Images; len(got) != 1 || got[0] != (Image{Name: "web:1", Build: "images/web"}) {
		t.Errorf("images = %+v", got)
	}
}

func TestLintOptionalBuiltImage(t *testing.T) {
	src := strings.Replace(imagesLab, "%s", "  - {name: \"web:1\", build: web, optional: true}\n  - {name: \"nginx:1.27\", optional: true}\n", 1)
	l, err := Parse("lab.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	var found []string
	for _, w := range l.Lint() {
		if strings.HasPrefix(w.Path, "cluster.images") {
			found = append(found, w.String())
		}
	}
	want := `lab.yaml:14:43: warning: cluster.images[0].optional: image "web:1" is built from web, so up always has it`
	if len(found) != 1 || !strings.HasPrefix(found[0], want) {
		t.Errorf("image warnings %q, want one starting %q", found, want)
	}
}
